"""The first-start demo: a knowledge base of the project's own ``docs/*.md`` and a published workflow
app that answers from it with no LLM configured (start → knowledge-base search → answer quoting the
found chunks as readable passages with their source names; the chat shows the sources as chips).

Seeded once, by :meth:`fathom.platform.Platform.bootstrap` when it creates the root team. The
documents are queued as ingestion jobs of low priority (``DEMO_PRIORITY``: behind every import of the
user's own, whenever it was made); the in-process workers of ``fathom serve`` (or any
``fathom worker``) embed them with the local embedding model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import fathom

if TYPE_CHECKING:
    from fathom.chat import ChatApplication
    from fathom.datasets import EmbedderResolver, IngestionService
    from fathom.store.knowledge import SqlDatasetRepository


class DemoHost(Protocol):
    """The parts of :class:`fathom.platform.Platform` the demo seeds through (the platform calls the
    demo, so the demo names what it needs instead of importing the platform)."""

    @property
    def datasets(self) -> SqlDatasetRepository: ...

    @property
    def embedders(self) -> EmbedderResolver: ...

    @property
    def ingestion(self) -> IngestionService: ...

    @property
    def chat(self) -> ChatApplication: ...


DEMO_DATASET_NAME = "Fathom docs (demo)"
DEMO_PRIORITY = -10  # the demo's ingestion jobs wait behind every normal (0) job
DEMO_APP_NAME = "Ask the Fathom docs (demo, no model needed)"
START_ID = "workflowStartNodeId"
SEARCH_ID = "datasetSearchNode"
INTRO_ID = "demoIntro"
QUOTES_ID = "demoQuotes"
INTRO_TEXT = (
    "These passages of Fathom's own documentation best match your question (this demo app quotes "
    "them as found; it needs no model):"
)
NO_DOCS_TEXT = (
    "This demo app searches Fathom's own docs/ folder, which was not found next to the installed "
    "package, so there is nothing to quote. Create a knowledge base and an app through the API."
)


@dataclass
class DemoSeed:
    """What the first start created."""

    app_id: str
    dataset_id: str | None
    documents: int


def docs_dir() -> Path | None:
    """The repository's ``docs`` folder, found from the installed package (None when absent)."""
    path = Path(fathom.__file__).resolve().parents[2] / "docs"
    return path if path.is_dir() else None


def _input(key: str, value: Any, value_type: str = "any", render: str = "hidden") -> dict[str, Any]:
    return {"key": key, "value": value, "valueType": value_type, "renderTypeList": [render], "label": key}


def _output(key: str, value_type: str) -> dict[str, Any]:
    return {"id": key, "key": key, "label": key, "type": "static", "valueType": value_type}


def _edge(source: str, target: str) -> dict[str, Any]:
    return {
        "source": source,
        "target": target,
        "sourceHandle": f"{source}-source-right",
        "targetHandle": f"{target}-target-left",
    }


def _answer(node_id: str, name: str, text: Any, value_type: str = "any") -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "name": name,
        "flowNodeType": "answerNode",
        "version": "481",
        "inputs": [_input("text", text, value_type, render="textarea")],
        "outputs": [_output("answerText", "string")],
    }


def _demo_workflow(dataset_id: str | None) -> dict[str, Any]:
    """The demo app as FastGPT workflow JSON; without a knowledge base it only explains why."""
    start = {
        "nodeId": START_ID,
        "name": "Start",
        "flowNodeType": "workflowStart",
        "version": "481",
        "inputs": [_input("userChatInput", "", "string", render="reference")],
        "outputs": [_output("userChatInput", "string"), _output("userFiles", "arrayString")],
    }
    if dataset_id is None:
        return {
            "nodes": [start, _answer(INTRO_ID, "Explain", NO_DOCS_TEXT)],
            "edges": [_edge(START_ID, INTRO_ID)],
        }
    search = {
        "nodeId": SEARCH_ID,
        "name": "Knowledge base search",
        "flowNodeType": "datasetSearchNode",
        "showStatus": True,
        "version": "481",
        "inputs": [
            _input("datasets", [{"datasetId": dataset_id}], "selectDataset"),
            _input("similarity", 0),
            _input("limit", 1000),
            _input("searchMode", "mixedRecall"),
            _input("embeddingWeight", 0.5),
            _input("usingReRank", False),
            _input("rerankWeight", 0.5),
            _input("userChatInput", [START_ID, "userChatInput"], "string", render="reference"),
        ],
        "outputs": [_output("quoteQA", "datasetQuote")],
    }
    return {
        "nodes": [
            start,
            search,
            _answer(INTRO_ID, "Intro", INTRO_TEXT),
            # valueType datasetQuote: the answer node renders the quotes as readable numbered passages
            # (Fathom's rendering; an ``any`` input would answer FastGPT's JSON of the quote objects).
            _answer(QUOTES_ID, "Passages", [SEARCH_ID, "quoteQA"], "datasetQuote"),
        ],
        "edges": [_edge(START_ID, SEARCH_ID), _edge(SEARCH_ID, INTRO_ID), _edge(INTRO_ID, QUOTES_ID)],
    }


#: ``docs/`` files the demo leaves out: the measurement notebook and the generated request/response pairs
#: (``api.md`` documents the same routes). They are not how-to text, they would crowd the demo's answers
#: with tables, and they are a third of the docs' text: leaving them out took a first start's indexing of
#: the demo from 117 to 81 s of CPU on a 2-core machine (issue 33).
NOT_IN_DEMO = frozenset({"benchmarks.md", "api-examples.md"})


def load_docs(docs: Path | None) -> list[tuple[str, str]]:
    """``(file name, text)`` of every non-empty ``*.md`` in ``docs`` but ``NOT_IN_DEMO`` (none when it is
    None)."""
    documents = []
    for path in sorted(docs.glob("*.md")) if docs is not None else []:
        if path.name in NOT_IN_DEMO:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if text.strip():
            documents.append((path.name, text))
    return documents


async def seed_demo(
    platform: DemoHost, team_id: str, member_id: str, documents: list[tuple[str, str]]
) -> DemoSeed:
    """Create the demo knowledge base (one collection per document, ingestion queued) and the
    published demo app in ``team_id``; no documents: the app only, explaining what is missing."""
    dataset_id: str | None = None
    if documents:
        dataset = await platform.datasets.create_dataset(
            team_id,
            DEMO_DATASET_NAME,
            vector_model=platform.embedders.default_model_id,
            intro="Fathom's own documentation, seeded on the first start.",
            member_id=member_id,
        )
        dataset_id = dataset.id
        for name, text in sorted(documents, key=lambda doc: len(doc[1])):  # smallest first: searchable sooner
            collection = await platform.datasets.create_collection(
                team_id, dataset.id, name, type="virtual", raw_text=text
            )
            await platform.ingestion.enqueue(collection, priority=DEMO_PRIORITY)
    apps = platform.chat.apps
    app = await apps.create(
        team_id,
        DEMO_APP_NAME,
        "advanced",
        _demo_workflow(dataset_id),
        intro="Searches the Fathom docs and quotes what it finds; works with no model configured.",
        version_name="demo",
    )
    await platform.chat.owners.set_owner(app.id, member_id)
    return DemoSeed(app.id, dataset_id, len(documents))
