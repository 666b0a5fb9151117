"""FastGPT's ``datasetSearchResultConcat`` cases (weighted RRF, spec §5.4), restated as data and run
against ``fathom.knowledge.search.rrf.dataset_search_result_concat``.

Source: labring/FastGPT ``test/cases/global/core/dataset/search/utils.test.ts`` at commit
2beae1e2ac811b592d4e8f0feb4e3ad4f73f4e86. Each case is ``(FastGPT test name, lists, expectations)``;
a list is ``(weight, items)``, an item ``(id, [(score type, value), ...])`` or ``(id, scores, fields)``.
"""

from __future__ import annotations

from typing import Any

import pytest

from fathom.knowledge.search.rrf import dataset_search_result_concat

SOURCE = "test/cases/global/core/dataset/search/utils.test.ts@2beae1e2ac811b592d4e8f0feb4e3ad4f73f4e86"

E, F, R, RRF = "embedding", "fullText", "reRank", "rrf"
Item = tuple[Any, ...]


def one(id_: str, type_: str, value: float) -> Item:
    return (id_, [(type_, value)])


HUNDRED_A = [one(f"item-{i}", E, 1 - i * 0.01) for i in range(100)]
HUNDRED_B = [one(f"item-{99 - i}", F, 1 - i * 0.01) for i in range(100)]

CASES: list[tuple[str, list[tuple[float, list[Item]]], dict[str, Any]]] = [
    ("Edge cases > should handle empty array", [], {"length": 0}),
    ("Edge cases > should handle all empty lists", [(1.0, []), (0.5, [])], {"length": 0}),
    (
        "Edge cases > should handle only one non-empty list",
        [(1.0, [one("1", E, 0.9), one("2", E, 0.8)]), (0.5, [])],
        {"unchanged": 0},
    ),
    (
        "RRF algorithm tests > should calculate RRF scores correctly",
        [(1.0, [one("1", E, 0.9), one("2", E, 0.8)]), (1.0, [one("2", F, 0.7), one("1", F, 0.6)])],
        {"length": 2, "rrf": {"1": 0.0325224, "2": 0.0325224}},
    ),
    (
        "RRF algorithm tests > should weight RRF scores correctly",
        [(2.0, [one("1", E, 0.9)]), (1.0, [one("1", F, 0.7)])],
        {"length": 1, "rrf": {"1": 3.0 / 61}},
    ),
    (
        "Score merging tests > should merge different score types correctly",
        [(1.0, [("1", [(E, 0.9), (R, 0.8)])]), (1.0, [one("1", F, 0.7)])],
        {"length": 1, "score_len": {"1": 4}, "types": {"1": {E, F, R, RRF}}},
    ),
    (
        "Score merging tests > should take max value for same score types",
        [(1.0, [one("1", E, 0.9)]), (1.0, [one("1", E, 0.7)])],
        {"length": 1, "value": {("1", E): 0.9}},
    ),
    (
        "Sorting tests > should sort by RRF score descending",
        [
            (1.0, [one("1", E, 0.9), one("2", E, 0.8), one("3", E, 0.7)]),
            (1.0, [one("3", F, 0.9), one("2", F, 0.8), one("1", F, 0.7)]),
        ],
        {"length": 3, "sorted": True, "first_in": {"1", "3"}},
    ),
    (
        "RRF score update tests > should update existing RRF scores when multiple lists",
        [(1.0, [("1", [(E, 0.9), (RRF, 0.5)])]), (1.0, [one("1", F, 0.7)])],
        {"length": 1, "rrf_count": {"1": 1}, "rrf": {"1": 2 / 61}, "rrf_index": {"1": 0}},
    ),
    (
        "RRF score update tests > should add RRF score for items without one when multiple lists",
        [(1.0, [one("1", E, 0.9)]), (1.0, [one("1", F, 0.7)])],
        {"length": 1, "rrf": {"1": 2 / 61}, "rrf_index": {"1": 0}},
    ),
    (
        "RRF score update tests > should not modify single list (direct return)",
        [(1.0, [one("1", E, 0.9)])],
        {"unchanged": 0, "no_rrf": True},
    ),
    (
        "Complex scenario tests > should handle complex multi-source merging",
        [
            (1.0, [one("doc1", E, 0.95), one("doc2", E, 0.9), one("doc3", E, 0.85)]),
            (0.8, [one("doc2", F, 0.88), one("doc4", F, 0.82), one("doc1", F, 0.78)]),
            (1.2, [one("doc3", R, 0.92), one("doc1", R, 0.89)]),
        ],
        {"length": 4, "rrf_positive": True, "types": {"doc1": {E, F, R, RRF}}, "sorted": True},
    ),
    (
        "Score value comparison tests > should take max value when second list has higher score",
        [(1.0, [one("1", E, 0.5)]), (1.0, [one("1", E, 0.9)])],
        {"length": 1, "value": {("1", E): 0.9}},
    ),
    (
        "Score value comparison tests > should handle items with empty score arrays",
        [(1.0, [("1", [])]), (1.0, [one("1", E, 0.9)])],
        {"length": 1, "score_len": {"1": 2}, "value": {("1", E): 0.9}},
    ),
    (
        "Score value comparison tests > should handle both items with empty score arrays",
        [(1.0, [("1", [])]), (1.0, [("1", [])])],
        {"length": 1, "score_len": {"1": 1}, "types": {"1": {RRF}}},
    ),
    (
        "RRF index tests > should set correct index for multiple items after sorting",
        [(1.0, [one("1", E, 0.9), one("2", E, 0.8)]), (2.0, [one("2", F, 0.95)])],
        {"length": 2, "rrf_index_is_position": True},
    ),
    (
        "Additional edge cases > should handle single item in each list with different ids",
        [(1.0, [one("1", E, 0.9)]), (1.0, [one("2", F, 0.8)])],
        {"length": 2, "types": {"1": {E, RRF}, "2": {F, RRF}}},
    ),
    (
        "Additional edge cases > should handle multiple items at same rank position",
        [(1.0, [one("1", E, 0.9)]), (1.0, [one("2", F, 0.8)]), (1.0, [one("3", R, 0.7)])],
        {"length": 3, "rrf": {"1": 1 / 61, "2": 1 / 61, "3": 1 / 61}},
    ),
    (
        "Additional edge cases > should preserve other properties when merging",
        [
            (
                1.0,
                [
                    (
                        "1",
                        [(E, 0.9)],
                        {
                            "datasetId": "dataset1",
                            "collectionId": "collection1",
                            "sourceName": "source1",
                            "q": "Question 1",
                            "a": "Answer 1",
                            "chunkIndex": 5,
                        },
                    )
                ],
            ),
            (
                1.0,
                [
                    (
                        "1",
                        [(F, 0.8)],
                        {
                            "datasetId": "dataset2",
                            "collectionId": "collection2",
                            "sourceName": "source2",
                            "q": "Question 1 modified",
                            "a": "Answer 1 modified",
                            "chunkIndex": 10,
                        },
                    )
                ],
            ),
        ],
        {
            "length": 1,
            "fields": {
                "1": {
                    "dataset_id": "dataset1",
                    "collection_id": "collection1",
                    "source_name": "source1",
                    "q": "Question 1",
                    "a": "Answer 1",
                    "chunk_index": 5,
                }
            },
        },
    ),
    (
        "Additional edge cases > should handle large number of items",
        [(1.0, HUNDRED_A), (1.0, HUNDRED_B)],
        {"length": 100, "rrf_positive": True, "sorted": True},
    ),
    (
        "Edge weight tests > should handle zero weight",
        [(0.0, [one("1", E, 0.9)]), (1.0, [one("1", F, 0.7)])],
        {"length": 1, "rrf": {"1": 1 / 61}},
    ),
    (
        "Edge weight tests > should handle negative weight",
        [(-1.0, [one("1", E, 0.9)]), (1.0, [one("1", F, 0.7)])],
        {"length": 1, "rrf": {"1": 0.0}},
    ),
    (
        "Edge weight tests > should handle very small weight",
        [(0.001, [one("1", E, 0.9)]), (1.0, [one("1", F, 0.7)])],
        {"length": 1, "rrf": {"1": 0.001 / 61 + 1 / 61}},
    ),
]


def as_item(spec: Item) -> dict[str, Any]:
    id_, scores, *extra = spec
    item = {"id": id_, "q": f"Question {id_}", "a": f"Answer for Question {id_}", "datasetId": "dataset1"}
    item |= {"collectionId": "collection1", "sourceName": "source1", "sourceId": "source1", "chunkIndex": 0}
    item["score"] = [{"type": t, "value": v, "index": i} for i, (t, v) in enumerate(scores)]
    return item | (extra[0] if extra else {})


@pytest.mark.parametrize(("name", "lists", "expect"), CASES, ids=[case[0] for case in CASES])
def test_dataset_search_result_concat_matches_fastgpt(
    name: str, lists: list[tuple[float, list[Item]]], expect: dict[str, Any]
) -> None:
    inputs = [(weight, [as_item(spec) for spec in items]) for weight, items in lists]
    result = dataset_search_result_concat(inputs)
    by_id = {item.id: item for item in result}

    def rrf_of(item: Any) -> list[Any]:
        return [s for s in item.score if s.type == RRF]

    if "unchanged" in expect:  # one non-empty list comes back as it went in
        original = [as_item(spec) for spec in lists[expect["unchanged"]][1]]
        dumped = [item.model_dump(by_alias=True) for item in result]
        assert [
            {k: d[k] for k in item if k != "score"} for d, item in zip(dumped, original, strict=True)
        ] == [{k: v for k, v in item.items() if k != "score"} for item in original]
        assert [[s.model_dump() for s in item.score] for item in result] == [
            item["score"] for item in original
        ]
    if "length" in expect:
        assert len(result) == expect["length"]
    for id_, value in expect.get("rrf", {}).items():
        assert rrf_of(by_id[id_])[0].value == pytest.approx(value, abs=1e-6)
    for id_, count in expect.get("rrf_count", {}).items():
        assert len(rrf_of(by_id[id_])) == count
    for id_, index in expect.get("rrf_index", {}).items():
        assert rrf_of(by_id[id_])[0].index == index
    for id_, count in expect.get("score_len", {}).items():
        assert len(by_id[id_].score) == count
    for id_, types in expect.get("types", {}).items():
        assert {s.type for s in by_id[id_].score} == types
    for (id_, type_), value in expect.get("value", {}).items():
        assert by_id[id_].score_of(type_) == value
    if expect.get("sorted"):
        values = [rrf_of(item)[0].value for item in result]
        assert values == sorted(values, reverse=True)
    if expect.get("rrf_positive"):
        assert all(rrf_of(item)[0].value > 0 for item in result)
    if "first_in" in expect:
        assert result[0].id in expect["first_in"]
    if expect.get("rrf_index_is_position"):
        assert [rrf_of(item)[0].index for item in result] == list(range(len(result)))
    if expect.get("no_rrf"):
        assert not any(rrf_of(item) for item in result)
    for id_, fields in expect.get("fields", {}).items():
        assert {key: getattr(by_id[id_], key) for key in fields} == fields
