"""FastGPT's API file library (``apiDataset``): an HTTP service the team runs, called for a file list, a
file's content (or a preview URL to read it from).

The protocol, as FastGPT's docs and client give it (``Authorization: Bearer <authorization>``):

- ``POST {baseUrl}/v1/file/list`` ``{parentId, searchKey}`` → ``{success, message, data: [{id, parentId,
  name, type: "file"|"folder", updateTime, createTime, hasChild?}]}``;
- ``GET {baseUrl}/v1/file/content?id=`` → ``data: {title?, content}`` or ``data: {title?, previewUrl}``.

FastGPT's ``GET {baseUrl}/v1/file/read?id=`` (a URL to open the file at, for its console) is not called.

Every request (and the preview URL's) goes through the HTTP client the caller passes: the egress guard.
A file the service answers 404 for is gone (:class:`ApiFileGone`): a sync removes its collection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from fathom.knowledge.parse import SUPPORTED_FORMATS, detect_format, parse_document
from fathom.knowledge.parse.selector import web_page_text


class ApiLibraryError(RuntimeError):
    """The file library answered something other than FastGPT's protocol, or ``success: false``."""


class ApiFileGone(ApiLibraryError):
    """The file library does not know the file any more (HTTP 404)."""


@dataclass(frozen=True)
class ApiServer:
    """A dataset's ``apiServer`` settings: the service's base URL and the token sent as ``Bearer``."""

    base_url: str
    authorization: str = ""
    base_path: str = ""


@dataclass(frozen=True)
class ApiFile:
    id: str
    parent_id: str | None
    name: str
    type: str
    update_time: Any
    create_time: Any
    has_child: bool

    def view(self) -> dict[str, Any]:
        """FastGPT's ``APIFileItem``."""
        return {
            "id": self.id,
            "rawId": self.id,
            "parentId": self.parent_id,
            "name": self.name,
            "type": self.type,
            "updateTime": self.update_time,
            "createTime": self.create_time,
            "hasChild": self.has_child,
        }


@dataclass(frozen=True)
class ApiFileText:
    title: str | None
    text: str


def _data_of(response: httpx.Response, what: str) -> Any:
    if response.status_code == 404:
        raise ApiFileGone(f"API file library: {what}: not found (404)")
    response.raise_for_status()
    try:
        body = response.json()
    except ValueError:
        raise ApiLibraryError(f"API file library: {what}: the answer is not JSON") from None
    if not isinstance(body, dict) or "data" not in body and "success" not in body:
        raise ApiLibraryError(f"API file library: {what}: expected {{success, data}}, got {str(body)[:200]}")
    if body.get("success") is False:
        message = body.get("message") or "success: false"
        raise ApiLibraryError(f"API file library: {what}: {message}")
    return body.get("data")


class ApiFileLibrary:
    """Calls one team's file library through ``client_factory`` (the egress guard's ``client``)."""

    def __init__(self, server: ApiServer, client_factory: Callable[..., Any]) -> None:
        self.server = server
        self.client_factory = client_factory

    def _client(self) -> Any:
        headers = (
            {"Authorization": f"Bearer {self.server.authorization}"} if self.server.authorization else {}
        )
        return self.client_factory(headers=headers)

    def _url(self, path: str) -> str:
        return self.server.base_url.rstrip("/") + path

    async def list_files(self, parent_id: str | None = None, search_key: str = "") -> list[ApiFile]:
        """The files and folders under ``parent_id`` (the root, or the server's ``basePath``, when None)."""
        body: dict[str, Any] = {"parentId": parent_id or self.server.base_path or None}
        if search_key:
            body["searchKey"] = search_key
        async with self._client() as client:
            data = _data_of(await client.post(self._url("/v1/file/list"), json=body), "file list")
        if not isinstance(data, list):
            raise ApiLibraryError("API file library: file list: data is not a list")
        files: list[ApiFile] = []
        for item in data:
            if not isinstance(item, dict) or not item.get("id") or not item.get("name") or "type" not in item:
                raise ApiLibraryError(
                    f"API file library: file list: an item lacks id, name or type: {item!r}"
                )
            kind = str(item["type"])
            files.append(
                ApiFile(
                    id=str(item["id"]),
                    parent_id=None if item.get("parentId") in (None, "") else str(item["parentId"]),
                    name=str(item["name"]),
                    type=kind,
                    update_time=item.get("updateTime"),
                    create_time=item.get("createTime"),
                    has_child=bool(item.get("hasChild", kind == "folder")),
                )
            )
        return files

    async def file_text(self, file_id: str) -> ApiFileText:
        """A file's text: its ``content``, or the document at its ``previewUrl`` parsed by its type."""
        async with self._client() as client:
            response = await client.get(self._url("/v1/file/content"), params={"id": file_id})
            data = _data_of(response, f"file {file_id}")
        if not isinstance(data, dict):
            raise ApiLibraryError(f"API file library: file {file_id}: data is not an object")
        title = data.get("title") if isinstance(data.get("title"), str) else None
        content = data.get("content")
        if isinstance(content, str) and content:
            return ApiFileText(title, content)
        preview = data.get("previewUrl")
        if isinstance(preview, str) and preview:
            return ApiFileText(title, await self._read_preview(preview, title or file_id))
        raise ApiLibraryError(f"API file library: file {file_id}: content or previewUrl is required")

    async def _read_preview(self, url: str, name: str) -> str:
        # the preview URL is the library's, not its host's: no Authorization header goes with it
        async with self.client_factory() as client:
            response = await client.get(url)
            response.raise_for_status()
        fmt = detect_format(name)
        if fmt not in SUPPORTED_FORMATS:
            content_type = response.headers.get("content-type", "")
            fmt = "html" if "html" in content_type else "pdf" if "pdf" in content_type else "txt"
        if fmt == "html":
            return web_page_text(response.content, url)
        return parse_document(response.content, name, fmt=fmt).text
