"""Knowledge that stays current: API file library collections, website datasets, and their re-sync.

A sync run (``source_syncs``) is a durable job (``dataset.sync``, queued in the same transaction as the
run). For each page or file it reads the text, hashes it and compares the hash with the one its
collection's chunks were made from: the same text costs nothing (no chunking, no embedding); new text
is chunked and embedded first, then swapped in for the old chunks in one transaction, so a search sees
the old version or the new one and a failure before the swap leaves the old one searchable. A page or
file that is gone (404 / 410, or no longer linked from a website that was crawled completely) loses its
collection. Each run counts what it saw (``seen``, ``added``, ``changed``, ``unchanged``, ``deleted``,
``failed``) and lists what failed and why.

A worker killed mid-run: the job's lease lapses, another worker runs it again, and what the first run
already swapped in is now unchanged, so the run resumes where it was.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fathom.datasets.ingest import IngestionService, is_permanent
from fathom.datasets.sync.api_library import ApiFileGone, ApiFileLibrary, ApiServer
from fathom.datasets.sync.crawl import WebsiteConfig, content_hash, crawl_site, normalise
from fathom.knowledge.parse.selector import web_page_text
from fathom.security import SecretBox
from fathom.store.knowledge import SqlChunkRepository, SqlDatasetRepository
from fathom.store.knowledge.sources import (
    CollectionSourceRecord,
    KnowledgeSourceRecord,
    SqlSourceRepository,
    SyncJob,
    SyncRecord,
)
from fathom.store.protocols import CollectionRecord, DatasetRecord, JobRecord, NotFound, PermanentJobFailure

SYNC_JOB_KIND = "dataset.sync"
DEFAULT_SYNC_INTERVAL_SECONDS = 86400
COLLECTION_NAME_MAX = 500

log = logging.getLogger("fathom.sync")


class NotSyncable(ValueError):
    """The collection (or knowledge base) has no source to sync from."""


class SourceGone(RuntimeError):
    """The page or file the collection was made from no longer exists."""


@dataclass
class SyncTally:
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("seen", "added", "changed", "unchanged", "deleted", "failed"), 0
        )
    )
    failures: list[dict[str, str]] = field(default_factory=list)

    def fail(self, source: str, error: str) -> None:
        self.counts["failed"] += 1
        self.failures.append({"source": source, "error": error})


def _message(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class SourceSyncService:
    def __init__(
        self,
        datasets: SqlDatasetRepository,
        chunks: SqlChunkRepository,
        sources: SqlSourceRepository,
        ingestion: IngestionService,
        secrets: SecretBox,
        http_client: Callable[..., Any],
        *,
        max_attempts: int = 3,
    ) -> None:
        self.datasets = datasets
        self.chunks = chunks
        self.sources = sources
        self.ingestion = ingestion
        self.secrets = secrets
        self.http_client = http_client
        self.job = SyncJob(SYNC_JOB_KIND, max_attempts)

    # -- configuring a knowledge base's source ------------------------------------------------------

    async def configure_api_dataset(
        self,
        dataset: DatasetRecord,
        server: ApiServer,
        *,
        auto_sync: bool,
        interval: int = DEFAULT_SYNC_INTERVAL_SECONDS,
    ) -> KnowledgeSourceRecord:
        """Make the dataset an API file library dataset; the authorization is stored encrypted."""
        config = {"baseUrl": server.base_url, "basePath": server.base_path}
        secret = self.secrets.encrypt(server.authorization) if server.authorization else None
        return await self.sources.configure(
            dataset.team_id,
            dataset.id,
            kind="apiDataset",
            config=config,
            secret=secret,
            auto_sync=auto_sync,
            sync_interval_seconds=interval,
        )

    async def configure_website(
        self,
        dataset: DatasetRecord,
        website: WebsiteConfig,
        *,
        auto_sync: bool,
        interval: int = DEFAULT_SYNC_INTERVAL_SECONDS,
    ) -> SyncRecord:
        """Make the dataset a website dataset and queue its first crawl."""
        await self.sources.configure(
            dataset.team_id,
            dataset.id,
            kind="websiteDataset",
            config=website.view(),
            secret=None,
            auto_sync=auto_sync,
            sync_interval_seconds=interval,
        )
        return await self.sources.create_sync(
            dataset.team_id, dataset.id, self.job, collection_id=None, trigger="create"
        )

    async def configure_schedule(
        self, dataset: DatasetRecord, *, auto_sync: bool | None, interval: int | None = None
    ) -> None:
        """Turn ``autoSync`` on or off (None: as it is) and set its interval (None: as it is), keeping the
        knowledge base's source; one without a source syncs its link and file collections."""
        current = await self.sources.get(dataset.id)
        await self.sources.configure(
            dataset.team_id,
            dataset.id,
            kind=current.kind if current else "dataset",
            config=current.config if current else {},
            secret=current.secret if current else None,
            auto_sync=auto_sync if auto_sync is not None else bool(current and current.auto_sync),
            sync_interval_seconds=interval
            or (current.sync_interval_seconds if current else DEFAULT_SYNC_INTERVAL_SECONDS),
        )

    async def source_of(self, dataset_id: str) -> KnowledgeSourceRecord | None:
        return await self.sources.get(dataset_id)

    def stored_authorization(self, source: KnowledgeSourceRecord) -> str | None:
        """The authorization an API file library's source keeps (decrypted; None: it keeps none)."""
        return self.secrets.decrypt(source.secret) if source.secret else None

    def library(self, source: KnowledgeSourceRecord | None) -> ApiFileLibrary:
        """The API file library of a dataset's source (:class:`NotSyncable` when it has none)."""
        if source is None or source.kind != "apiDataset":
            raise NotSyncable("the knowledge base is not an API file library (type apiDataset)")
        authorization = self.secrets.decrypt(source.secret) if source.secret else ""
        server = ApiServer(
            str(source.config.get("baseUrl", "")), authorization, str(source.config.get("basePath") or "")
        )
        return ApiFileLibrary(server, self.http_client)

    # -- making collections and queueing syncs ----------------------------------------------------------

    async def create_api_collection(
        self,
        dataset: DatasetRecord,
        api_file_id: str,
        name: str,
        *,
        chunk_settings: dict[str, Any],
        metadata: dict[str, Any],
        training_type: str = "chunk",
    ) -> tuple[str, SyncRecord]:
        """A collection of one file of the dataset's library, its first sync queued."""
        self.library(await self.sources.get(dataset.id))
        collection_id = await self.sources.create_collection(
            dataset.team_id,
            dataset.id,
            name[:COLLECTION_NAME_MAX],
            type="apiFile",
            kind="apiFile",
            ref=api_file_id,
            chunk_settings=chunk_settings,
            metadata=metadata,
            training_type=training_type,
        )
        sync = await self.sources.create_sync(
            dataset.team_id, dataset.id, self.job, collection_id=collection_id, trigger="create"
        )
        return collection_id, sync

    async def _collection_source(self, collection: CollectionRecord) -> CollectionSourceRecord:
        source = await self.sources.collection_source(collection.id)
        if source is not None:
            return source
        if collection.type == "link" and collection.raw_link:
            await self.sources.link_collection(
                collection.id, collection.dataset_id, kind="link", ref=collection.raw_link
            )
            found = await self.sources.collection_source(collection.id)
            assert found is not None
            return found
        raise NotSyncable(
            f"collection {collection.id} is a {collection.type} collection; only link, website page and "
            "API file collections sync from a source"
        )

    async def sync_collection(self, collection: CollectionRecord) -> str:
        """FastGPT's ``collection/sync``: read the source now; ``sameRaw`` when its text is the one the
        chunks hold (nothing else happens), else ``success`` with the re-chunking queued as a sync run."""
        source = await self._collection_source(collection)
        text = await self._read(collection, source)
        if source.content_hash == content_hash(text) and collection.status == "ready":
            await self.sources.mark_synced(collection.id)
            return "sameRaw"
        await self.sources.create_sync(
            collection.team_id, collection.dataset_id, self.job, collection_id=collection.id, trigger="manual"
        )
        return "success"

    async def sync_dataset(self, dataset: DatasetRecord, *, trigger: str = "manual") -> SyncRecord:
        """Queue a sync of the whole knowledge base (a crawl for a website dataset)."""
        source = await self.sources.get(dataset.id)
        synced = await self.sources.dataset_collection_sources(dataset.id)
        links, _ = await self.datasets.list_collections(dataset.team_id, dataset.id, limit=100_000)
        has_links = any(item.type == "link" and item.raw_link for item in links)
        if (source is None or source.kind != "websiteDataset") and not synced and not has_links:
            raise NotSyncable(
                f"knowledge base {dataset.id} has no website and no collection made from a link "
                "or an API file"
            )
        return await self.sources.create_sync(
            dataset.team_id, dataset.id, self.job, collection_id=None, trigger=trigger
        )

    async def history(
        self, dataset_id: str, collection_id: str | None = None, limit: int = 20
    ) -> list[SyncRecord]:
        return await self.sources.list_syncs(dataset_id, collection_id=collection_id, limit=limit)

    # -- reading sources --------------------------------------------------------------------------------

    async def _read(self, collection: CollectionRecord, source: CollectionSourceRecord) -> str:
        if source.kind == "apiFile":
            library = self.library(await self.sources.get(collection.dataset_id))
            try:
                return (await library.file_text(source.ref)).text
            except ApiFileGone as exc:
                raise SourceGone(str(exc)) from exc
        selector = collection.metadata.get("webPageSelector")
        async with self.http_client() as client:
            response = await client.get(source.ref)
        if response.status_code in (404, 410):
            raise SourceGone(f"{source.ref}: HTTP {response.status_code}")
        response.raise_for_status()
        return web_page_text(response.content, source.ref, selector if isinstance(selector, str) else None)

    async def _apply(
        self,
        collection: CollectionRecord,
        source: CollectionSourceRecord,
        text: str,
        tally: SyncTally,
        *,
        new: bool,
    ) -> None:
        """Swap in ``text``'s chunks unless the collection holds them already."""
        digest = content_hash(text)
        if not new and source.content_hash == digest and collection.status == "ready":
            await self.sources.mark_synced(collection.id)
            tally.counts["unchanged"] += 1
            return
        if collection.status != "ready":
            await self.datasets.set_collection_state(collection.id, "indexing")
        writes, model = await self.ingestion.embed_text(collection, text)
        rows = self.chunks.chunk_rows(
            collection.team_id, collection.dataset_id, collection.id, writes, model=model
        )
        await self.sources.replace_chunks(
            collection.id, rows, content_hash=digest, kind=source.kind, ref=source.ref
        )
        tally.counts["added" if new else "changed"] += 1

    # -- the job ----------------------------------------------------------------------------------------

    async def run(self, job: JobRecord) -> dict[str, Any]:
        """The ``dataset.sync`` job handler."""
        try:
            sync = await self.sources.start_sync(str(job.payload["syncId"]))
        except NotFound:  # its knowledge base was deleted meanwhile (the run went with it)
            return {"syncId": job.payload.get("syncId"), "skipped": "the knowledge base was deleted"}
        tally = SyncTally()
        final_attempt = job.attempts >= job.max_attempts
        try:
            if sync.collection_id is not None:
                await self._run_collection(sync, tally)
            else:
                await self._run_dataset(sync, tally)
        except Exception as exc:
            message = _message(exc)
            permanent = is_permanent(exc) or isinstance(exc, (NotSyncable, NotFound))
            if permanent or final_attempt:
                await self.sources.update_sync(
                    sync.id, counts=tally.counts, failures=tally.failures, status="failed", error=message
                )
                raise PermanentJobFailure(message) from exc
            await self.sources.update_sync(
                sync.id,
                counts=tally.counts,
                failures=tally.failures,
                status="queued",
                error=f"retrying after: {message}",
            )
            raise
        await self.sources.update_sync(sync.id, counts=tally.counts, failures=tally.failures, status="done")
        return {"syncId": sync.id, **tally.counts}

    async def _run_collection(self, sync: SyncRecord, tally: SyncTally) -> None:
        assert sync.collection_id is not None
        collection = await self.datasets.get_collection(None, sync.collection_id)
        source = await self._collection_source(collection)
        tally.counts["seen"] = 1
        first = collection.status != "ready"
        if first:
            await self.datasets.set_collection_state(collection.id, "parsing")
        try:
            text = await self._read(collection, source)
            await self._apply(collection, source, text, tally, new=first)
        except SourceGone:
            await self.sources.delete_collection(collection.id)
            tally.counts["deleted"] += 1
        except Exception as exc:
            tally.fail(source.ref, _message(exc))
            if first:
                await self.datasets.set_collection_state(collection.id, "error", error=_message(exc))
            else:  # the previous version stays searchable
                await self.sources.mark_synced(collection.id, error=_message(exc))
            raise

    async def _run_dataset(self, sync: SyncRecord, tally: SyncTally) -> None:
        source = await self.sources.get(sync.dataset_id)
        if source is not None and source.kind == "websiteDataset":
            await self._crawl(sync, source, tally)
            return
        await self._link_collections(sync)
        for item in await self.sources.dataset_collection_sources(sync.dataset_id):
            tally.counts["seen"] += 1
            collection = await self.datasets.get_collection(None, item.collection_id)
            try:
                text = await self._read(collection, item)
                await self._apply(collection, item, text, tally, new=False)
            except SourceGone:
                await self.sources.delete_collection(collection.id)
                tally.counts["deleted"] += 1
            except Exception as exc:
                tally.fail(item.ref, _message(exc))
                await self.sources.mark_synced(collection.id, error=_message(exc))
            await self.sources.update_sync(sync.id, counts=tally.counts, failures=tally.failures)

    async def _link_collections(self, sync: SyncRecord) -> None:
        """Give the knowledge base's link collections made by ``create/link`` a source row to sync from."""
        known = {
            item.collection_id for item in await self.sources.dataset_collection_sources(sync.dataset_id)
        }
        collections, _ = await self.datasets.list_collections(sync.team_id, sync.dataset_id, limit=100_000)
        for collection in collections:
            if collection.id not in known and collection.type == "link" and collection.raw_link:
                await self.sources.link_collection(
                    collection.id, collection.dataset_id, kind="link", ref=collection.raw_link
                )

    async def _crawl(self, sync: SyncRecord, source: KnowledgeSourceRecord, tally: SyncTally) -> None:
        config = _website_config(source.config)
        dataset = await self.datasets.get_dataset(source.team_id, source.dataset_id)
        crawl = await crawl_site(config, self.http_client)
        existing = {
            item.ref: item
            for item in await self.sources.dataset_collection_sources(dataset.id)
            if item.kind == "page"
        }
        tally.counts["seen"] = len(crawl.pages)
        metadata = {"webPageSelector": config.selector} if config.selector else {}
        for page in crawl.pages:
            item = existing.get(page.url)
            try:
                if item is None:
                    collection_id = await self.sources.create_collection(
                        dataset.team_id,
                        dataset.id,
                        (page.title or page.url)[:COLLECTION_NAME_MAX],
                        type="link",
                        kind="page",
                        ref=page.url,
                        raw_link=page.url,
                        metadata=metadata,
                    )
                    item = await self.sources.collection_source(collection_id)
                    assert item is not None
                collection = await self.datasets.get_collection(None, item.collection_id)
                await self._apply(collection, item, page.text, tally, new=item.content_hash is None)
            except Exception as exc:
                tally.fail(page.url, _message(exc))
                if item is not None:
                    await self.sources.mark_synced(item.collection_id, error=_message(exc))
            await self.sources.update_sync(sync.id, counts=tally.counts, failures=tally.failures)
        for url, error in crawl.failures.items():
            tally.fail(url, error)
            if url in existing:
                await self.sources.mark_synced(existing[url].collection_id, error=error)
        seen = {page.url for page in crawl.pages}
        # a page that is gone goes; one merely not reached goes only when the crawl was whole
        whole = crawl.complete and not crawl.failures
        for url, item in existing.items():
            if url in seen or url in crawl.failures:
                continue
            if url in crawl.gone or whole:
                await self.sources.delete_collection(item.collection_id)
                tally.counts["deleted"] += 1


def _website_config(config: dict[str, Any]) -> WebsiteConfig:
    """A stored ``websiteConfig`` as the crawler's settings."""
    return WebsiteConfig(
        url=normalise(str(config["url"])),
        selector=str(config.get("selector") or "") or None,
        prefix=str(config.get("prefix") or "") or None,
        max_depth=int(config.get("maxDepth", 3)),
        max_pages=int(config.get("maxPages", 100)),
    )
