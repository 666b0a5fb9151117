"""FastGPT's ``collectionFilterMatch``: which collections a search may read, by their tags and creation
time (``searchDatasetData``'s ``filterCollectionByMetadata``).

``{"tags": {"$and": [...], "$or": [...]}, "createTime": {"$gte": ..., "$lte": ...}}``, as a JSON string
(what the workflow node's input holds) or an object:

- ``tags.$and`` (names): collections carrying every name; ``[null]``: collections without tags; a name
  together with ``null`` matches nothing. When ``$and`` has entries, ``$or`` is not read.
- ``tags.$or`` (names, ``null`` = without tags): collections carrying any of them.
- ``createTime.$gte`` / ``$lte``: ISO dates (a date without a zone is UTC), both ends included.
- Tags and time together: collections matching both. A folder that matches stands for everything in it.

Unlike FastGPT, which ignores a filter it cannot read (and searches everything), a filter that is not
valid JSON or has the wrong shape is refused with the reason (:class:`CollectionFilterError`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol


class CollectionFilterError(ValueError):
    """A ``collectionFilterMatch`` that cannot be read; the message names the part and the fix."""


@dataclass(frozen=True)
class CollectionFilter:
    and_tags: tuple[str | None, ...] = ()
    or_tags: tuple[str | None, ...] = ()
    created_from: datetime | None = None
    created_to: datetime | None = None

    @property
    def by_tags(self) -> bool:
        return bool(self.and_tags or self.or_tags)

    @property
    def by_time(self) -> bool:
        return self.created_from is not None or self.created_to is not None


class CollectionFactsLike(Protocol):
    """What the filter reads of a collection."""

    @property
    def id(self) -> str: ...
    @property
    def parent_id(self) -> str | None: ...
    @property
    def type(self) -> str: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def created_at(self) -> datetime: ...


def _names(value: Any, where: str) -> tuple[str | None, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(item is None or isinstance(item, str) for item in value):
        raise CollectionFilterError(f"collectionFilterMatch.{where}: must be a list of tag names (or null)")
    return tuple(dict.fromkeys(value))


def _time(value: Any, where: str) -> datetime | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise CollectionFilterError(f"collectionFilterMatch.{where}: must be an ISO date string")
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise CollectionFilterError(
            f"collectionFilterMatch.{where}: {value!r} is not an ISO date (e.g. 2024-01-01 or "
            "2024-01-01T08:00:00Z)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_collection_filter(value: Any) -> CollectionFilter | None:
    """The filter a ``collectionFilterMatch`` value asks for; None when it asks for nothing (absent,
    empty, ``{}``)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise CollectionFilterError(f"collectionFilterMatch: not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise CollectionFilterError(
            'collectionFilterMatch: must be an object like {"tags": {"$and": ["tag"]}}'
        )
    tags = value.get("tags") or {}
    created = value.get("createTime") or {}
    if not isinstance(tags, dict):
        raise CollectionFilterError('collectionFilterMatch.tags: must be an object with "$and" or "$or"')
    if not isinstance(created, dict):
        raise CollectionFilterError(
            'collectionFilterMatch.createTime: must be an object with "$gte" or "$lte"'
        )
    result = CollectionFilter(
        and_tags=_names(tags.get("$and"), "tags.$and"),
        or_tags=_names(tags.get("$or"), "tags.$or"),
        created_from=_time(created.get("$gte"), "createTime.$gte"),
        created_to=_time(created.get("$lte"), "createTime.$lte"),
    )
    return result if result.by_tags or result.by_time else None


def _tag_match(rule: CollectionFilter, tags: tuple[str, ...]) -> bool:
    if rule.and_tags:
        names = [tag for tag in rule.and_tags if tag is not None]
        if None in rule.and_tags:
            return not names and not tags
        return all(name in tags for name in names)
    if None in rule.or_tags and not tags:
        return True
    return any(tag in tags for tag in rule.or_tags if tag is not None)


def _time_match(rule: CollectionFilter, created: datetime) -> bool:
    if rule.created_from is not None and created < rule.created_from:
        return False
    return rule.created_to is None or created <= rule.created_to


def match_collections(rule: CollectionFilter, collections: Sequence[CollectionFactsLike]) -> list[str]:
    """The ids of the searchable collections (not folders) the filter lets through: those matching it,
    and everything inside matching folders."""
    children: dict[str | None, list[CollectionFactsLike]] = {}
    for item in collections:
        children.setdefault(item.parent_id, []).append(item)
    matched = [
        item
        for item in collections
        if (not rule.by_tags or _tag_match(rule, item.tags))
        and (not rule.by_time or _time_match(rule, item.created_at))
    ]
    kept: dict[str, None] = {}
    stack = list(matched)
    seen: set[str] = set()
    while stack:
        item = stack.pop()
        if item.id in seen:
            continue
        seen.add(item.id)
        if item.type == "folder":
            stack.extend(children.get(item.id, ()))
        else:
            kept[item.id] = None
    return sorted(kept)
