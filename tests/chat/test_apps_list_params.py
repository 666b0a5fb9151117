"""App list filters that are not strings are a 400 naming the field, not a server error (found by fuzzing)."""

from __future__ import annotations

import pytest
from chat_support import ChatServer


@pytest.mark.parametrize("kind", [{"simple": 1}, [{"x": 1}], [["simple"]], 3])
def test_a_non_string_type_filter_is_a_clear_400(chat_server: ChatServer, kind: object) -> None:
    with chat_server.client() as client:
        response = client.post("/api/core/app/list", json={"type": kind})
    assert response.status_code == 400
    assert response.json()["statusText"] == "invalidParams" and "type" in response.json()["message"]


def test_string_and_list_type_filters_still_work(chat_server: ChatServer) -> None:
    with chat_server.client() as client:
        assert client.post("/api/core/app/list", json={"type": "simple"}).status_code == 200
        assert client.post("/api/core/app/list", json={"type": ["simple", "advanced"]}).status_code == 200
