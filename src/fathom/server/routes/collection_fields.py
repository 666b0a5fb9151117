"""The request pieces FastGPT's collection routes share beyond the chunk settings: ``tags``,
``createTime``, ``externalFileId`` (on create and on ``collection/update``) and ``billId`` (a training
bill from ``support/wallet/usage/createTrainingUsage``, on the imports and ``pushData``).

Tags are stored as their names (FastGPT creates a tag record per name and stores its id; the names are
what its clients send and are shown), trimmed, without empty or repeated names, in the order sent."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Request
from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints

from fathom.server.auth import AuthContext
from fathom.server.routes.knowledge_routing import knowledge_bases
from fathom.server.typed import BLANK_IS_NONE, OptionalObjectId

TAG_MAX, TAGS_MAX, EXTERNAL_FILE_ID_MAX = 100, 100, 200


def _unique_tags(tags: list[str] | None) -> list[str] | None:
    if tags is None:
        return None
    return list(dict.fromkeys(tag for tag in tags if tag))


def _number_as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


TagName = Annotated[str, StringConstraints(strip_whitespace=True, max_length=TAG_MAX)]
#: tag names; absent or null: unchanged (on update), ``[]``: none
CollectionTags = Annotated[
    Annotated[list[TagName], Field(max_length=TAGS_MAX)] | None,
    AfterValidator(_unique_tags),
    Field(examples=[["refunds", "2024"]]),
]
#: when the file was made (FastGPT's ``createTime``: an ISO date, or a Unix time in seconds)
CreateTime = Annotated[datetime | None, BLANK_IS_NONE, Field(examples=["2024-01-01T00:00:00.000Z"])]
#: a client's own id for the file (a number is read as its digits)
ExternalFileId = Annotated[
    Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=EXTERNAL_FILE_ID_MAX)]
    | None,
    BLANK_IS_NONE,
    BeforeValidator(_number_as_text),
    Field(examples=["1111"]),
]
#: a training bill's id (``createTrainingUsage``): the training's usage is recorded under it
BillId = Annotated[OptionalObjectId, Field(description="A training bill from createTrainingUsage")]


async def training_bill(request: Request, auth: AuthContext, bill_id: str | None) -> str | None:
    """``bill_id`` when it names a training bill of the caller's team (None when not sent)."""
    return await knowledge_bases(request).training.bill(auth.team_id, bill_id)
