"""The request pieces and the answers of the knowledge-base routes (datasets, collections, data rows):
FastGPT's field names, the types and limits checked before a handler runs, and the ``data`` each answers.

Numbers may come as strings and "" means absent (FastGPT's clients send both); the limits are the same
on every backend.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, StringConstraints
from pydantic_core import PydanticCustomError

from fathom.datasets.records import SearchDataItem
from fathom.server.pagination import PageQuery
from fathom.server.permissions import PermissionView
from fathom.server.typed import BLANK_IS_NONE, ApiModel, Text

DATASET_NAME_MAX = 200  # a knowledge base's name, in characters, on every backend
COLLECTION_NAME_MAX = 500  # a collection's name (a link's name is the link, cut to this length)
MODEL_ID_MAX = 200
MAX_OVERLAP_RATIO = 0.4
CHUNK_SIZE_MIN, CHUNK_SIZE_MAX = 64, 30000
PAGE_SIZE_CAP = 30


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("missing", "Field required")
    return value


#: text that must not be empty or only spaces (kept as sent)
NonBlank = Annotated[str, AfterValidator(_not_blank), Field(json_schema_extra={"pattern": r"\S"})]
DatasetName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=DATASET_NAME_MAX),
    Field(json_schema_extra={"pattern": r"\S"}),
]
CollectionName = Annotated[str, StringConstraints(min_length=1, max_length=COLLECTION_NAME_MAX)]
ChunkSize = Annotated[int, Field(ge=CHUNK_SIZE_MIN, le=CHUNK_SIZE_MAX)]
#: a model id, or the model object FastGPT's clients were shown (``{"model": ...}``)
ModelChoice = Annotated[str | dict[str, Any] | None, BLANK_IS_NONE]


def _wire_bool(value: Any) -> Any:
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


#: a JSON boolean, or "true" / "false" as a query string sends it; nothing else
WireBool = Annotated[bool, BeforeValidator(_wire_bool), Field(strict=True)]


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


def model_id_of(choice: str | dict[str, Any] | None) -> str:
    """The model id a :data:`ModelChoice` names ("" for none)."""
    if isinstance(choice, dict):
        return str(choice.get("model") or "")
    return choice or ""


class ChunkSettings(ApiModel):
    """How a collection's text is cut (FastGPT's names; ``chunkOverlapRatio``, ``chunkSplitRule`` and
    ``qaPairs`` are Fathom's). ``chunkSettingMode: "auto"`` keeps only ``qaPairs`` and ``chunkSplitRule``."""

    chunkSettingMode: Annotated[Literal["auto", "custom"] | None, BLANK_IS_NONE] = None
    chunkSplitMode: Annotated[Literal["paragraph", "size", "char"] | None, BLANK_IS_NONE] = None
    chunkSize: Annotated[ChunkSize | None, BLANK_IS_NONE] = Field(None, examples=[512])
    indexSize: Annotated[ChunkSize | None, BLANK_IS_NONE] = None
    chunkSplitter: Annotated[Text | None, BLANK_IS_NONE] = None
    chunkOverlapRatio: Annotated[
        Annotated[float, BeforeValidator(_not_bool), Field(ge=0, le=MAX_OVERLAP_RATIO)] | None, BLANK_IS_NONE
    ] = None
    qaPairs: Annotated[WireBool | None, BLANK_IS_NONE] = None
    chunkSplitRule: Annotated[Literal["fathom", "fastgpt"] | None, BLANK_IS_NONE] = None

    def chunk_settings(self) -> dict[str, Any]:
        """The settings to store: the fields sent, ``qaPairs`` only when true."""
        qa: dict[str, Any] = {"qaPairs": True} if self.qaPairs else {}
        if self.chunkSplitRule is not None:
            qa["chunkSplitRule"] = self.chunkSplitRule
        if self.chunkSettingMode == "auto":
            return qa
        fields = ("chunkSettingMode", "chunkSplitMode", "chunkSize", "indexSize", "chunkSplitter")
        settings: dict[str, Any] = {f: getattr(self, f) for f in fields if getattr(self, f) is not None}
        if self.chunkOverlapRatio is not None:
            settings["chunkOverlapRatio"] = float(self.chunkOverlapRatio)
        return settings | qa


class DatasetPageQuery(PageQuery):
    """A knowledge-base list's page request: FastGPT's pagination
    (:class:`~fathom.server.pagination.PageQuery`, the page size capped at 30) and the ``searchText``
    the knowledge-base lists filter by."""

    searchText: Annotated[str | None, BLANK_IS_NONE] = None

    def window(self, cap: int = PAGE_SIZE_CAP) -> tuple[int, int]:
        """(offset, page size), the size at most ``cap`` (30)."""
        return super().window(cap)


# ---- answers ---------------------------------------------------------------------------------------


class ModelRef(BaseModel):
    model: str
    name: str


class AutoModelView(BaseModel):
    """Why ``vectorModel: "auto"`` chose the model; ``pending`` until the first import settles it."""

    pending: bool
    reason: str


class DatasetView(BaseModel):
    id_: str = Field(alias="_id")
    parentId: None
    teamId: str
    tmbId: str | None
    type: Literal["dataset", "folder", "apiDataset", "websiteDataset"]
    avatar: str
    name: str
    intro: str
    vectorModel: ModelRef
    agentModel: ModelRef | None
    vlmModel: ModelRef | None = None
    chunkSettings: dict[str, Any]
    vectorModelAuto: AutoModelView | None = Field(
        None, description='Fathom\'s addition: why vectorModel "auto" chose the model (null: named)'
    )
    status: str
    updateTime: str | None
    inheritPermission: bool
    permission: PermissionView
    # detail only, for a knowledge base with an external source (the authorization is never shown)
    apiServer: dict[str, Any] | None = None
    apiDatasetServer: dict[str, Any] | None = None
    websiteConfig: dict[str, Any] | None = None
    autoSync: bool | None = None
    nextSyncTime: str | None = Field(None, description="Fathom's: when the next scheduled sync is due")


class CollectionView(BaseModel):
    """A collection with Fathom's ingestion state beyond FastGPT's fields (``status``, ``errorMsg``,
    ``chunksTotal``, ``chunksDone``, ``queuePosition``: 1 is next, null when not queued)."""

    id_: str = Field(alias="_id")
    parentId: str | None = Field(description="Its folder (null: the knowledge base's root)")
    datasetId: str
    teamId: str
    tmbId: str | None
    name: str
    type: str
    forbid: bool = Field(description="A forbidden collection is left out of every search")
    createTime: str | None
    updateTime: str | None
    trainingType: str
    fileId: str | None
    rawLink: str | None
    externalFileId: str | None = Field(description="The client's own id for the file, as sent")
    tags: list[str] = Field(description="Tag names, in the order set")
    metadata: dict[str, Any]
    sourceName: str
    sourceId: str
    dataAmount: int
    trainingAmount: int
    hasError: bool
    status: Literal["waiting", "parsing", "indexing", "ready", "error"]
    errorMsg: str | None
    chunksTotal: int
    chunksDone: int
    queuePosition: int | None
    permission: PermissionView


class InsertResults(BaseModel):
    """What an import or push stored: ``insertLen`` chunks queued (0 for a link or file: the job parses
    it) or rows stored (rows with an empty q are dropped)."""

    insertLen: int
    overToken: list[Any]
    repeat: list[Any]
    error: list[Any]


class CollectionCreated(BaseModel):
    collectionId: str
    results: InsertResults


class TrainingDetail(BaseModel):
    trainingType: str
    advancedTraining: dict[str, bool]
    queuedCounts: dict[str, int]
    trainingCounts: dict[str, int]
    errorCounts: dict[str, int]
    trainedCount: int
    status: str
    errorMsg: str | None


class DataView(BaseModel):
    id_: str = Field(alias="_id")
    id: str
    teamId: str
    datasetId: str
    collectionId: str
    q: str
    a: str
    chunkIndex: int
    indexes: list[dict[str, Any]]
    sourceName: str
    sourceId: str
    updateTime: str | None


class SearchTestResult(BaseModel):
    """The quotes found (``list``), those cut by the limit (``cutList``) and the settings used."""

    list_: list[SearchDataItem] = Field(alias="list")
    cutList: list[SearchDataItem]
    duration: str = Field(examples=["0.012s"])
    searchMode: Literal["embedding", "fullTextRecall", "mixedRecall"]
    limit: int
    similarity: float | None
    usingReRank: bool
    usingSimilarityFilter: bool
    queryExtensionModel: str | None = Field(None, description="Only when the query extension ran")
    queries: list[str] | None = Field(None, description="The extended queries (with queryExtensionModel)")


class PreviewChunk(BaseModel):
    q: str
    a: str
    chars: int


class PreviewResult(BaseModel):
    chunks: list[PreviewChunk]
    total: int
    chunkSize: int
    indexSize: int
    overlapRatio: float
    chunkSplitter: list[str]
    qaPairs: bool
    chunkSplitRule: Literal["fathom", "fastgpt"]
