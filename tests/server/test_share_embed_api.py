"""The embeddable chat over HTTP: a share link's ``allowedOrigins`` (checked as http(s) origins, a 400
naming the field otherwise) decide the frame headers of its page ``/chat/share?shareId=…``; a link
without any, and an unknown link, may be framed by Fathom's own pages only; ``/js/widget.js`` is served."""

from __future__ import annotations

from typing import Any

import pytest
from live_support import LiveServer, ok

CREATE, LIST, UPDATE = (f"/api/support/outLink/{verb}" for verb in ("create", "list", "update"))


@pytest.fixture(scope="module")
def app_id(module_live_server: LiveServer) -> str:
    with module_live_server.client(module_live_server.admin_key) as owner:
        body = {"name": "Help desk", "type": "simple", "simpleConfig": {"model": "any-model"}}
        return str(ok(owner.post("/api/core/app/create", json=body)))


def link(server: LiveServer, app_id: str, **fields: Any) -> dict[str, Any]:
    with server.client(server.admin_key) as owner:
        share_id = ok(owner.post(CREATE, json={"appId": app_id, "name": "Website", **fields}))
        links = ok(owner.get(LIST, params={"appId": app_id}))
    return dict(next(item for item in links if item["shareId"] == share_id))


def page_headers(server: LiveServer, share_id: str) -> dict[str, str]:
    with server.client() as visitor:
        response = visitor.get("/chat/share", params={"shareId": share_id, "embed": "1"})
    assert response.status_code == 200
    assert "text/html" in response.headers["content-type"]
    return dict(response.headers)


def test_a_link_with_allowed_origins_may_be_framed_by_them_and_by_fathom(
    module_live_server: LiveServer, app_id: str
) -> None:
    origins = ["https://shop.example.com", "http://127.0.0.1:8123/"]
    made = link(module_live_server, app_id, allowedOrigins=origins)
    assert made["allowedOrigins"] == ["https://shop.example.com", "http://127.0.0.1:8123"]
    headers = page_headers(module_live_server, made["shareId"])
    assert headers["content-security-policy"] == (
        "frame-ancestors 'self' https://shop.example.com http://127.0.0.1:8123"
    )
    assert "x-frame-options" not in headers  # it would forbid the allowed sites in older browsers


def test_a_link_without_allowed_origins_is_framed_by_fathom_only(
    module_live_server: LiveServer, app_id: str
) -> None:
    made = link(module_live_server, app_id)
    assert made["allowedOrigins"] == []
    headers = page_headers(module_live_server, made["shareId"])
    assert headers["content-security-policy"] == "frame-ancestors 'self'"
    assert headers["x-frame-options"] == "SAMEORIGIN"
    for unknown in (
        page_headers(module_live_server, "nosuchlink"),
        dict(module_live_server.client().get("/apps").headers),
    ):
        assert unknown["content-security-policy"] == "frame-ancestors 'self'"  # nor the console's pages


def test_updating_allowed_origins_changes_the_header_and_an_empty_list_takes_them_back(
    module_live_server: LiveServer, app_id: str
) -> None:
    made = link(module_live_server, app_id, allowedOrigins=["https://a.example"])
    with module_live_server.client(module_live_server.admin_key) as owner:
        ok(owner.post(UPDATE, json={"_id": made["_id"], "allowedOrigins": ["https://b.example:8443"]}))
        csp = page_headers(module_live_server, made["shareId"])["content-security-policy"]
        assert csp == "frame-ancestors 'self' https://b.example:8443"
        ok(owner.post(UPDATE, json={"_id": made["_id"], "name": "Renamed"}))  # origins kept
        csp = page_headers(module_live_server, made["shareId"])["content-security-policy"]
        assert csp == "frame-ancestors 'self' https://b.example:8443"
        ok(owner.post(UPDATE, json={"_id": made["_id"], "allowedOrigins": []}))
    assert page_headers(module_live_server, made["shareId"])["x-frame-options"] == "SAMEORIGIN"


@pytest.mark.parametrize(
    "origins, field",
    [
        (["https://ok.example", "https://shop.example.com/checkout"], "allowedOrigins[1]"),
        (["ftp://files.example"], "allowedOrigins[0]"),
        (["example.com"], "allowedOrigins[0]"),
        (["https://*.example.com"], "allowedOrigins[0]"),
        (["https://shop.example.com; script-src *"], "allowedOrigins[0]"),
        (["https://user@shop.example.com"], "allowedOrigins[0]"),
        (["https://shop.example.com:99999"], "allowedOrigins[0]"),
        (["https://x.example"] * 51, "allowedOrigins"),
    ],
)
def test_an_allowed_origin_that_is_not_an_http_origin_is_a_400_naming_the_field(
    module_live_server: LiveServer, app_id: str, origins: list[str], field: str
) -> None:
    with module_live_server.client(module_live_server.admin_key) as owner:
        response = owner.post(CREATE, json={"appId": app_id, "name": "Bad", "allowedOrigins": origins})
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["statusText"] == "invalidParams"
    assert body["message"].startswith(field), body


def test_the_widget_script_is_served(module_live_server: LiveServer) -> None:
    with module_live_server.client() as anyone:
        response = anyone.get("/js/widget.js")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert "data-share-id" in response.text and "/chat/share?" in response.text
