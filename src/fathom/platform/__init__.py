"""The platform: settings, database, repositories and workers, built once at start and passed down."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from fathom.chat import ChatApplication
from fathom.chat.application import ChatStores
from fathom.chat.chat_files import ChatFiles
from fathom.chat.run_files import RunFilePolicy
from fathom.config import ConfigError, Settings
from fathom.datasets import (
    DatasetSearchService,
    EmbedderResolver,
    IngestionService,
    KnowledgeBases,
    ReembedService,
    RerankerResolver,
)
from fathom.datasets.chunk_preview import ChunkPreviewer
from fathom.datasets.collection_service import CollectionService
from fathom.datasets.dataset_service import DatasetService
from fathom.datasets.ingest import INGEST_JOB_KIND
from fathom.datasets.model_training import ModelTrainer
from fathom.datasets.reembed import REEMBED_JOB_KIND
from fathom.datasets.rows import DataRowService
from fathom.datasets.search_test import SearchTester
from fathom.datasets.sync import SYNC_JOB_KIND, SourceSyncService, SyncScheduler
from fathom.datasets.tags import TagService
from fathom.datasets.training_service import TrainingService
from fathom.knowledge.tokenize import segment_for_index
from fathom.llm import ModelRegistry, count_tokens, load_model_registry
from fathom.platform.health import DatabaseHealth, database_health
from fathom.platform.model_catalog import ListedModel, chat_model_ids, listed_models
from fathom.platform.team_admin import TeamAdmin
from fathom.sandbox import SandboxRunner, client_factory_request_handler
from fathom.security import EgressGuard, EgressPolicy, SecretBox
from fathom.security.accounts import AccountError, AccountService, SignInLimits, password_hasher
from fathom.store import migrate
from fathom.store.db import Database
from fathom.store.files import LocalFileStore
from fathom.store.knowledge import (
    SqlChunkRepository,
    SqlDatasetRepository,
    SqlFullTextIndex,
    SqlTagRepository,
    SqlVectorIndex,
)
from fathom.store.knowledge.training import SqlTrainingRepository
from fathom.store.pg_requirements import check_postgres_requirements
from fathom.store.protocols import JobRecord
from fathom.store.repositories import (
    SqlAccountRepository,
    SqlApiKeyRepository,
    SqlAppRepository,
    SqlChatRepository,
    SqlJobQueue,
    SqlTeamRepository,
    SqlUsageRepository,
)
from fathom.store.repositories.app_owners import SqlAppOwnerRepository
from fathom.store.repositories.chat_logs import SqlChatLogRepository
from fathom.store.repositories.chat_turns import SqlChatTurnRepository
from fathom.store.repositories.rate_hits import SqlUploadHits
from fathom.store.repositories.share_links import SqlShareLinkRepository
from fathom.worker import JobHandler, JobWorker

if TYPE_CHECKING:
    from fathom.store.pg_job_notices import JobNoticeListener

log = logging.getLogger("fathom")

ROOT_TEAM_NAME = "Default team"
ROOT_MEMBER_NAME = "admin"


@dataclass
class Bootstrap:
    team_id: str
    member_id: str
    admin_key: str | None  # only when it was created just now
    demo_app_id: str | None = None  # only when the demo was seeded just now
    root_password: str | None = None  # only when it was generated just now


@dataclass
class Platform:
    settings: Settings
    db: Database
    secret_key: str
    models: ModelRegistry | None = None
    teams: SqlTeamRepository = field(init=False)
    api_keys: SqlApiKeyRepository = field(init=False)
    jobs: SqlJobQueue = field(init=False)
    apps: SqlAppRepository = field(init=False)
    chats: SqlChatRepository = field(init=False)
    usage: SqlUsageRepository = field(init=False)
    datasets: SqlDatasetRepository = field(init=False)
    tags: SqlTagRepository = field(init=False)
    chunks: SqlChunkRepository = field(init=False)
    files: LocalFileStore = field(init=False)
    upload_hits: SqlUploadHits = field(init=False)
    chat_files: ChatFiles = field(init=False)
    egress: EgressGuard = field(init=False)
    secrets: SecretBox = field(init=False)
    embedders: EmbedderResolver = field(init=False)
    rerankers: RerankerResolver = field(init=False)
    ingestion: IngestionService = field(init=False)
    training: SqlTrainingRepository = field(init=False)
    search: DatasetSearchService = field(init=False)
    chat: ChatApplication = field(init=False)
    accounts: AccountService = field(init=False)
    team_admin: TeamAdmin = field(init=False)
    _worker_tasks: list[asyncio.Task[None]] = field(default_factory=list, init=False)
    _stop: asyncio.Event = field(default_factory=asyncio.Event, init=False)

    def __post_init__(self) -> None:
        self.teams = SqlTeamRepository(self.db)
        self.api_keys = SqlApiKeyRepository(self.db)
        self.jobs = SqlJobQueue(self.db)
        self.apps = SqlAppRepository(self.db)
        self.chats = SqlChatRepository(self.db)
        self.usage = SqlUsageRepository(self.db)
        self.datasets = SqlDatasetRepository(self.db)
        self.tags = SqlTagRepository(self.db)
        self.chunks = SqlChunkRepository(self.db, segment_for_index)
        self.files = LocalFileStore(
            self.db, self.settings.data_dir / "files", team_quota_bytes=self.settings.team_storage_quota_bytes
        )
        self.upload_hits = SqlUploadHits(self.db)
        self.egress = EgressGuard(EgressPolicy.from_settings(self.settings))
        self.secrets = SecretBox(self.secret_key or "fathom-unconfigured-secret-key")
        self.accounts = AccountService(
            SqlAccountRepository(self.db),
            session_ttl=timedelta(hours=self.settings.session_hours),
            limits=SignInLimits(
                per_user=self.settings.signin_max_failures_per_user,
                per_ip=self.settings.signin_max_failures_per_ip,
                window_seconds=self.settings.signin_window_seconds,
            ),
            hasher=password_hasher(
                self.settings.password_hash_memory_kib, self.settings.password_hash_passes
            ),
        )
        self.team_admin = TeamAdmin(
            self.teams, self.api_keys, self.apps, self.usage, self.accounts, self.datasets
        )
        self.embedders = EmbedderResolver(self.models)
        self.rerankers = RerankerResolver(self.models)
        self.training = SqlTrainingRepository(self.db)
        self.ingestion = IngestionService(
            self.datasets,
            self.chunks,
            self.jobs,
            self.embedders,
            self.files,
            self.egress.client,
            max_attempts=self.settings.job_max_attempts,
            usage=self.usage,
            trainer=ModelTrainer(
                self.training,
                self.chunks,
                self.embedders,
                lambda model_id: self.chat.chat_model(model_id),
                usage=self.usage,
                vision_models=lambda model_id: self.chat.chat_model(self.vision_model_id(model_id)),
            ),
        )
        self.search = DatasetSearchService(
            self.datasets,
            self.chunks,
            SqlFullTextIndex(self.db, segment_for_index),
            SqlVectorIndex(self.db, quantized_min_rows=self.settings.vector_int8_scan_min_rows),
            self.embedders,
            count_tokens=count_tokens,
            rerankers=self.rerankers,
        )
        file_policy = RunFilePolicy.build(
            self.secret_key or "fathom-unconfigured-secret-key",
            self.settings.public_url or f"http://{self.settings.host}:{self.settings.port}",
            self.settings.file_url_whitelist,
        )
        self.chat_files = ChatFiles(self.files, file_policy.signer)
        stores = ChatStores(
            apps=self.apps,
            chats=self.chats,
            turns=SqlChatTurnRepository(self.db),
            usage=self.usage,
            owners=SqlAppOwnerRepository(self.db),
            share_links=SqlShareLinkRepository(self.db),
            logs=SqlChatLogRepository(self.db),
        )
        self.chat = ChatApplication.build(
            stores=stores,
            api_keys=self.api_keys,
            models=self.models,
            search=self.search.search,
            http_client_factory=self.egress.client,
            sandbox_factory=self._sandbox_runner,
            secrets=self.secrets,
            redis_url=self.settings.redis_url,
            chat_lease_s=self.settings.chat_lease_seconds,
            teams=self.teams,
            dataset_lineage=self.datasets.lineage,
            egress=self.egress,
            mcp_stdio_commands=self.settings.mcp_stdio_commands,
            file_policy=file_policy,
            chat_files=self.chat_files,
        )

    def vision_model_id(self, model_id: str = "") -> str:
        """The vision model (``vision: true``) ``model_id`` names, or (empty) the first one configured;
        LookupError saying what to configure otherwise."""
        if self.models is None:
            raise LookupError("no chat model takes images; list one with vision: true in FATHOM_MODELS_FILE")
        return self.models.vision_chat(model_id).id

    def _sandbox_runner(self) -> SandboxRunner:
        """The code node's sandbox; its ``http_request`` helper goes through the egress guard."""
        return SandboxRunner.from_settings(
            self.settings, http_request=client_factory_request_handler(self.egress.client)
        )

    @classmethod
    def build(cls, settings: Settings) -> Platform:
        """Check the data dir, load the secret key and open the database (nothing is connected yet)."""
        if settings.database_url is None:
            settings.ensure_data_dir()
        secret = settings.load_secret_key()
        models = load_model_registry(settings)
        return cls(
            settings=settings, db=Database(settings.resolved_database_url), secret_key=secret, models=models
        )

    async def check_database(self) -> None:
        """Raise ConfigError with one line if the database cannot be reached, or (PostgreSQL) lacks what
        Fathom needs: a supported version and the pgvector extension (:mod:`fathom.store.pg_requirements`)."""
        try:
            await asyncio.wait_for(self.db.ping(), timeout=10)
        except Exception as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(
                f"FATHOM_DATABASE_URL={self.db.describe()}: cannot connect ({reason}); "
                "check that the database server is running and the URL is right."
            ) from None
        await check_postgres_requirements(self.db)

    async def prepare(self, *, seed_demo: bool = False) -> Bootstrap:
        """Connect, migrate to the newest schema, and create the root team and admin key on first start
        (with ``seed_demo``, also the demo knowledge base and app: :mod:`fathom.demo`). Processes started
        together take turns (:func:`fathom.store.migrate.schema_lock`): one migrates and creates the admin
        key, the others find both done."""
        await self.check_database()
        async with migrate.schema_lock(self.db):
            await migrate.upgrade(self.db, locked=True)
            return await self.bootstrap(seed_demo=seed_demo)

    async def bootstrap(self, *, seed_demo: bool = False) -> Bootstrap:
        """First start: the root team, its owner and admin key (and the demo). Every start: the root
        user ``root`` for that owner, if missing (password from FATHOM_ROOT_PASSWORD, else generated)."""
        if await self.teams.count_teams() == 0:
            team = await self.teams.create_team(ROOT_TEAM_NAME)
            member = await self.teams.add_member(team.id, ROOT_MEMBER_NAME, "owner")
            _, plain = await self.api_keys.create_key(team.id, member.id, name="admin")
            demo_app_id = None
            if seed_demo:
                from fathom.demo import docs_dir, load_docs
                from fathom.demo import seed_demo as seed

                documents = load_docs(docs_dir())
                demo_app_id = (await seed(self, team.id, member.id, documents)).app_id
            boot = Bootstrap(team.id, member.id, plain, demo_app_id)
        else:
            team_id, member_id = await self.root_identity()
            boot = Bootstrap(team_id, member_id, None)
        configured = self.settings.root_password
        try:
            boot.root_password = await self.accounts.ensure_root_user(
                boot.member_id, configured.get_secret_value() if configured is not None else None
            )
        except AccountError as exc:
            raise ConfigError(f"FATHOM_ROOT_PASSWORD: {exc}") from None
        return boot

    async def root_identity(self) -> tuple[str, str]:
        """The first team and its first owner: where CLI-made keys go by default."""
        team = await self.teams.first_team()
        if team is None:
            raise ConfigError("the database has no team yet; run `fathom serve` once or `fathom db upgrade`.")
        member = await self.teams.first_owner(team.id)
        if member is None:
            raise ConfigError(f"team {team.id} has no owner")
        return team.id, member.id

    async def database_health(self) -> DatabaseHealth:
        """Whether the database answers and its migrations are current (``GET /api/health``)."""
        return await database_health(self.db)

    def listed_models(self) -> list[ListedModel]:
        """The models this server can run (configured, then local embedding ones), defaults marked."""
        return listed_models(self.models, self.embedders)

    def chat_model_ids(self) -> list[str]:
        """The chat models a chat request may name, the default first."""
        return chat_model_ids(self.models)

    async def admit_upload(self, caller: str) -> bool:
        """Count one upload of ``caller``; False (not counted) when it is more than
        ``FATHOM_UPLOAD_RATE_PER_MINUTE`` allows in a minute (0: no limit)."""
        limit = self.settings.upload_rate_per_minute
        return not limit or await self.upload_hits.count_upload(caller, limit)

    def job_handlers(self) -> dict[str, JobHandler]:
        """Every job kind this platform knows how to run."""
        return {
            "db.analyze": self._analyze_database,
            INGEST_JOB_KIND: self.ingestion.run,
            REEMBED_JOB_KIND: self.reembed.run,
            SYNC_JOB_KIND: self.syncs.run,
        }

    @functools.cached_property
    def syncs(self) -> SourceSyncService:
        """API file library and website sources, and re-sync by content hash (the ``dataset.sync`` job)."""
        from fathom.store.knowledge.sources import SqlSourceRepository

        return SourceSyncService(
            self.datasets,
            self.chunks,
            SqlSourceRepository(self.db, self.chunks, self.jobs.doorbell),
            self.ingestion,
            self.secrets,
            self.egress.client,
            max_attempts=self.settings.job_max_attempts,
        )

    def sync_scheduler(self) -> SyncScheduler:
        """The ``autoSync`` scheduler, run beside the workers (its claim is in the database)."""
        return SyncScheduler(self.syncs.sources, self.syncs.job)

    @functools.cached_property
    def knowledge_bases(self) -> KnowledgeBases:
        """The knowledge-base application services the routes call."""
        knowledge_bases = DatasetService(
            self.datasets,
            self.files,
            self.embedders,
            self.chat.chat_model,
            SearchTester(self.search, self.embedders, self.chat.chat_model),
            self.reembed,
            self.vision_model_id,
        )
        return KnowledgeBases(
            datasets=knowledge_bases,
            rows=DataRowService(self.datasets, self.chunks, self.embedders, self.ingestion, knowledge_bases),
            collections=CollectionService(self.datasets, self.training, self.ingestion, self.files),
            tags=TagService(self.tags),
            previews=ChunkPreviewer(self.embedders),
            sources=self.syncs,
            training=TrainingService(self.datasets, self.training, self.ingestion, self.reembed, self.usage),
        )

    @functools.cached_property
    def reembed(self) -> ReembedService:
        """Changing a knowledge base's embedding model (the ``dataset.reembed`` job)."""
        from fathom.store.knowledge import SqlReembedRepository

        return ReembedService(
            self.datasets,
            SqlReembedRepository(self.db),
            self.jobs,
            self.embedders,
            max_attempts=self.settings.job_max_attempts,
        )

    async def _analyze_database(self, job: JobRecord) -> dict[str, Any]:
        """Refresh the query planner's statistics (a maintenance job)."""
        await self.db.analyze()
        return {"analyzed": True, "dialect": self.db.dialect}

    def install_log_masking(self) -> None:
        """Mask every secret this process has decrypted or stored, in every log record."""
        from fathom.security import SecretMaskingFilter

        masking = SecretMaskingFilter(self.secrets.redactor)
        for handler in logging.getLogger().handlers:
            handler.addFilter(masking)

    def new_worker(self, **kwargs: Any) -> JobWorker:
        kwargs.setdefault("retry_delay_seconds", self.settings.job_retry_delay_seconds)
        kwargs.setdefault("poll_interval", self.settings.job_poll_seconds)
        return JobWorker(
            self.jobs,
            self.job_handlers(),
            lease_seconds=self.settings.job_lease_seconds,
            doorbell=self.jobs.doorbell,
            **kwargs,
        )

    def start_workers(self, count: int | None = None) -> None:
        """Start in-process workers on the running event loop."""
        self._stop.clear()
        for _ in range(self.settings.workers if count is None else count):
            self._worker_tasks.append(asyncio.create_task(self.new_worker().run_forever(self._stop)))
        if self._worker_tasks:
            self._worker_tasks.append(asyncio.create_task(self.sync_scheduler().run_forever(self._stop)))
            listener = self.job_notice_listener()
            if listener is not None:
                self._worker_tasks.append(asyncio.create_task(listener.run(self._stop)))

    def job_notice_listener(self) -> JobNoticeListener | None:
        """On PostgreSQL, what wakes this process's idle workers when another process queues a job (a
        replica without workers, ``fathom jobs retry``); None on SQLite."""
        if not self.db.is_postgres:
            return None
        from fathom.store.pg_job_notices import JobNoticeListener

        return JobNoticeListener(self.db.url, self.jobs.doorbell)

    async def stop_workers(self) -> None:
        self._stop.set()
        for task in self._worker_tasks:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, timeout=5)
        self._worker_tasks.clear()

    async def close(self) -> None:
        await self.stop_workers()
        await self.chat.aclose()
        await self.rerankers.aclose()
        await self.api_keys.aclose()  # the written-behind usage counters
        await self.db.close()
