"""Data rows (chunks) over FastGPT's paths: push, list, detail, update, delete."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import AfterValidator, Field, model_validator

from fathom.datasets.ingest import PushIndex, PushRow
from fathom.datasets.records import ChunkRow
from fathom.server.auth import AuthContext
from fathom.server.errors import ApiError, envelope
from fathom.server.pagination import Page
from fathom.server.permissions import Need, require_team_key
from fathom.server.routes.collection_fields import BillId, training_bill
from fathom.server.routes.collections import load_collection
from fathom.server.routes.common import ANY_METHOD, iso
from fathom.server.routes.dataset_models import DatasetPageQuery, DataView, InsertResults, NonBlank, WireBool
from fathom.server.routes.datasets import kb_caller
from fathom.server.routes.knowledge_routing import knowledge_bases
from fathom.server.typed import BLANK_IS_NONE, ApiModel, ObjectId, Text, answers, parsed

router = APIRouter(tags=["data"])

PUSH_MAX = 200
MAX_CUSTOM_INDEXES = 5


IndexType = Literal["default", "custom", "summary", "question", "image"]


class Index(ApiModel):
    """An index text of a row; ``type: "default"`` entries are regenerated from q and a, any other
    entry is kept with its type (absent: ``custom``, as FastGPT)."""

    text: NonBlank
    type: Annotated[IndexType | None, BLANK_IS_NONE] = Field(None, examples=["custom"])


def _few_custom(indexes: list[Index] | None) -> list[Index] | None:
    if indexes is not None and sum(entry.type != "default" for entry in indexes) > MAX_CUSTOM_INDEXES:
        raise ValueError(f"at most {MAX_CUSTOM_INDEXES} custom indexes per row")
    return indexes


Indexes = Annotated[list[Index] | None, AfterValidator(_few_custom)]


def _text(value: Any) -> str:
    """FastGPT reads q and a as text: a number is its digits, absent is ""."""
    return "" if value is None else str(value).strip()


class Row(ApiModel):
    q: Annotated[Text | int | float | None, Field(examples=["What is the refund window?"])] = None
    a: Text | int | float | None = None
    indexes: Indexes = None


class PushData(ApiModel):
    """FastGPT's ``{collectionId, data: [{q, a?, indexes?}], trainingType?, prompt?, billId?}`` (rows with
    an empty q are dropped). ``trainingType`` (default: the collection's) ``chunk`` stores the rows as
    sent; ``qa`` sends each row's text to the knowledge base's model, which writes the question/answer
    pairs stored (``prompt`` replacing the default instructions); ``auto`` stores the rows with index
    texts the model writes. Rows for the model are queued: ``insertLen`` counts them."""

    collectionId: ObjectId
    data: list[Row] = Field(min_length=1, max_length=PUSH_MAX)
    billId: BillId = None
    trainingType: Annotated[Literal["chunk", "qa", "auto"] | None, BLANK_IS_NONE] = None
    prompt: Annotated[Text | None, BLANK_IS_NONE] = None
    imageIndex: Annotated[WireBool | None, BLANK_IS_NONE] = Field(
        None, description="Refused when true: image indexes are made by imports (imageIndex on create/*)"
    )

    @model_validator(mode="before")
    @classmethod
    def _fastgpt_checks(cls, values: Any) -> Any:
        """FastGPT's own messages for an empty or too long push, before the field checks."""
        if isinstance(values, dict):
            items = values.get("data")
            if not values.get("collectionId") or not isinstance(items, list) or not items:
                raise ApiError(400, "", "collectionId or data is empty")
            if len(items) > PUSH_MAX:
                raise ApiError(400, "", f"Data is too long, max {PUSH_MAX}")
        return values


class InsertData(Row):
    collectionId: ObjectId

    @model_validator(mode="before")
    @classmethod
    def _fastgpt_checks(cls, values: Any) -> Any:
        """FastGPT's own messages for a missing q or collection, before the field checks."""
        if isinstance(values, dict):
            if not isinstance(values.get("q"), dict | list) and not _text(values.get("q")):
                raise ApiError(400, "", "q is required")
            if not values.get("collectionId"):
                raise ApiError(400, "", "collectionId is required")
        return values


class ListData(DatasetPageQuery):
    collectionId: ObjectId


class DataId(ApiModel):
    id_kinds: ClassVar[dict[str, str]] = {"id": "data"}
    id: ObjectId = Field(description="The row's id")


class UpdateData(Row):
    dataId: ObjectId


def _data_view(row: ChunkRow, team_id: str) -> dict[str, Any]:
    return {
        "_id": row.id,
        "id": row.id,
        "teamId": team_id,
        "datasetId": row.dataset_id,
        "collectionId": row.collection_id,
        "q": row.q,
        "a": row.a,
        "chunkIndex": row.chunk_index,
        "indexes": row.indexes,
        "sourceName": row.source_name,
        "sourceId": row.collection_id,
        "updateTime": iso(row.updated_at),
    }


def _custom_indexes(indexes: list[Index] | None) -> tuple[PushIndex, ...]:
    """The index texts kept as sent, with their types (entries typed ``default`` are regenerated from
    q and a; an entry without a type is ``custom``)."""
    return tuple(
        PushIndex(entry.text, entry.type or "custom") for entry in indexes or () if entry.type != "default"
    )


@router.api_route(
    "/api/core/dataset/data/pushData",
    methods=ANY_METHOD,
    summary="Add rows to a collection",
    responses=answers(InsertResults),
)
async def push_data(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: PushData = parsed(PushData)
) -> dict[str, Any]:
    collection = await load_collection(request, auth, payload.collectionId, "write")
    if payload.imageIndex:
        raise ApiError(
            400,
            "invalidParams",
            "imageIndex: pushed rows carry no images to describe; image indexes are made by imports "
            "(create/text or create/localFile with imageIndex: true); leave imageIndex out",
        )
    bill_id = await training_bill(request, auth, payload.billId)
    rows = [
        PushRow(_text(item.q), _text(item.a), _custom_indexes(item.indexes))
        for item in payload.data
        if _text(item.q)  # FastGPT drops rows with an empty q
    ]
    inserted = await knowledge_bases(request).rows.push(
        collection, rows, training_type=payload.trainingType, prompt=payload.prompt, bill_id=bill_id
    )
    return envelope({"insertLen": inserted, "overToken": [], "repeat": [], "error": []})


@router.api_route(
    "/api/core/dataset/data/insertData",
    methods=ANY_METHOD,
    summary="Add one row at once",
    responses=answers(str, description="``data`` is the new row's id"),
)
async def insert_data(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: InsertData = parsed(InsertData)
) -> dict[str, Any]:
    """FastGPT's ``{collectionId, q, a?, indexes?}``: the row is embedded and stored before the answer,
    whose ``data`` is the new row's id."""
    collection = await load_collection(request, auth, payload.collectionId, "write")
    row = PushRow(_text(payload.q), _text(payload.a), _custom_indexes(payload.indexes))
    return envelope(await knowledge_bases(request).rows.insert(collection, row))


@router.api_route(
    "/api/core/dataset/data/v2/list",
    methods=ANY_METHOD,
    summary="List a collection's rows",
    responses=answers(Page[DataView]),
)
@router.api_route("/api/core/dataset/data/list", methods=ANY_METHOD, include_in_schema=False)
async def list_data(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: ListData = parsed(ListData)
) -> dict[str, Any]:
    collection = await load_collection(request, auth, payload.collectionId, "read")
    offset, size = payload.window()
    rows, total = await knowledge_bases(request).rows.list_rows(
        auth.team_id, collection.id, offset=offset, limit=size, search=payload.searchText or ""
    )
    return envelope({"list": [_data_view(row, auth.team_id) for row in rows], "total": total})


async def _load_row(request: Request, auth: AuthContext, data_id: str, need: Need) -> ChunkRow:
    """The row if the caller may ``need`` its knowledge base; a row of another team is answered exactly
    as a row that does not exist (its collection's id is never named)."""
    require_team_key(auth, "use knowledge bases", "dataset")
    row = await knowledge_bases(request).rows.find(auth.team_id, data_id)
    await load_collection(request, auth, row.collection_id, need)  # app keys and permission
    return row


@router.api_route(
    "/api/core/dataset/data/detail", methods=ANY_METHOD, summary="A row", responses=answers(DataView)
)
async def data_detail(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DataId = parsed(DataId)
) -> dict[str, Any]:
    row = await _load_row(request, auth, payload.id, "read")
    return envelope(_data_view(row, auth.team_id))


@router.api_route(
    "/api/core/dataset/data/update",
    methods=ANY_METHOD,
    summary="Edit a row (re-embeds it)",
    responses=answers(None),
)
async def update_data(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: UpdateData = parsed(UpdateData)
) -> dict[str, Any]:
    row = await _load_row(request, auth, payload.dataId, "write")
    if not payload.q and not payload.a and not payload.indexes:
        return envelope(None)
    await knowledge_bases(request).rows.update(
        auth.team_id,
        row,
        q=str(payload.q) if payload.q else None,
        a=None if payload.a is None else str(payload.a),
        indexes=_custom_indexes(payload.indexes),
    )
    return envelope(None)


@router.api_route(
    "/api/core/dataset/data/delete",
    methods=ANY_METHOD,
    summary="Delete a row",
    responses=answers(str, description='``data`` is "success"'),
)
async def delete_data(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DataId = parsed(DataId)
) -> dict[str, Any]:
    row = await _load_row(request, auth, payload.id, "write")
    await knowledge_bases(request).rows.delete(auth.team_id, row.id)
    return envelope("success")
