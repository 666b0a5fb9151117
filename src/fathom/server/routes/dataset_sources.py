"""What ``dataset/create`` reads to give a knowledge base an external source: FastGPT's ``apiServer`` (or
``apiDatasetServer.apiServer``) for an ``apiDataset``, ``websiteConfig`` for a ``websiteDataset``, and
``autoSync``; and what ``dataset/detail`` shows of it (the authorization never)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from pydantic import Field, field_validator

from fathom.datasets.collection_service import check_web_page_selector
from fathom.datasets.errors import InvalidDatasetRequest
from fathom.datasets.records import DatasetRecord
from fathom.datasets.sync import ApiServer, WebsiteConfig
from fathom.server.errors import ApiError
from fathom.server.routes.common import iso
from fathom.server.routes.knowledge_routing import knowledge_bases
from fathom.server.typed import BLANK_IS_NONE, ApiModel

SYNC_INTERVAL_MIN = 60


def _http_url(value: str, field: str) -> str:
    value = value.strip()
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"{field} must be an http:// or https:// URL")
    return value


class ApiServerIn(ApiModel):
    """FastGPT's ``apiServer``: the file library's base URL and the token sent as ``Bearer``."""

    baseUrl: str = Field(examples=["https://files.example.com/api"])
    authorization: Annotated[str | None, BLANK_IS_NONE] = Field(
        None, description="Sent as Bearer; stored encrypted"
    )
    basePath: Annotated[str | None, BLANK_IS_NONE] = Field(None, description="The root folder's id")

    @field_validator("baseUrl")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value, "baseUrl")


class ApiDatasetServerIn(ApiModel):
    apiServer: ApiServerIn | None = None


class WebsiteConfigIn(ApiModel):
    """FastGPT's ``websiteConfig`` (``url``, ``selector``) and Fathom's crawl limits."""

    url: str = Field(examples=["https://docs.example.com/guide/"])
    selector: Annotated[str | None, BLANK_IS_NONE] = Field(None, description="CSS selector of the content")
    prefix: Annotated[str | None, BLANK_IS_NONE] = Field(
        None,
        description="Only pages whose path starts with it (default: the whole site)",
        examples=["/guide/"],
    )
    maxDepth: Annotated[int | None, BLANK_IS_NONE] = Field(None, ge=0, le=10, description="Default 3")
    maxPages: Annotated[int | None, BLANK_IS_NONE] = Field(None, ge=1, le=1000, description="Default 100")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value, "url")

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError("prefix must be a path starting with /")
        return value

    @field_validator("selector")
    @classmethod
    def _selector(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                check_web_page_selector(value, "")
            except InvalidDatasetRequest as exc:
                raise ValueError(str(exc)) from None
        return value

    def config(self) -> WebsiteConfig:
        return WebsiteConfig(
            url=self.url,
            selector=self.selector,
            prefix=self.prefix,
            max_depth=3 if self.maxDepth is None else self.maxDepth,
            max_pages=self.maxPages or 100,
        )


class SourceFields(ApiModel):
    """The source fields of ``dataset/create``."""

    apiServer: ApiServerIn | None = None
    apiDatasetServer: ApiDatasetServerIn | None = None
    websiteConfig: WebsiteConfigIn | None = None
    autoSync: Annotated[bool | None, BLANK_IS_NONE] = Field(
        None, description="Re-sync the knowledge base's pages and files on a schedule"
    )
    autoSyncInterval: Annotated[int | None, BLANK_IS_NONE] = Field(
        None, ge=SYNC_INTERVAL_MIN, description="Seconds between scheduled syncs (Fathom's; default one day)"
    )

    def api_server(self) -> ApiServerIn | None:
        return self.apiServer or (self.apiDatasetServer.apiServer if self.apiDatasetServer else None)

    def check_source(self, dataset_type: str | None) -> None:
        """Refuse a source that does not fit the type, before anything is created."""
        if dataset_type == "apiDataset" and self.api_server() is None:
            raise ApiError(
                400, "invalidParams", "apiServer: required for type apiDataset ({baseUrl, authorization})"
            )
        if dataset_type == "websiteDataset" and self.websiteConfig is None:
            raise ApiError(
                400, "invalidParams", "websiteConfig: required for type websiteDataset ({url, selector?})"
            )
        if dataset_type not in ("apiDataset",) and self.api_server() is not None:
            raise ApiError(400, "invalidParams", "apiServer: only a dataset of type apiDataset has one")
        if dataset_type != "websiteDataset" and self.websiteConfig is not None:
            raise ApiError(
                400, "invalidParams", "websiteConfig: only a dataset of type websiteDataset has one"
            )
        if dataset_type == "folder" and self.autoSync:
            raise ApiError(400, "invalidParams", "autoSync: a folder has nothing to sync")


async def configure_source(
    request: Request, dataset: DatasetRecord, payload: SourceFields, dataset_type: str
) -> None:
    """Store the new dataset's source (and queue a website's first crawl)."""
    syncs = knowledge_bases(request).sources
    auto_sync = bool(payload.autoSync)
    interval = payload.autoSyncInterval or 86400
    server = payload.api_server()
    if dataset_type == "apiDataset" and server is not None:
        await syncs.configure_api_dataset(
            dataset,
            ApiServer(server.baseUrl, server.authorization or "", server.basePath or ""),
            auto_sync=auto_sync,
            interval=interval,
        )
    elif dataset_type == "websiteDataset" and payload.websiteConfig is not None:
        await syncs.configure_website(
            dataset, payload.websiteConfig.config(), auto_sync=auto_sync, interval=interval
        )
    elif payload.autoSync is not None:
        await syncs.configure_schedule(dataset, auto_sync=auto_sync, interval=interval)


async def update_source(request: Request, dataset: DatasetRecord, payload: SourceFields) -> None:
    """``dataset/update``'s source fields: a new ``apiServer`` (an ``apiDataset``'s), a new
    ``websiteConfig`` (a ``websiteDataset``'s: crawled again at once), ``autoSync`` and its interval."""
    syncs = knowledge_bases(request).sources
    current = await syncs.source_of(dataset.id)
    kind = current.kind if current else "dataset"
    server = payload.api_server()
    if server is not None and kind != "apiDataset":
        raise ApiError(400, "invalidParams", "apiServer: only a dataset of type apiDataset has one")
    if payload.websiteConfig is not None and kind != "websiteDataset":
        raise ApiError(400, "invalidParams", "websiteConfig: only a dataset of type websiteDataset has one")
    if dataset.type == "folder" and payload.autoSync:
        raise ApiError(400, "invalidParams", "autoSync: a folder has nothing to sync")
    auto_sync = payload.autoSync if payload.autoSync is not None else bool(current and current.auto_sync)
    interval = payload.autoSyncInterval or (current.sync_interval_seconds if current else 86400)
    if server is not None:
        authorization = server.authorization
        if authorization is None and current is not None:  # kept when not sent
            authorization = syncs.stored_authorization(current)
        await syncs.configure_api_dataset(
            dataset,
            ApiServer(server.baseUrl, authorization or "", server.basePath or ""),
            auto_sync=auto_sync,
            interval=interval,
        )
    elif payload.websiteConfig is not None:
        await syncs.configure_website(
            dataset, payload.websiteConfig.config(), auto_sync=auto_sync, interval=interval
        )
    elif payload.autoSync is not None or payload.autoSyncInterval is not None:
        await syncs.configure_schedule(dataset, auto_sync=payload.autoSync, interval=payload.autoSyncInterval)


async def source_view(request: Request, dataset_id: str) -> dict[str, Any]:
    """``dataset/detail``'s source fields: ``type``, ``apiServer`` (no authorization), ``websiteConfig``,
    ``autoSync`` and Fathom's ``nextSyncTime``; empty for a dataset without a source."""
    source = await knowledge_bases(request).sources.source_of(dataset_id)
    if source is None:
        return {}
    view: dict[str, Any] = {"autoSync": source.auto_sync, "nextSyncTime": iso(source.next_sync_at)}
    if source.kind in ("apiDataset", "websiteDataset"):
        view["type"] = source.kind
    if source.kind == "apiDataset":
        server = {"baseUrl": source.config.get("baseUrl"), "basePath": source.config.get("basePath") or ""}
        view["apiServer"] = server
        view["apiDatasetServer"] = {"apiServer": server}
    if source.kind == "websiteDataset":
        view["websiteConfig"] = source.config
    return view
