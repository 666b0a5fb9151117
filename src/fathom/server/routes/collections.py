"""Collections over FastGPT's paths: create from text / link / file, list with ingestion status, detail,
delete, and retrying a failed ingestion."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from pydantic import BeforeValidator, Field, field_validator

from fathom.datasets.collection_service import (
    CollectionToCreate,
    check_file_format,
    check_web_page_selector,
    is_image_file,
)
from fathom.datasets.records import CollectionRecord, DatasetRecord
from fathom.server.auth import AuthContext
from fathom.server.errors import ApiError, envelope
from fathom.server.json_body import check_storable
from fathom.server.pagination import Page
from fathom.server.permissions import Need, permission_view, require_team_key
from fathom.server.routes.collection_fields import (
    BillId,
    CollectionTags,
    CreateTime,
    ExternalFileId,
    training_bill,
)
from fathom.server.routes.common import ANY_METHOD, iso
from fathom.server.routes.dataset_models import (
    COLLECTION_NAME_MAX,
    ChunkSettings,
    CollectionCreated,
    CollectionName,
    CollectionView,
    DatasetPageQuery,
    NonBlank,
    TrainingDetail,
    WireBool,
)
from fathom.server.routes.datasets import kb_caller, load_dataset, load_knowledge_base
from fathom.server.routes.knowledge_routing import knowledge_bases
from fathom.server.typed import BLANK_IS_NONE, ApiModel, ObjectId, OptionalObjectId, Text, answers, parsed
from fathom.server.uploads import admit_upload, check_file_name, member_or_key

router = APIRouter(tags=["collections"])


def _empty_as_none(value: Any) -> Any:
    """FastGPT's clients send "", null, [] or {} for "no metadata"."""
    return None if value in ("", [], {}) else value


class CollectionFields(ApiModel):
    """What FastGPT keeps of a collection beyond its source: tags, its file's id and creation time."""

    tags: CollectionTags = None
    createTime: CreateTime = None
    externalFileId: ExternalFileId = None


class NewCollection(ChunkSettings, CollectionFields):
    """What every collection import reads: the knowledge base, how to train, the chunk settings, and the
    training bill (``createTrainingUsage``) its embedding usage is recorded under."""

    datasetId: ObjectId
    trainingType: Annotated[Literal["chunk", "qa", "auto"] | None, BLANK_IS_NONE] = Field(
        None, description="auto is chunk", examples=["chunk"]
    )
    metadata: Annotated[dict[str, Any] | None, BeforeValidator(_empty_as_none)] = None
    parentId: OptionalObjectId = Field(
        None, description="A folder collection of the knowledge base (null: the root)"
    )
    billId: BillId = None
    qaPrompt: Annotated[Text | None, BLANK_IS_NONE] = Field(
        None, description="qa training: the instructions the model gets instead of the default ones"
    )
    autoIndexes: Annotated[WireBool | None, BLANK_IS_NONE] = Field(
        None, description="chunk training: the model writes extra index texts of each chunk"
    )
    imageIndex: Annotated[WireBool | None, BLANK_IS_NONE] = Field(
        None, description="chunk training: images in the document are described by the vlmModel as indexes"
    )

    def training(self) -> tuple[str, dict[str, Any]]:
        """The collection's training type and the training settings to keep with its chunk settings
        (``qaPrompt`` for qa; ``autoIndexes`` for chunk; FastGPT's older ``trainingType: "auto"`` is
        chunk with auto indexes)."""
        training_type = self.trainingType or "chunk"
        if training_type == "qa":
            return "qa", {"qaPrompt": self.qaPrompt} if self.qaPrompt else {}
        if training_type == "auto" or self.autoIndexes:
            return "chunk", {"autoIndexes": True}
        return "chunk", {}


class CreateEmpty(NewCollection):
    name: CollectionName = Field(examples=["FAQ rows"])
    type: Annotated[Literal["virtual", "folder"] | None, BLANK_IS_NONE] = Field(
        None, description="virtual (rows come from pushData) or folder (holds collections)"
    )


class CreateText(NewCollection):
    name: CollectionName = Field(examples=["Refund policy"])
    text: NonBlank = Field(examples=["Refunds are paid within 5 days."])


class CreateLink(NewCollection):
    link: Annotated[
        str, Field(examples=["https://example.com/help"], json_schema_extra={"pattern": r"^\s*https?://\S"})
    ]

    @field_validator("link")
    @classmethod
    def _http(cls, link: str) -> str:
        link = link.strip()
        if not link:
            raise ValueError("is required")
        if not link.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return link


class ListCollections(DatasetPageQuery):
    datasetId: ObjectId
    parentId: OptionalObjectId = Field(
        None, description="The folder to list (null: the root; searchText: every level)"
    )
    filterTags: Annotated[list[ObjectId] | None, BLANK_IS_NONE] = Field(
        None, description="Tag ids: only collections carrying one of them"
    )
    selectFolder: Annotated[WireBool | None, BLANK_IS_NONE] = Field(None, description="Only folders")


class CollectionId(ApiModel):
    id_kinds: ClassVar[dict[str, str]] = {"id": "collection"}
    id: ObjectId = Field(description="The collection's id")


class CollectionRef(ApiModel):
    collectionId: ObjectId


def _training_amount(collection: CollectionRecord) -> int:
    """FastGPT's ``trainingAmount``: queue entries still attached (0 means ready)."""
    if collection.status == "ready":
        return 0
    if collection.status == "indexing":
        return max(collection.chunks_total - collection.chunks_done, 1)
    return 1


def _collection_view(
    collection: CollectionRecord, queue_position: int | None = None, *, failed: int = 0
) -> dict[str, Any]:
    """The collection as FastGPT shows it; ``failed``: its training items the model failed on."""
    return {
        "_id": collection.id,
        "parentId": collection.parent_id,
        "datasetId": collection.dataset_id,
        "teamId": collection.team_id,
        "name": collection.name,
        "type": collection.type,
        "forbid": collection.forbid,
        "createTime": iso(collection.created_at),
        "updateTime": iso(collection.updated_at),
        "trainingType": collection.training_type,
        "qaPrompt": collection.chunk_settings.get("qaPrompt"),
        "autoIndexes": bool(collection.chunk_settings.get("autoIndexes")),
        "imageIndex": bool(collection.chunk_settings.get("imageIndex")),
        "fileId": collection.file_id,
        "rawLink": collection.raw_link,
        "tags": list(collection.tags),
        "externalFileId": collection.external_file_id,
        "metadata": collection.metadata,
        "sourceName": collection.name,
        "sourceId": collection.file_id or collection.raw_link or collection.id,
        "dataAmount": collection.chunks_done,
        "trainingAmount": _training_amount(collection),
        "hasError": collection.status == "error" or failed > 0,
        # Fathom's ingestion state, beyond FastGPT's fields
        "status": collection.status,
        "errorMsg": collection.error,
        "chunksTotal": collection.chunks_total,
        "chunksDone": collection.chunks_done,
        # place of its queued ingestion job in the fair queue (1: next); null when not queued
        "queuePosition": queue_position,
        # chunks the model failed on (qa / auto-index training), listed by training/getTrainingError
        "trainingErrorCount": failed,
    }


def _owned_view(
    collection: CollectionRecord,
    auth: AuthContext,
    owner: str | None,
    queue_position: int | None = None,
    *,
    failed: int = 0,
) -> dict[str, Any]:
    """:func:`_collection_view` plus FastGPT's ``tmbId`` and ``permission`` (both the knowledge base's:
    a collection inherits its dataset's permission)."""
    return {
        **_collection_view(collection, queue_position, failed=failed),
        "tmbId": owner,
        "permission": permission_view(auth, owner),
    }


async def load_collection(
    request: Request, auth: AuthContext, collection_id: str, need: Need
) -> CollectionRecord:
    collection, _ = await load_owned_collection(request, auth, collection_id, need)
    return collection


async def load_owned_collection(
    request: Request, auth: AuthContext, collection_id: str, need: Need
) -> tuple[CollectionRecord, str | None]:
    """The collection if the caller may ``need`` its knowledge base, and that knowledge base's owner."""
    require_team_key(auth, "use knowledge bases", "dataset")
    collection = await knowledge_bases(request).collections.find(auth.team_id, collection_id)
    _, owner = await load_dataset(request, auth, collection.dataset_id, need)
    return collection, owner


def _training(
    request: Request, dataset: DatasetRecord, payload: NewCollection, *, image: bool = False
) -> tuple[str, dict[str, Any]]:
    """The collection's training type and training settings, after checking they can run (an image file
    is an image collection, described by the vision model)."""
    checks = knowledge_bases(request).datasets.training_checks
    return checks.image_training(dataset, payload) if image else checks.collection_training(dataset, payload)


async def _create(
    request: Request,
    auth: AuthContext,
    payload: NewCollection,
    *,
    name: str,
    type: str,
    image: bool = False,
    **source: Any,
) -> dict[str, Any]:
    """Store the collection and queue its ingestion; ``insertLen`` is the number of chunks queued
    when the text is at hand (a text import), else 0 (a link or file is parsed by the job). ``image``:
    an image collection (its image described by the vision model)."""
    collections = knowledge_bases(request).collections
    dataset = await load_knowledge_base(request, auth, payload.datasetId, "write")
    parent_id = await collections.folder(auth.team_id, dataset.id, payload.parentId)
    bill_id = await training_bill(request, auth, payload.billId)
    training_type, training_settings = _training(request, dataset, payload, image=image)
    new = CollectionToCreate(
        name,
        type,
        training_type=training_type,
        chunk_settings=payload.chunk_settings() | training_settings,
        metadata=payload.metadata or {},
        parent_id=parent_id,
        tags=payload.tags or (),
        created_at=payload.createTime,
        external_file_id=payload.externalFileId,
        **source,
    )
    collection, insert_len = await collections.import_source(auth.team_id, dataset.id, new, bill_id=bill_id)
    return envelope(
        {
            "collectionId": collection.id,
            "results": {"insertLen": insert_len, "overToken": [], "repeat": [], "error": []},
        }
    )


CREATED = answers(CollectionCreated, description="The new collection, its ingestion queued")


@router.api_route(
    "/api/core/dataset/collection/create",
    methods=ANY_METHOD,
    summary="Create an empty collection (rows come from pushData / insertData)",
    responses=answers(str, description="``data`` is the new collection's id"),
)
async def create_empty(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: CreateEmpty = parsed(CreateEmpty)
) -> dict[str, Any]:
    """FastGPT's ``{datasetId, parentId?, name, type: "virtual" | "folder", metadata?, tags?}`` → the new
    collection's id. A virtual collection is ready at once and holds the rows pushed into it; a folder
    holds collections (``parentId`` on create, list and update)."""
    collections = knowledge_bases(request).collections
    dataset = await load_knowledge_base(request, auth, payload.datasetId, "write")
    training_type, training_settings = _training(request, dataset, payload)
    new = CollectionToCreate(
        payload.name,
        payload.type or "virtual",
        training_type=training_type,
        chunk_settings=training_settings,
        metadata=payload.metadata or {},
        parent_id=await collections.folder(auth.team_id, dataset.id, payload.parentId),
        tags=payload.tags or (),
        created_at=payload.createTime,
        external_file_id=payload.externalFileId,
    )
    collection = await collections.create_empty(auth.team_id, dataset.id, new)
    return envelope(collection.id)


@router.api_route(
    "/api/core/dataset/collection/create/text", methods=ANY_METHOD, summary="Import text", responses=CREATED
)
async def create_text(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: CreateText = parsed(CreateText)
) -> dict[str, Any]:
    return await _create(request, auth, payload, name=payload.name, type="virtual", raw_text=payload.text)


@router.api_route(
    "/api/core/dataset/collection/create/link",
    methods=ANY_METHOD,
    summary="Import a web page",
    responses=CREATED,
)
async def create_link(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: CreateLink = parsed(CreateLink)
) -> dict[str, Any]:
    link = payload.link
    if payload.imageIndex:
        raise ApiError(
            400,
            "invalidParams",
            "imageIndex: a web page's images are links, and Fathom never fetches an image by its URL; "
            "save the page with its images embedded and import it with create/localFile, or leave "
            "imageIndex out",
        )
    selector = (payload.metadata or {}).get("webPageSelector")
    if selector not in (None, ""):
        check_web_page_selector(selector, "metadata.")
    return await _create(request, auth, payload, name=link[:COLLECTION_NAME_MAX], type="link", raw_link=link)


@router.post(
    "/api/core/dataset/collection/create/localFile",
    summary="Import an uploaded file (multipart: file, and data: a JSON string of the import's fields)",
    responses=CREATED,
)
async def create_local_file(
    request: Request,
    file: UploadFile = File(...),
    data: str = Form("{}", description="JSON: datasetId, trainingType?, chunk settings, metadata?"),
    auth: AuthContext = Depends(kb_caller),
    payload: NewCollection = parsed(NewCollection, form_field="data"),
) -> dict[str, Any]:
    content = await file.read()
    if not content:
        raise ApiError(400, "", "file is empty")
    name = check_file_name(file.filename or "upload", "file.filename")
    check_storable(name, "file.filename")
    if len(name) > COLLECTION_NAME_MAX:
        raise ApiError(
            400, "invalidParams", f"file.filename: at most {COLLECTION_NAME_MAX} characters, got {len(name)}"
        )
    check_file_format(name, "file")
    image = is_image_file(name)
    await load_knowledge_base(request, auth, payload.datasetId, "write")
    await admit_upload(request, member_or_key(auth))
    file_id = await knowledge_bases(request).collections.save_file(
        auth.team_id,
        name,
        content,
        content_type=file.content_type or "application/octet-stream",
        member_id=auth.member_id,
    )
    return await _create(
        request, auth, payload, name=name, type="images" if image else "file", image=image, file_id=file_id
    )


@router.api_route(
    "/api/core/dataset/collection/listV2",
    methods=ANY_METHOD,
    summary="List collections",
    responses=answers(Page[CollectionView]),
)
@router.api_route("/api/core/dataset/collection/list", methods=ANY_METHOD, include_in_schema=False)
async def list_collections(
    request: Request,
    auth: AuthContext = Depends(kb_caller),
    payload: ListCollections = parsed(ListCollections),
) -> dict[str, Any]:
    dataset, owner = await load_dataset(request, auth, payload.datasetId, "read")
    offset, size = payload.window()
    collections = knowledge_bases(request).collections
    search = payload.searchText or ""
    if payload.parentId and not search:
        await collections.folder(auth.team_id, dataset.id, payload.parentId)
    tag_names = await knowledge_bases(request).tags.names(auth.team_id, dataset.id, payload.filterTags or ())
    if payload.filterTags and not tag_names:
        return envelope({"list": [], "total": 0})
    items, total = await collections.list_collections(
        auth.team_id,
        dataset.id,
        offset=offset,
        limit=size,
        search=search,
        parent_id=payload.parentId,
        folders_only=bool(payload.selectFolder),
        any_tag=tag_names,
    )
    views = [
        _owned_view(item.collection, auth, owner, item.queue_position, failed=item.failed) for item in items
    ]
    return envelope({"list": views, "total": total})


@router.api_route(
    "/api/core/dataset/collection/detail",
    methods=ANY_METHOD,
    summary="A collection",
    responses=answers(CollectionView),
)
async def collection_detail(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: CollectionId = parsed(CollectionId)
) -> dict[str, Any]:
    collection, owner = await load_owned_collection(request, auth, payload.id, "read")
    counts = await knowledge_bases(request).collections.training_counts(collection.id)
    return envelope(_owned_view(collection, auth, owner, failed=counts.failed_total if counts else 0))


@router.api_route(
    "/api/core/dataset/collection/trainingDetail",
    methods=ANY_METHOD,
    summary="Training progress of a collection",
    responses=answers(TrainingDetail),
)
async def training_detail(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: CollectionRef = parsed(CollectionRef)
) -> dict[str, Any]:
    """FastGPT's counts by training mode: ``trainingCounts`` the chunks (or, in qa / auto-index training,
    the chunks waiting for the model) still to write, ``errorCounts`` the failures (a failed import is one
    ``parse`` error; each chunk the model failed on is one error of its mode)."""
    collection = await load_collection(request, auth, payload.collectionId, "read")
    modes = ("parse", "chunk", "qa", "auto", "image", "imageParse")
    counts = dict.fromkeys(modes, 0)
    training = dict(counts)
    errors = dict(counts)
    items = await knowledge_bases(request).collections.training_counts(collection.id)
    if items is not None:
        for mode, count in items.pending.items():
            training[mode] += count
        for mode, count in items.failed.items():
            errors[mode] += count
    if collection.status in ("waiting", "parsing"):
        training["parse"] = 1
    elif collection.status == "indexing" and items is None:
        training["chunk"] = _training_amount(collection)
    elif collection.status == "error":
        errors["parse"] = 1
    return envelope(
        {
            "trainingType": collection.training_type,
            "advancedTraining": {
                "customPdfParse": False,
                "imageIndex": bool(collection.chunk_settings.get("imageIndex")),
                "autoIndexes": bool(collection.chunk_settings.get("autoIndexes")),
            },
            "queuedCounts": counts,
            "trainingCounts": training,
            "errorCounts": errors,
            "trainedCount": collection.chunks_done,
            "status": collection.status,
            "errorMsg": collection.error,
        }
    )
