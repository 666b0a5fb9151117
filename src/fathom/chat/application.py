"""The chat application services bundled for the platform: apps, runs, history."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fathom.chat.apps import AppService
from fathom.chat.channel import RunRegistry
from fathom.chat.chat_files import ChatFiles
from fathom.chat.chat_logs import ChatLogService
from fathom.chat.chat_service import ChatService
from fathom.chat.errors import ChatError
from fathom.chat.fanout import RedisFanout
from fathom.chat.history import HistoryService
from fathom.chat.question_guide import QuestionGuideService
from fathom.chat.run_access import MemberAccess
from fathom.chat.run_files import RunFilePolicy
from fathom.chat.run_services import ModelPool, RunServicesFactory, SearchFn
from fathom.chat.share_links import ShareLinkService
from fathom.chat.team_tools import StdioPolicy, ToolSetRuntime
from fathom.chat.templates import apply_template
from fathom.chat.tool_set_service import HttpToolSetSpec, McpServerSpec, ToolSetProfile, ToolSetService
from fathom.chat.turn_lease import DEFAULT_LEASE_S
from fathom.llm import ModelRegistry
from fathom.security import SecretBox
from fathom.store.protocols import (
    ApiKeyRepository,
    AppOwnerRepository,
    AppRecord,
    AppRepository,
    ChatLogRepository,
    ChatRepository,
    ChatTurnRepository,
    ShareLinkRepository,
    TeamRepository,
    UsageRepository,
)


@dataclass(frozen=True)
class ChatStores:
    """The chat side's storage, as protocols: ``fathom.platform`` (the composition root) builds the SQL
    repositories and hands them in, so nothing in ``fathom.chat`` imports a database library."""

    apps: AppRepository
    chats: ChatRepository
    turns: ChatTurnRepository
    usage: UsageRepository
    owners: AppOwnerRepository
    share_links: ShareLinkRepository
    logs: ChatLogRepository


@dataclass
class ChatApplication:
    """What the HTTP layer (and the CLI) use to manage apps, run chats and read history."""

    apps: AppService
    runs: ChatService
    history: HistoryService
    owners: AppOwnerRepository
    tool_sets: ToolSetService
    share_links: ShareLinkService
    logs: ChatLogService
    chat_files: ChatFiles | None = None
    question_guides: QuestionGuideService | None = None

    @classmethod
    def build(
        cls,
        *,
        stores: ChatStores,
        api_keys: ApiKeyRepository | None = None,
        models: ModelRegistry | None = None,
        search: SearchFn | None = None,
        http_client_factory: Callable[[], Any] | None = None,
        sandbox_factory: Callable[[], Any] | None = None,
        secrets: Any = None,
        registry: RunRegistry | None = None,
        redis_url: str | None = None,
        chat_lease_s: float = DEFAULT_LEASE_S,
        teams: TeamRepository | None = None,
        dataset_lineage: Callable[[str], Awaitable[list[tuple[str, str | None, str]]]] | None = None,
        egress: Any = None,
        mcp_stdio_commands: Sequence[str] = (),
        file_policy: RunFilePolicy | None = None,
        chat_files: ChatFiles | None = None,
    ) -> ChatApplication:
        apps, chats, owners = stores.apps, stores.chats, stores.owners
        app_service = AppService(apps, secrets=secrets, models=models)
        box = secrets if secrets is not None else SecretBox("fathom-unconfigured-secret-key")
        tool_runtime = ToolSetRuntime(box, egress, StdioPolicy(tuple(mcp_stdio_commands)))
        factory = RunServicesFactory(
            apps=apps,
            models=ModelPool(models),
            search=search,
            http_client_factory=http_client_factory,
            sandbox_factory=sandbox_factory,
            secrets=secrets,
            access=MemberAccess(teams, owners, dataset_lineage) if teams is not None else None,
            tool_sets=tool_runtime,
            chat_files=chat_files,
        )
        # a dead replica's running key goes within the chat lease, as its running answers do
        fanout = RedisFanout(redis_url, running_ttl_s=max(2, int(chat_lease_s))) if redis_url else None
        runs = ChatService(
            app_service,
            chats,
            stores.usage,
            factory,
            turns=stores.turns,
            api_keys=api_keys,
            registry=registry,
            fanout=fanout,
            app_owners=owners,
            file_policy=file_policy,
            lease_s=chat_lease_s,
        )
        history = HistoryService(chats, chat_files, lease_s=chat_lease_s)
        share_links = ShareLinkService(
            stores.share_links,
            egress.client if egress is not None else None,
            egress.parse_url if egress is not None else None,
        )
        logs = ChatLogService(stores.logs, chats)
        tool_sets = ToolSetService(apps, tool_runtime)
        chat = cls(app_service, runs, history, owners, tool_sets, share_links, logs, chat_files)
        chat.question_guides = QuestionGuideService(app_service, history, stores.usage, chat.chat_model)
        return chat

    async def create_app(
        self,
        team_id: str,
        member_id: str,
        name: str,
        kind: str,
        values: dict[str, Any],
        *,
        intro: str = "",
    ) -> AppRecord:
        """Create the app (:meth:`AppService.create`) with ``member_id`` as its owner."""
        app = await self.apps.create(team_id, name, kind, values, intro=intro)
        await self.owners.set_owner(app.id, member_id)
        return app

    async def create_app_from(self, team_id: str, member_id: str, values: dict[str, Any]) -> AppRecord:
        """FastGPT's ``app/create``: the body as sent (a template file's ``workflow`` counts as the graph
        when the body has none; a ``templateId`` fills in what the body leaves out), ``name`` required."""
        workflow = values.get("workflow")
        if isinstance(workflow, dict) and values.get("modules") is None and values.get("nodes") is None:
            values = {**values, **workflow}  # a FastGPT template file ({name, type, workflow}) sent as it is
        values = apply_template(values)
        if not values.get("name"):
            raise ChatError("name: is required", http_status=400, status_text="missingParams")
        return await self.create_app(
            team_id,
            member_id,
            str(values["name"]),
            str(values.get("type") or "simple"),
            values,
            intro=str(values.get("intro") or ""),
        )

    async def copy_app(self, team_id: str, member_id: str, app_id: str) -> AppRecord:
        """A copy of the app (:meth:`AppService.copy`) owned by ``member_id``."""
        new = await self.apps.copy(team_id, app_id)
        await self.owners.set_owner(new.id, member_id)
        return new

    async def create_tool_set(
        self, team_id: str, member_id: str, profile: ToolSetProfile, spec: McpServerSpec | HttpToolSetSpec
    ) -> AppRecord:
        """Create an MCP (:class:`McpServerSpec`) or HTTP tool set with ``member_id`` as its owner."""
        app = await self.tool_sets.create(team_id, profile, spec)
        await self.owners.set_owner(app.id, member_id)
        return app

    async def owner_of(self, app_id: str) -> str | None:
        """The member who created the app (None: unknown, e.g. made before owners were kept)."""
        return await self.owners.owner_of(app_id)

    async def delete_app(self, team_id: str, app_id: str) -> None:
        """Delete the app (its versions, chats and links go with it in the database) and its chat files."""
        await self.apps.apps.delete_app(team_id, app_id)
        if self.chat_files is not None:
            await self.chat_files.delete_chats(team_id, app_id)

    def chat_model(self, model_id: str = "") -> Any:
        """The shared client of a chat model (empty: the default); unknown ids raise ``LookupError``, no
        model configured raises ``NoChatModelConfigured``."""
        return self.runs.services.models.chat_model(model_id)

    async def aclose(self) -> None:
        await self.runs.aclose()
