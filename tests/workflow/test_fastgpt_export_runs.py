"""A FastGPT export (start → dataset search → chat → user select → answers) runs unchanged:
knowledge search on in-memory indexes, the chat model on the scripted loopback server."""

from __future__ import annotations

import json
from pathlib import Path

from fathom.knowledge.memory_index import MemoryChunkStore, MemoryFullTextIndex, MemoryVectorIndex
from fathom.knowledge.ports import TextRecord
from fathom.knowledge.search import SearchDatasetDataParams, SearchDatasetDataResponse, search_dataset_data
from fathom.llm import ChatModel
from fathom.testing import ScriptedOpenAIServer, text_turn
from fathom.workflow import WorkflowServices, load_workflow, resume_workflow, run_workflow

EXPORT = json.loads(
    (Path(__file__).parent / "fixtures" / "exports" / "kb_chat_select.json").read_text("utf-8")
)
CHUNKS = [
    ("d1", "Fathom is a self-hosted platform for knowledge-base question answering."),
    ("d2", "Workflows in Fathom keep FastGPT's edge semantics."),
    ("d3", "Bananas are rich in potassium."),
]


async def make_searcher() -> tuple[MemoryChunkStore, object]:
    text, vectors, store = MemoryFullTextIndex(), MemoryVectorIndex(), MemoryChunkStore()
    for data_id, body in CHUNKS:
        await text.add([TextRecord(data_id, "kb-fathom", "col", body)])
    store.put([{"id": i, "q": body, "datasetId": "kb-fathom", "collectionId": "col"} for i, body in CHUNKS])

    async def searcher(params: SearchDatasetDataParams) -> SearchDatasetDataResponse:
        return await search_dataset_data(
            params, embedder=None, full_text_index=text, vector_index=vectors, chunk_store=store
        )

    return store, searcher


async def test_export_runs_search_chat_and_select_branch() -> None:
    graph = load_workflow(EXPORT)
    assert graph.to_dict() == EXPORT
    _, searcher = await make_searcher()
    async with ScriptedOpenAIServer([text_turn("Fathom answers questions from knowledge bases.")]) as server:

        def factory(model_id: str) -> ChatModel:
            return server.chat_model(model_id)

        services = WorkflowServices(chat_model_factory=factory, dataset_search=searcher)
        first = await run_workflow(graph, query="What is Fathom?", services=services)
        assert first.run_node_ids == [
            "userGuide",
            "workflowStartNodeId",
            "iKBoX2vIzETU",
            "7BdojPlukIQw",
            "pick",
        ]
        quotes = first.node_outputs["iKBoX2vIzETU"]["quoteQA"]
        assert [q["id"] for q in quotes][0] == "d1"
        assert "d3" not in [q["id"] for q in quotes]
        system = server.chat_requests[0]["messages"][0]["content"]
        assert system.startswith("You answer questions about Fathom.")
        assert CHUNKS[0][1] in system
        assert first.answer_text == "Fathom answers questions from knowledge bases."
        record = first.interactive
        assert record is not None and record["params"]["userSelectOptions"][0] == {
            "value": "Yes",
            "key": "option1",
        }

        second = await resume_workflow(graph, record, "Yes", services=services)
        assert second.run_node_ids == ["pick", "done"]
        assert second.skipped_node_ids == ["bye"]
        assert second.answer_text == "\nGlad it helped: Yes"
        assert len(server.chat_requests) == 1  # nothing upstream of the select ran again
