"""What a search reads of its knowledge bases before and beside its recall legs: each dataset's embedding
model, the forbidden collections, and the datasets still indexing — three statements read together, in
one round trip on PostgreSQL (pipeline mode) and one thread hop on SQLite (``Database.read_many``).
A search asks on every query; read one by one they were three waits on the search's critical path."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fathom.store.db import Database
from fathom.store.knowledge.scope import in_list
from fathom.store.protocols import NotFound

Statement = tuple[str, dict[str, Any]]
Rows = Sequence[Sequence[Any]]


@dataclass(frozen=True)
class SearchFacts:
    """``models``: dataset id → embedding model; ``forbidden``: collection ids a search leaves out;
    ``indexing``: ``(dataset id, name, pending, total)`` of each dataset with collections not yet
    searchable, in the order the datasets were asked for."""

    models: dict[str, str]
    forbidden: list[str]
    indexing: list[tuple[str, str, int, int]]


def _vector_models_statement(team_id: str, wanted: Sequence[str]) -> Statement:
    params: dict[str, Any] = {"team": team_id}
    marks = in_list("d", wanted, params)
    return f"SELECT id, vector_model FROM datasets WHERE team_id = :team AND id IN ({marks})", params


def _vector_models_of(rows: Rows, wanted: Sequence[str]) -> dict[str, str]:
    """Each wanted dataset's model; a dataset of another team or none at all is NotFound."""
    models = {str(row[0]): str(row[1]) for row in rows}
    for dataset_id in wanted:
        if dataset_id not in models:
            raise NotFound(f"dataset {dataset_id} not found")
    return models


def _forbidden_statement(team_id: str, wanted: Sequence[str]) -> Statement:
    params: dict[str, Any] = {"team": team_id, "yes": True}
    marks = in_list("d", wanted, params)
    return (
        f"SELECT id FROM collections WHERE team_id = :team AND forbid = :yes AND dataset_id IN ({marks})",
        params,
    )


def _forbidden_of(rows: Rows) -> list[str]:
    return [str(row[0]) for row in rows]


def _indexing_statement(team_id: str, wanted: Sequence[str]) -> Statement:
    """Collections not yet searchable (``waiting``, ``parsing`` or ``indexing``) per dataset; forbidden
    ones left out, as search does."""
    params: dict[str, Any] = {"team": team_id, "no": False}
    marks = in_list("d", wanted, params)
    return (
        "SELECT d.id, d.name, SUM(CASE WHEN c.status IN ('waiting', 'parsing', 'indexing') THEN 1 ELSE 0 "
        "END), COUNT(c.id) FROM datasets d JOIN collections c ON c.dataset_id = d.id "
        f"WHERE d.team_id = :team AND d.id IN ({marks}) AND c.forbid = :no GROUP BY d.id, d.name",
        params,
    )


def _indexing_of(rows: Rows, wanted: Sequence[str]) -> list[tuple[str, str, int, int]]:
    order = {dataset_id: i for i, dataset_id in enumerate(wanted)}
    found = [(str(r[0]), str(r[1]), int(r[2] or 0), int(r[3])) for r in rows if int(r[2] or 0) > 0]
    return sorted(found, key=lambda row: order[row[0]])


async def read_search_facts(db: Database, team_id: str, dataset_ids: Sequence[str]) -> SearchFacts:
    """The three facts of ``dataset_ids`` in one read; NotFound when one is not the team's."""
    wanted = list(dict.fromkeys(dataset_ids))
    if not wanted:
        return SearchFacts({}, [], [])
    models, forbidden, indexing = await db.read_many(
        [
            _vector_models_statement(team_id, wanted),
            _forbidden_statement(team_id, wanted),
            _indexing_statement(team_id, wanted),
        ]
    )
    return SearchFacts(
        _vector_models_of(models, wanted), _forbidden_of(forbidden), _indexing_of(indexing, wanted)
    )


__all__ = ["SearchFacts", "read_search_facts"]
