"""The HTTP surface of the foundation: health, API-key auth, the error envelope, body size limit, docs."""

from __future__ import annotations

from typing import Any

import pytest


def test_health_reports_version_database_and_migrations(live_server: Any) -> None:
    with live_server.client() as client:
        response = client.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["code"] == 200 and body["statusText"] == "" and body["message"] == ""
    data = body["data"]
    assert data["status"] == "ok" and data["database"]["status"] == "ok"
    assert data["migrations"]["upToDate"] is True and data["version"]


def test_valid_key_identifies_team_and_member(live_server: Any) -> None:
    with live_server.client(live_server.admin_key) as client:
        response = client.get("/api/v1/whoami")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["teamId"] == live_server.boot.team_id and data["role"] == "owner"


@pytest.mark.parametrize(
    ("header", "status_text", "fragment"),
    [
        (None, "unAuthorization", "Missing API key"),
        ("Bearer", "unAuthorization", "Malformed Authorization header"),
        ("Token abc", "unAuthorization", "Malformed Authorization header"),
        ("fathom-abc", "unAuthorization", "Malformed Authorization header"),
        ("Bearer a-b-c-d", "unAuthorization", "Malformed API key"),
        ("Bearer fathom-doesnotexist", "unAuthApiKey", "Invalid API key"),
    ],
)
def test_missing_or_wrong_key_is_401_with_the_envelope(
    live_server: Any, header: str | None, status_text: str, fragment: str
) -> None:
    headers = {"Authorization": header} if header else {}
    with live_server.client() as client:
        response = client.get("/api/v1/whoami", headers=headers)
    assert response.status_code == 401
    body = response.json()
    assert body["statusText"] == status_text and fragment in body["message"] and body["data"] is None
    assert body["code"] == {"unAuthorization": 403, "unAuthApiKey": 514}[status_text]


def test_legacy_key_with_app_suffix_supplies_the_app(live_server: Any) -> None:
    with live_server.client() as client:
        response = client.get(
            "/api/v1/whoami", headers={"Authorization": f"Bearer {live_server.admin_key}-abc123"}
        )
    assert response.status_code == 200 and response.json()["data"]["appId"] == "abc123"


def test_oversized_body_is_413_with_the_envelope(live_server: Any) -> None:
    with live_server.client(live_server.admin_key) as client:
        declared = client.post("/api/v1/whoami", content=b"x" * (65 * 1024))
        streamed = client.post("/api/v1/whoami", content=iter([b"x" * 40_000, b"y" * 40_000]))
    for response in (declared, streamed):
        assert response.status_code == 413
        body = response.json()
        assert body["statusText"] == "payloadTooLarge" and "FATHOM_MAX_BODY_BYTES" in body["message"]


def test_unknown_route_is_404_with_the_envelope(live_server: Any) -> None:
    with live_server.client() as client:
        response = client.get("/api/nope")
    assert response.status_code == 404 and response.json()["statusText"] == "notFound"


def test_openapi_docs_are_served(live_server: Any) -> None:
    with live_server.client() as client:
        assert client.get("/docs").status_code == 200
        spec = client.get("/openapi.json").json()
    assert "/api/health" in spec["paths"]


def test_cors_preflight_succeeds(live_server: Any) -> None:
    with live_server.client() as client:
        response = client.options(
            "/api/health", headers={"Origin": "http://example.test", "Access-Control-Request-Method": "GET"}
        )
    assert response.status_code == 200 and response.headers["access-control-allow-origin"] in {
        "*",
        "http://example.test",
    }
