"""Public vocabulary of the search pipeline: result items, scores and the score trace.

Wire names keep FastGPT's camelCase (``datasetId``, ``score: [{type, value, index}]``); Python code
uses snake_case attributes. Plain dicts are accepted wherever an item is (``SearchDataItem.of``).

The *score trace* is Fathom's addition: every stage that looks at an item appends one
``TraceEntry`` (its score and 0-based rank at that stage), and the stage that removes an item sets
``trace.cutBy``. So a user can see why a chunk ranked where it did, or why it is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

# FastGPT's score types: ``rrf`` is the fused score of a mixed search, whichever fusion made it (the trace
# stage, ``rrf`` or ``convex``, says which)
ScoreType = Literal["embedding", "fullText", "reRank", "rrf"]
SearchMode = Literal["embedding", "fullTextRecall", "mixedRecall"]
SEARCH_MODES: tuple[SearchMode, ...] = ("embedding", "fullTextRecall", "mixedRecall")

TraceStage = Literal[
    "embeddingRecall",
    "fullTextRecall",
    "rrf",
    "convex",
    "reRank",
    "reRankFusion",
    "dedupe",
    "similarity",
    "tokenBudget",
]


_W = TypeVar("_W", bound="_Wire")


class _Wire(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True, extra="ignore")

    def copy_with(self, changes: dict[str, Any]) -> Self:
        """A shallow copy with ``changes`` (field names) applied, without validation: what
        ``model_copy(update=…)`` does, at a fraction of its cost (a search copies items many times)."""
        changed = self.__pydantic_fields_set__.union(changes)
        return _unvalidated(self.__class__, {**self.__dict__, **changes}, changed, self.__pydantic_extra__)


_set = object.__setattr__


def _unvalidated(cls: type[_W], values: dict[str, Any], fields_set: set[str], extra: Any = None) -> _W:
    """An instance of ``cls`` holding ``values`` as they are: how a search's items and traces are copied
    without a pass through validation (its values were validated when the copied item was made)."""
    new = cls.__new__(cls)
    _set(new, "__dict__", values)
    _set(new, "__pydantic_fields_set__", fields_set)
    _set(new, "__pydantic_extra__", extra)
    _set(new, "__pydantic_private__", None)
    return new


class SearchScore(_Wire):
    """One stage's score of an item: ``{type, value, index}`` (``index`` is the 0-based rank)."""

    type: ScoreType
    value: float
    index: int


class TraceEntry(_Wire):
    """What one stage did with an item."""

    stage: TraceStage
    score: float | None = None
    rank: int | None = None
    passed: bool = True
    detail: str | None = None


class ScoreTrace(_Wire):
    """Every stage's verdict on an item, in pipeline order; ``cutBy`` names the stage that removed it."""

    stages: list[TraceEntry] = Field(default_factory=list)
    cut_by: TraceStage | None = Field(default=None, alias="cutBy")


class SearchDataItem(_Wire):
    """A chunk as a search returns it (FastGPT ``SearchDataResponseItemType``) plus its trace."""

    id: str
    q: str
    a: str = ""
    dataset_id: str = Field(default="", alias="datasetId")
    collection_id: str = Field(default="", alias="collectionId")
    source_name: str = Field(default="", alias="sourceName")
    source_id: str | None = Field(default=None, alias="sourceId")
    chunk_index: int = Field(default=0, alias="chunkIndex")
    update_time: datetime | None = Field(default=None, alias="updateTime")
    image_id: str | None = Field(default=None, alias="imageId")
    indexes: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] | None = None
    tokens: int | None = None  # tokens of q + a when the store counted them at write time (FastGPT's)
    score: list[SearchScore] = Field(default_factory=list)
    trace: ScoreTrace = Field(default_factory=ScoreTrace)

    @classmethod
    def of(cls, value: SearchDataItem | Mapping[str, Any]) -> SearchDataItem:
        """Accept a model or a plain (camelCase or snake_case) dict."""
        return value if isinstance(value, SearchDataItem) else cls.model_validate(dict(value))

    def score_of(self, score_type: ScoreType) -> float | None:
        """The value of this item's score of ``score_type``, or None."""
        for entry in self.score:
            if entry.type == score_type:
                return entry.value
        return None

    def traced(
        self, entry: TraceEntry, *, cut: bool = False, scores: list[SearchScore] | None = None
    ) -> SearchDataItem:
        """A copy with ``entry`` appended to the trace (and ``cutBy`` set when ``cut``); with ``scores``,
        also a new score list (one copy for both)."""
        old = self.trace
        stages = {"stages": [*old.stages, entry], "cut_by": entry.stage if cut else old.cut_by}
        trace = _unvalidated(ScoreTrace, stages, old.__pydantic_fields_set__ | _TRACE_CHANGED)
        values = {**self.__dict__, "trace": trace}
        if scores is None:
            return _unvalidated(SearchDataItem, values, self.__pydantic_fields_set__ | _TRACED)
        values["score"] = scores
        return _unvalidated(SearchDataItem, values, self.__pydantic_fields_set__ | _RESCORED)

    def with_scores(self, scores: list[SearchScore]) -> SearchDataItem:
        """A copy with a new score list."""
        return self.copy_with({"score": scores})


_ITEM_LIST: TypeAdapter[list[SearchDataItem]] = TypeAdapter(list[SearchDataItem])
_WITHOUT_TRACE = {"__all__": {"trace"}}


def items_of(values: Sequence[SearchDataItem | Mapping[str, Any]]) -> list[SearchDataItem]:
    """``SearchDataItem.of`` for every value of a list, in one pass of the validator (quotes a node got)."""
    return _ITEM_LIST.validate_python(list(values))


def items_to_wire(
    items: Sequence[SearchDataItem], *, exclude_none: bool = False, trace: bool = True
) -> list[dict[str, Any]]:
    """The items as FastGPT JSON (camelCase, JSON values), in one pass of the serializer: what each item's
    ``model_dump(by_alias=True, mode="json", ...)`` gives; ``trace`` False leaves the traces out."""
    return _ITEM_LIST.dump_python(
        list(items),
        by_alias=True,
        mode="json",
        exclude_none=exclude_none,
        exclude=None if trace else _WITHOUT_TRACE,
    )


# the fields a trace step sets (``traced``)
_TRACE_CHANGED = frozenset({"stages", "cut_by"})
_TRACED = frozenset({"trace"})
_RESCORED = frozenset({"trace", "score"})


class SearchDatasetDataParams(_Wire):
    """Inputs of ``search_dataset_data`` (FastGPT ``SearchDatasetDataProps``, text part)."""

    queries: list[str]
    re_rank_query: str = Field(default="", alias="reRankQuery")
    dataset_ids: list[str] = Field(default_factory=list, alias="datasetIds")
    similarity: float | None = 0
    limit: int = 1500
    search_mode: str = Field(default="embedding", alias="searchMode")
    embedding_weight: float = Field(default=0.5, alias="embeddingWeight")
    # Fathom's addition: how mixedRecall fuses its legs (``fathom.knowledge.search.hybrid``): ``rrf``
    # (FastGPT's weighted RRF, weights as sent) or ``convex``; absent or any other value: the default
    # (convex, the embedding weight scaled by how much of the query the embedding model can read)
    fusion: str | None = None
    # with ``fusion: "convex"``: ``minmax`` (the default, best on SciFact train) or ``tmm`` (theoretical
    # min-max) normalisation of each leg's scores; any other value means ``minmax``
    convex_normalization: str = Field(default="minmax", alias="convexNormalization")
    using_re_rank: bool = Field(default=False, alias="usingReRank")
    rerank_weight: float = Field(default=0.5, alias="rerankWeight")
    # which rerank model (spec §5.3 ``rerankModel?``); None: the service's default rerank model
    rerank_model: str | None = Field(default=None, alias="rerankModel")
    collection_ids: list[str] | None = Field(default=None, alias="collectionIds")
    forbid_collection_ids: list[str] = Field(default_factory=list, alias="forbidCollectionIds")
    # FastGPT's tags / createTime filter (``collection_filter``): a JSON string or an object; the search
    # service turns it into ``collection_ids``
    collection_filter_match: dict[str, Any] | str | None = Field(default=None, alias="collectionFilterMatch")


class IndexingDataset(_Wire):
    """A searched knowledge base whose documents are not all searchable yet (Fathom's addition): ``pending``
    of its ``total`` collections still wait for, or are in, ingestion."""

    dataset_id: str = Field(alias="datasetId")
    name: str
    pending: int
    total: int


class SearchDatasetDataResponse(_Wire):
    """Output of ``search_dataset_data``; ``cutRes`` holds the items a stage removed, with traces."""

    search_res: list[SearchDataItem] = Field(default_factory=list, alias="searchRes")
    cut_res: list[SearchDataItem] = Field(default_factory=list, alias="cutRes")
    embedding_tokens: int = Field(default=0, alias="embeddingTokens")
    re_rank_input_tokens: int = Field(default=0, alias="reRankInputTokens")
    search_mode: SearchMode = Field(default="embedding", alias="searchMode")
    limit: int = 1500
    similarity: float | None = 0
    using_re_rank: bool = Field(default=False, alias="usingReRank")
    using_similarity_filter: bool = Field(default=False, alias="usingSimilarityFilter")
    queries: list[str] = Field(default_factory=list)
    # the searched knowledge bases still indexing (set by the service that knows collection states)
    indexing: list[IndexingDataset] = Field(default_factory=list)
