"""Knowledge bases over FastGPT's paths: ``/api/core/dataset/{create,list,detail,delete,paths,searchTest}``.

Folders are knowledge bases of ``type: "folder"``: they hold knowledge bases and folders (``parentId``),
hold no collections, and pass a member's permission on to what is in them."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import Field

from fathom.datasets.dataset_service import NewDataset
from fathom.datasets.records import DatasetRecord, SearchMode
from fathom.datasets.search_test import SearchTestAsk
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.permissions import Need, permission_view, require_permission, require_team_key
from fathom.server.routes.common import ANY_METHOD, iso, platform_of
from fathom.server.routes.dataset_models import (
    MODEL_ID_MAX,
    DatasetName,
    DatasetView,
    ModelChoice,
    NonBlank,
    SearchTestResult,
    model_id_of,
)
from fathom.server.routes.dataset_sources import SourceFields, configure_source, source_view
from fathom.server.routes.knowledge_routing import knowledge_bases
from fathom.server.typed import BLANK_IS_NONE, ApiModel, ObjectId, OptionalObjectId, Text, answers, parsed

router = APIRouter(tags=["datasets"])


class CreateDataset(SourceFields):
    name: DatasetName = Field(examples=["Support articles"])
    intro: Annotated[Text | None, BLANK_IS_NONE] = None
    type: Annotated[Literal["dataset", "folder", "apiDataset", "websiteDataset"] | None, BLANK_IS_NONE] = (
        Field(None, examples=["dataset"])
    )
    vectorModel: ModelChoice = Field(
        None,
        description='The embedding model (default: the default one); "auto": chosen by the first '
        "document's language (the multilingual local model for mostly CJK text, when installed)",
    )
    agentModel: Annotated[str | None, BLANK_IS_NONE] = Field(None, max_length=MODEL_ID_MAX)
    vlmModel: Annotated[str | None, BLANK_IS_NONE] = Field(
        None,
        max_length=MODEL_ID_MAX,
        description="The vision model (vision: true): describes images (imageIndex, image collections)",
    )
    parentId: OptionalObjectId = Field(None, description="The folder to create it in (null: the root)")
    avatar: Annotated[str | None, BLANK_IS_NONE] = Field(
        None, max_length=2000, description="Kept by FastGPT; ignored"
    )


class ListDatasets(ApiModel):
    parentId: OptionalObjectId = Field(None, description='The folder to list (null or "": the root)')
    type: Annotated[Literal["dataset", "folder"] | None, BLANK_IS_NONE] = Field(
        None, description="Only knowledge bases, or only folders"
    )
    searchKey: Annotated[str | None, BLANK_IS_NONE] = Field(
        None, description="Part of a name or intro: searches every folder (parentId is not read)"
    )


class DatasetPaths(ApiModel):
    parentId: OptionalObjectId = Field(None, description="The folder whose path is asked (null: the root)")
    sourceId: OptionalObjectId = Field(None, description="FastGPT's newer name for parentId")


class DatasetId(ApiModel):
    id_kinds: ClassVar[dict[str, str]] = {"id": "dataset"}
    id: ObjectId = Field(description="The knowledge base's id")


class SearchTest(ApiModel):
    """FastGPT's search test; ``fusion`` is Fathom's (how mixedRecall fuses its two legs)."""

    datasetId: ObjectId
    text: NonBlank = Field(examples=["When are refunds paid?"])
    limit: Annotated[int | None, BLANK_IS_NONE] = Field(None, description="Token budget (default 5000)")
    similarity: Annotated[Annotated[float, Field(ge=0, le=1)] | None, BLANK_IS_NONE] = None
    searchMode: Annotated[SearchMode | None, BLANK_IS_NONE] = Field(None, examples=["embedding"])
    embeddingWeight: Annotated[float | None, BLANK_IS_NONE] = None
    fusion: Annotated[Literal["rrf", "convex"] | None, BLANK_IS_NONE] = None
    usingReRank: Annotated[bool | None, BLANK_IS_NONE] = None
    collectionFilterMatch: Annotated[dict[str, Any] | str | None, BLANK_IS_NONE] = Field(
        None,
        description='FastGPT\'s filter: {"tags": {"$and": [...], "$or": [...]}, "createTime": {"$gte": ..., '
        '"$lte": ...}} (an object or its JSON text)',
        examples=['{"tags": {"$and": ["refunds"]}}'],
    )
    rerankModel: Annotated[str | None, BLANK_IS_NONE] = None
    rerankWeight: Annotated[float | None, BLANK_IS_NONE] = None
    datasetSearchUsingExtensionQuery: Annotated[bool | None, BLANK_IS_NONE] = None
    datasetSearchExtensionModel: Annotated[str | None, BLANK_IS_NONE] = None
    datasetSearchExtensionBg: Annotated[str | None, BLANK_IS_NONE] = None


async def kb_caller(request: Request) -> AuthContext:
    """The caller, if its key may use knowledge bases: checked before the body is validated."""
    auth = await authenticate(request)
    require_team_key(auth, "use knowledge bases", "dataset")
    return auth


def _model_view(model_id: str) -> dict[str, Any]:
    return {"model": model_id, "name": model_id}


def _dataset_view(dataset: DatasetRecord, auth: AuthContext, owner: str | None) -> dict[str, Any]:
    return {
        "_id": dataset.id,
        "parentId": dataset.parent_id,
        "teamId": dataset.team_id,
        "tmbId": owner,
        "type": dataset.type,
        "avatar": "",
        "name": dataset.name,
        "intro": dataset.intro,
        "vectorModel": _model_view(dataset.vector_model),  # a folder's is the default model's (unused)
        "agentModel": _model_view(dataset.agent_model) if dataset.agent_model else None,
        "vlmModel": _model_view(dataset.vlm_model) if dataset.vlm_model else None,
        "chunkSettings": dataset.chunk_settings,
        # Fathom's addition: why vectorModel "auto" chose the model (pending: until the first import)
        "vectorModelAuto": (
            {"pending": dataset.auto_model_pending, "reason": dataset.auto_model_reason}
            if dataset.auto_model_reason is not None
            else None
        ),
        "status": "active",
        "updateTime": iso(dataset.updated_at),
        "inheritPermission": True,
        "permission": permission_view(auth, owner),
    }


async def load_dataset(
    request: Request, auth: AuthContext, dataset_id: str, need: Need
) -> tuple[DatasetRecord, str | None]:
    """The dataset if the caller may ``need`` it; another team's dataset is not found."""
    require_team_key(auth, "use knowledge bases", "dataset")
    dataset, owner = await knowledge_bases(request).datasets.find(auth.team_id, dataset_id)
    await require_permission(platform_of(request), auth, "dataset", dataset_id, owner, need)
    return dataset, owner


async def load_folder(request: Request, auth: AuthContext, folder_id: str, need: Need) -> DatasetRecord:
    """A folder the caller may ``need``; 400 naming ``parentId`` when the id is a knowledge base."""
    folder, _ = await load_dataset(request, auth, folder_id, need)
    if folder.type != "folder":
        raise ApiError(
            400,
            "invalidParams",
            f"parentId: {folder_id} is a knowledge base, not a folder; send a folder's id",
        )
    return folder


async def load_knowledge_base(
    request: Request, auth: AuthContext, dataset_id: str, need: Need
) -> DatasetRecord:
    """A knowledge base (not a folder) the caller may ``need``: collections and searches need one."""
    dataset, _ = await load_dataset(request, auth, dataset_id, need)
    if dataset.type == "folder":
        raise ApiError(
            400,
            "invalidParams",
            f"datasetId: {dataset_id} is a folder; folders hold knowledge bases, not collections",
        )
    return dataset


@router.api_route(
    "/api/core/dataset/create",
    methods=ANY_METHOD,
    summary="Create a knowledge base",
    responses=answers(str, description="``data`` is the new knowledge base's id"),
)
async def create_dataset(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: CreateDataset = parsed(CreateDataset)
) -> dict[str, Any]:
    payload.check_source(payload.type)
    if payload.parentId:  # FastGPT: write permission on the folder it goes in
        await load_folder(request, auth, payload.parentId, "write")
    new = NewDataset(
        payload.name,
        intro=payload.intro or "",
        type=payload.type or "dataset",
        vector_model=model_id_of(payload.vectorModel),
        agent_model=payload.agentModel or "",
        vlm_model=payload.vlmModel or "",
        parent_id=payload.parentId,
    )
    dataset = await knowledge_bases(request).datasets.create(auth.team_id, auth.member_id, new)
    if dataset.type == "folder":
        return envelope(dataset.id)
    await configure_source(request, dataset, payload, payload.type or "dataset")
    return envelope(dataset.id)


@router.api_route(
    "/api/core/dataset/list",
    methods=ANY_METHOD,
    summary="List knowledge bases",
    responses=answers(list[DatasetView], description="The ones the caller may read, newest change first"),
)
async def list_datasets(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: ListDatasets = parsed(ListDatasets)
) -> dict[str, Any]:
    search = payload.searchKey or ""
    if payload.parentId and not search:
        await load_folder(request, auth, payload.parentId, "read")
    views = []
    found = await knowledge_bases(request).datasets.list_datasets(
        auth.team_id, parent_id=payload.parentId, search=search, type=payload.type
    )
    for dataset, owner in found:
        try:
            await require_permission(platform_of(request), auth, "dataset", dataset.id, owner, "read")
        except ApiError:
            continue  # datasets the caller cannot read are left out
        views.append(_dataset_view(dataset, auth, owner))
    views.sort(key=lambda view: view["updateTime"] or "", reverse=True)
    return envelope(views)


@router.api_route(
    "/api/core/dataset/detail", methods=ANY_METHOD, summary="A knowledge base", responses=answers(DatasetView)
)
async def dataset_detail(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DatasetId = parsed(DatasetId)
) -> dict[str, Any]:
    dataset, owner = await load_dataset(request, auth, payload.id, "read")
    return envelope({**_dataset_view(dataset, auth, owner), **await source_view(request, dataset.id)})


@router.api_route(
    "/api/core/dataset/delete", methods=ANY_METHOD, summary="Delete a knowledge base", responses=answers(None)
)
async def delete_dataset(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DatasetId = parsed(DatasetId)
) -> dict[str, Any]:
    dataset, _ = await load_dataset(request, auth, payload.id, "manage")  # a folder: with what is in it
    await knowledge_bases(request).datasets.delete(auth.team_id, dataset.id)  # and the files only it used
    return envelope(None)


@router.api_route(
    "/api/core/dataset/paths",
    methods=ANY_METHOD,
    summary="The folders from the root to a folder",
    responses=answers(
        list[dict[str, str]], description="``[{parentId, parentName}]``, the root's child first"
    ),
)
async def dataset_paths(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DatasetPaths = parsed(DatasetPaths)
) -> dict[str, Any]:
    """FastGPT's breadcrumb: ``[]`` for the root."""
    folder_id = payload.parentId or payload.sourceId
    if not folder_id:
        return envelope([])
    await load_dataset(request, auth, folder_id, "read")
    path = await knowledge_bases(request).datasets.path(folder_id)
    return envelope([{"parentId": item_id, "parentName": name} for item_id, name in path])


@router.api_route(
    "/api/core/dataset/searchTest",
    methods=ANY_METHOD,
    summary="Search a knowledge base",
    responses=answers(SearchTestResult),
)
async def search_test(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: SearchTest = parsed(SearchTest)
) -> dict[str, Any]:
    dataset = await load_knowledge_base(request, auth, payload.datasetId, "read")
    ask = SearchTestAsk(
        payload.text,
        limit=payload.limit,
        similarity=payload.similarity,
        search_mode=payload.searchMode,
        embedding_weight=payload.embeddingWeight,
        fusion=payload.fusion,
        using_rerank=payload.usingReRank,
        rerank_model=payload.rerankModel,
        rerank_weight=payload.rerankWeight,
        collection_filter=payload.collectionFilterMatch,
        extension=payload.datasetSearchUsingExtensionQuery,
        extension_model=payload.datasetSearchExtensionModel,
        extension_background=payload.datasetSearchExtensionBg,
    )
    outcome = await knowledge_bases(request).datasets.search_test(auth.team_id, dataset, ask)
    result, extension = outcome.response, outcome.extension
    answer: dict[str, Any] = {
        "list": [item.model_dump(mode="json", by_alias=True) for item in result.search_res],
        "cutList": [item.model_dump(mode="json", by_alias=True) for item in result.cut_res],
        "duration": f"{outcome.seconds:.3f}s",
        "searchMode": result.search_mode,
        "limit": result.limit,
        "similarity": result.similarity,
        "usingReRank": result.using_re_rank,
        "usingSimilarityFilter": result.using_similarity_filter,
    }
    if extension is not None:  # FastGPT sends the model only when the extension ran
        answer["queryExtensionModel"] = extension.model_id
        answer["queries"] = extension.queries.search_queries
    return envelope(answer)
