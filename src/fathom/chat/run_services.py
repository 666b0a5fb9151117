"""Building the :class:`WorkflowServices` of one run from the platform's long-lived parts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from fathom.chat.apps import TeamChildAppLoader
from fathom.chat.chat_files import ChatFiles
from fathom.chat.file_reader import ExternalFileReader
from fathom.chat.run_access import MemberAccess, RunReader, check_datasets_readable
from fathom.chat.team_tools import ToolSetRuntime
from fathom.chat.tool_resolver import TeamToolResolver
from fathom.llm import ChatModel, ModelNotFoundError, ModelRegistry, OpenAIChatModel
from fathom.store.protocols import AppRepository
from fathom.workflow import WorkflowServices

NO_MODEL_HINT = (
    "No chat model is configured: set FATHOM_OPENAI_BASE_URL (and FATHOM_CHAT_MODEL, "
    "FATHOM_OPENAI_API_KEY) or list models in the file named by FATHOM_MODELS_FILE, then restart."
)


class SearchFn(Protocol):
    """A team's knowledge-base search (``DatasetSearchService.search``)."""

    def __call__(self, team_id: str, params: Any, *, keep_cut: bool = ...) -> Awaitable[Any]: ...


class LazyService:
    """Creates the wrapped service on first attribute access (the sandbox probes the machine)."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._instance: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._instance is None:
            self._instance = self._factory()
        return getattr(self._instance, name)


class NoChatModelConfigured(RuntimeError):
    """A node needs a chat model and none is configured (the message names the settings)."""


@dataclass
class ModelPool:
    """Chat models by id, created once from the registry and shared by runs."""

    registry: ModelRegistry | None
    _models: dict[str, ChatModel] = field(default_factory=dict)

    def chat_model(self, model_id: str) -> ChatModel:
        """The chat model ``model_id`` names; empty or not a configured chat model: the default chat model,
        as FastGPT's ``getLLMModel`` does (the node's response data names the model that ran). Only "no
        chat model configured at all" is an error, :class:`NoChatModelConfigured`, naming the settings."""
        if self.registry is None or len(self.registry) == 0:
            raise NoChatModelConfigured(NO_MODEL_HINT)
        config = self.registry.find(model_id) if model_id else None
        if config is None or config.type != "llm":
            try:
                config = self.registry.default_chat()
            except ModelNotFoundError:
                raise NoChatModelConfigured(NO_MODEL_HINT) from None
        model = self._models.get(config.id)
        if model is None:
            model = self._models[config.id] = OpenAIChatModel(config)
        return model

    async def aclose(self) -> None:
        for model in self._models.values():
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()
        self._models.clear()


@dataclass
class RunServicesFactory:
    """Everything a run may need from outside, bound per team at run time."""

    apps: AppRepository
    models: ModelPool
    search: SearchFn | None = None
    http_client_factory: Callable[[], Any] | None = None
    sandbox_factory: Callable[[], Any] | None = None
    secrets: Any = None
    access: MemberAccess | None = None
    tool_sets: ToolSetRuntime | None = None
    chat_files: ChatFiles | None = None
    _http_client: Any = None
    _sandbox: Any = None

    def http_client(self) -> Any:
        if self._http_client is None and self.http_client_factory is not None:
            self._http_client = self.http_client_factory()
        return self._http_client

    def sandbox(self) -> Any:
        if self._sandbox is None and self.sandbox_factory is not None:
            self._sandbox = LazyService(self.sandbox_factory)
        return self._sandbox

    def for_team(self, team_id: str, readers: tuple[RunReader, ...] = ()) -> WorkflowServices:
        """The services of one run of an app of ``team_id``: every knowledge base searched and every child
        app run must be readable by each of ``readers`` (the app's owner and the running member), checked
        when the node runs."""
        search, access = self.search, self.access

        async def dataset_search(params: Any) -> Any:
            assert search is not None
            if access is not None:
                await check_datasets_readable(access, readers, list(params.dataset_ids))
            return await search(team_id, params, keep_cut=False)  # a node shows no removed item

        tool_resolver = (
            TeamToolResolver(self.apps, team_id, self.tool_sets, readers=readers, access=self.access)
            if self.tool_sets is not None
            else None
        )
        return WorkflowServices(
            http_client=self.http_client(),
            chat_model_factory=self.models.chat_model,
            sandbox=self.sandbox(),
            dataset_search=dataset_search if search is not None else None,
            child_app_runner=TeamChildAppLoader(self.apps, team_id, readers=readers, access=self.access),
            secrets=self.secrets,
            file_reader=ExternalFileReader(self.http_client, self.chat_files, team_id),
            tool_resolver=tool_resolver,
        )

    async def aclose(self) -> None:
        await self.models.aclose()
        if self._http_client is not None:
            await self._http_client.aclose()
            self._http_client = None
