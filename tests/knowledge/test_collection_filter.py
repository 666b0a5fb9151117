"""``collectionFilterMatch`` read and applied as FastGPT's ``filterCollectionByMetadata`` does (tags
``$and`` before ``$or``, ``null`` for "without tags", createTime bounds included, a matching folder
standing for what is in it), and the reasons a filter is refused."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from fathom.knowledge.search.collection_filter import (
    CollectionFilterError,
    match_collections,
    parse_collection_filter,
)


@dataclass(frozen=True)
class Facts:
    id: str
    parent_id: str | None
    type: str
    tags: tuple[str, ...]
    created_at: datetime


def day(n: int) -> datetime:
    return datetime(2024, 1, n, tzinfo=UTC)


COLLECTIONS = [
    Facts("a", None, "virtual", ("x", "y"), day(1)),
    Facts("b", None, "file", ("y",), day(5)),
    Facts("c", None, "file", (), day(10)),
    Facts("f", None, "folder", ("z",), day(2)),
    Facts("d", "f", "file", (), day(3)),
    Facts("g", "f", "folder", (), day(3)),
    Facts("e", "g", "link", ("x",), day(20)),
]


@pytest.mark.parametrize(
    ("match", "expected"),
    [
        ({"tags": {"$and": ["y"]}}, ["a", "b"]),
        ({"tags": {"$and": ["x", "y"]}}, ["a"]),
        ({"tags": {"$and": ["x"], "$or": ["y"]}}, ["a", "e"]),  # $and first: $or not read
        ({"tags": {"$and": [None]}}, ["c", "d", "e"]),  # folder g has no tags: e is in it
        ({"tags": {"$and": ["x", None]}}, []),
        ({"tags": {"$or": ["y", None]}}, ["a", "b", "c", "d", "e"]),
        ({"tags": {"$or": ["z"]}}, ["d", "e"]),  # the folder's contents, at every depth
        ({"createTime": {"$gte": "2024-01-05", "$lte": "2024-01-10T00:00:00Z"}}, ["b", "c"]),
        ({"tags": {"$or": ["x"]}, "createTime": {"$gte": "2024-01-02"}}, ["e"]),
        ('{"tags": {"$and": ["y"]}}', ["a", "b"]),
    ],
)
def test_the_filter_lets_through_what_fastgpt_lets_through(match: object, expected: list[str]) -> None:
    rule = parse_collection_filter(match)
    assert rule is not None
    assert match_collections(rule, COLLECTIONS) == expected


@pytest.mark.parametrize("empty", [None, "", "  ", {}, "{}", {"tags": {}}, {"tags": {"$and": []}}])
def test_an_empty_filter_asks_for_nothing(empty: object) -> None:
    assert parse_collection_filter(empty) is None


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("{tags:", "collectionFilterMatch: not valid JSON"),
        ("[1]", "collectionFilterMatch: must be an object"),
        ({"tags": ["x"]}, "collectionFilterMatch.tags: must be an object"),
        ({"tags": {"$and": "x"}}, "collectionFilterMatch.tags.$and: must be a list"),
        ({"tags": {"$or": [1]}}, "collectionFilterMatch.tags.$or: must be a list"),
        ({"createTime": {"$lte": "soon"}}, "collectionFilterMatch.createTime.$lte:"),
        ({"createTime": {"$gte": 5}}, "collectionFilterMatch.createTime.$gte: must be an ISO date"),
    ],
)
def test_a_filter_that_cannot_be_read_names_the_part(bad: object, reason: str) -> None:
    with pytest.raises(CollectionFilterError) as caught:
        parse_collection_filter(bad)
    assert str(caught.value).startswith(reason)
