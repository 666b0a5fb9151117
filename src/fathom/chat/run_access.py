"""Whose permissions a run reads with: every knowledge base a search node names and every child app an
app/plugin/tool node runs must be readable by the app's owner (the member who created it) *and* by the
member running it, checked when the node runs, not when the app was saved. So a key that can chat with an
app reaches no more than the app's owner chose to expose, and the app reaches no more than its owner can."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fathom.store.protocols import AppOwnerRepository, TeamRepository

_RANK = {"read": 1, "write": 2, "manage": 3}


@dataclass(frozen=True)
class RunReader:
    """A member whose read permission the run needs, and how an error names them."""

    member_id: str
    label: str


def run_readers(owner_id: str | None, member_id: str | None) -> tuple[RunReader, ...]:
    """The app's owner and the running member (once when they are the same; the running member alone
    for an app with no recorded owner)."""
    readers: list[RunReader] = []
    if owner_id:
        readers.append(RunReader(owner_id, "the app's owner"))
    if member_id and member_id != owner_id:
        readers.append(RunReader(member_id, "the member running the app"))
    return tuple(readers)


@dataclass
class MemberAccess:
    """A member's read permission on an app or a knowledge base: owner/admin role, the resource's creator,
    or a read (or higher) grant."""

    teams: TeamRepository
    owners: AppOwnerRepository
    #: a knowledge base's (id, creator, name) and its folders', nearest first (a folder's grant holds inside)
    dataset_lineage: Callable[[str], Awaitable[list[tuple[str, str | None, str]]]] | None = None

    async def _role(self, member_id: str) -> str | None:
        """The member's role, None for a member that does not exist."""
        return await self.teams.member_role(member_id)

    async def _can_read(
        self,
        member_id: str,
        resource_type: str,
        resource_id: str,
        creator: str | None,
        role: str | None = None,
    ) -> bool:
        if role is None:
            role = await self._role(member_id)
            if role is None:
                return False
        if role in ("owner", "admin") or creator == member_id:
            return True
        granted = await self.teams.get_permission(member_id, resource_type, resource_id)
        return granted is not None and _RANK.get(granted, 0) >= _RANK["read"]

    async def can_read(self, member_id: str, app_id: str) -> bool:
        """May ``member_id`` read app ``app_id``?"""
        return await self._can_read(member_id, "app", app_id, await self.owners.owner_of(app_id))

    async def can_read_dataset(self, member_id: str, dataset_id: str) -> bool:
        """May ``member_id`` read knowledge base ``dataset_id`` (or a folder it is in)?

        The member is read once: an owner or admin reads every knowledge base of the team, so their
        check needs neither the folder chain nor a grant (one query per search instead of three)."""
        role = await self._role(member_id)
        if role is None:
            return False
        if role in ("owner", "admin"):
            return True
        chain = await self.dataset_lineage(dataset_id) if self.dataset_lineage is not None else []
        for resource_id, creator, _ in chain or [(dataset_id, None, "")]:
            if await self._can_read(member_id, "dataset", resource_id, creator, role):
                return True
        return False


async def check_datasets_readable(
    access: MemberAccess, readers: tuple[RunReader, ...], dataset_ids: list[str]
) -> None:
    """Raise :class:`PermissionError` (a node error naming the knowledge base) unless every reader may
    read every dataset."""
    for dataset_id in dataset_ids:
        for reader in readers:
            if not await access.can_read_dataset(reader.member_id, dataset_id):
                raise PermissionError(
                    f"No read permission on knowledge base {dataset_id}: {reader.label} may not read it; "
                    "ask the knowledge base's owner for read access, or remove it from the node"
                )


__all__ = ["MemberAccess", "RunReader", "check_datasets_readable", "run_readers"]
