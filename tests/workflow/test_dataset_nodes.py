"""Knowledge-base search node errors and the quote concat node (RRF + token budget)."""

from __future__ import annotations

from typing import Any

from wf_builders import edge, node_input, output, start, workflow

from fathom.knowledge.search import SearchDatasetDataParams, SearchDatasetDataResponse
from fathom.workflow import WorkflowServices, run_workflow


def search_node(datasets: Any) -> dict[str, Any]:
    return {
        "nodeId": "search",
        "name": "search",
        "flowNodeType": "datasetSearchNode",
        "inputs": [
            node_input("datasets", datasets, "selectDataset"),
            node_input("userChatInput", ["start", "userChatInput"]),
        ],
        "outputs": [output("quoteQA", "datasetQuote")],
    }


async def test_search_without_knowledge_base_is_a_node_error() -> None:
    calls: list[SearchDatasetDataParams] = []

    async def searcher(params: SearchDatasetDataParams) -> SearchDatasetDataResponse:
        calls.append(params)
        return SearchDatasetDataResponse()

    result = await run_workflow(
        workflow([start(), search_node([])], [edge("start", "search")]),
        query="q",
        services=WorkflowServices(dataset_search=searcher),
    )
    assert result.error == "No knowledge base selected" and calls == []


async def test_search_passes_node_settings_to_the_pipeline() -> None:
    seen: list[SearchDatasetDataParams] = []

    async def searcher(params: SearchDatasetDataParams) -> SearchDatasetDataResponse:
        seen.append(params)
        return SearchDatasetDataResponse(
            searchRes=[{"id": "x", "q": "hit", "datasetId": "a", "collectionId": "c"}]
        )

    node = search_node([{"datasetId": "a"}, "b"])
    node["inputs"] += [node_input("limit", 800, "number"), node_input("searchMode", "mixedRecall")]
    result = await run_workflow(
        workflow([start(), node], [edge("start", "search")]),
        query="find me",
        services=WorkflowServices(dataset_search=searcher),
    )
    assert seen[0].dataset_ids == ["a", "b"] and seen[0].limit == 800 and seen[0].search_mode == "mixedRecall"
    assert seen[0].queries == ["find me"] and seen[0].re_rank_query == "find me"
    assert [q["id"] for q in result.node_outputs["search"]["quoteQA"]] == ["x"]


def quote(i: str, text: str) -> dict[str, Any]:
    return {"id": i, "q": text, "a": "", "datasetId": "d", "collectionId": "c"}


async def test_concat_fuses_lists_by_rrf() -> None:
    first = [quote("a", "alpha"), quote("b", "beta")]
    second = [quote("b", "beta"), quote("c", "gamma")]
    concat = {
        "nodeId": "concat",
        "name": "concat",
        "flowNodeType": "datasetConcatNode",
        "inputs": [
            node_input("limit", 1500, "number"),
            node_input("list1", ["VARIABLE_NODE_ID", "one"], "datasetQuote"),
            node_input("list2", ["VARIABLE_NODE_ID", "two"], "datasetQuote"),
        ],
        "outputs": [output("quoteQA", "datasetQuote")],
    }
    result = await run_workflow(
        workflow([start(), concat], [edge("start", "concat")]),
        query="q",
        variables={"one": first, "two": second},
    )
    ids = [q["id"] for q in result.node_outputs["concat"]["quoteQA"]]
    assert ids[0] == "b" and sorted(ids) == ["a", "b", "c"]
    assert result.flow_responses[-1]["concatLength"] == 3
