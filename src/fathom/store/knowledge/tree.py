"""Folders of knowledge bases and of collections: walking ``parent_id`` down (a folder's contents) and up
(the path to the root), inside the caller's session."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from fathom.store.models import Collection, Dataset

FOLDER_DEPTH_MAX = 100  # deeper chains are cut (a cycle can never be written, see the move checks)


async def dataset_subtree(session: AsyncSession, team_id: str, dataset_id: str) -> list[str]:
    """``dataset_id`` and every knowledge base and folder below it, parents before children."""
    found, level = [dataset_id], [dataset_id]
    for _ in range(FOLDER_DEPTH_MAX):
        level = list(
            await session.scalars(
                select(Dataset.id).where(Dataset.team_id == team_id, Dataset.parent_id.in_(level))
            )
        )
        level = [item for item in level if item not in found]
        if not level:
            break
        found.extend(level)
    return found


async def collection_subtree(session: AsyncSession, collection_ids: Sequence[str]) -> list[str]:
    """The collections and everything inside those of them that are folders, parents first."""
    found = list(dict.fromkeys(collection_ids))
    level = list(found)
    for _ in range(FOLDER_DEPTH_MAX):
        level = [
            item
            for item in await session.scalars(select(Collection.id).where(Collection.parent_id.in_(level)))
            if item not in found
        ]
        if not level:
            break
        found.extend(level)
    return found


async def dataset_lineage(session: AsyncSession, dataset_id: str) -> list[Dataset]:
    """The knowledge base (or folder) and its folders up to the root, nearest first."""
    chain: list[Dataset] = []
    current = await session.get(Dataset, dataset_id)
    while current is not None and len(chain) < FOLDER_DEPTH_MAX:
        chain.append(current)
        if current.parent_id is None or any(row.id == current.parent_id for row in chain):
            break
        current = await session.get(Dataset, current.parent_id)
    return chain
