"""Apps and versions: drafts (simple config or workflow JSON), publishing, copying, import/export,
and the graph a run uses (published version for API runs, draft for the chat test)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Protocol

from fathom.chat.app_graph import AppGraph, PublishedGraph
from fathom.chat.errors import AppNotPublished, ChatError, WorkflowCheckFailed
from fathom.chat.run_access import RunReader
from fathom.chat.simple_app import compile_simple_app, validate_simple_config
from fathom.chat.simple_form import form_to_workflow, is_simple_form
from fathom.chat.team_tools import TOOL_SET_TYPES, scrub_tool_set_nodes
from fathom.store.protocols import AppRecord, AppRepository, AppVersionRecord, NotFound
from fathom.workflow import WorkflowGraphError, load_workflow
from fathom.workflow.check import ModelCatalog, check_workflow_graph, describe_problems, has_errors
from fathom.workflow.nodes.app_module import ChildApp, ChildAppLoader
from fathom.workflow.nodes.graph_tools import workflow_tool_config_status

SIMPLE_KEY = "simpleConfig"
#: longest app name, avatar and version name (characters), the same on every backend
NAME_MAX = 200
AVATAR_MAX = 500
VERSION_NAME_MAX = 200
WORKFLOW_TYPES = ("advanced", "plugin", "tool")
RUNNABLE_TYPES = ("simple", *WORKFLOW_TYPES)
VERSION_CACHE_SIZE = 512


def _invalid(message: str) -> ChatError:
    return ChatError(message, http_status=400, status_text="invalidParams")


def _check_length(field: str, value: str | None, limit: int) -> None:
    if value is not None and len(value) > limit:
        raise _invalid(f"{field}: at most {limit} characters, got {len(value)}")


def check_workflow(workflow: Any) -> dict[str, Any]:
    """A FastGPT workflow document ``{nodes, edges, chatConfig}`` that loads; else a 400 error."""
    if not isinstance(workflow, dict):
        raise _invalid("workflow: must be an object with nodes and edges")
    doc = {
        "nodes": workflow.get("nodes") or workflow.get("modules") or [],
        "edges": workflow.get("edges") or [],
        "chatConfig": workflow.get("chatConfig") or {},
    }
    try:
        load_workflow(doc)
    except (WorkflowGraphError, ValueError) as exc:
        raise _invalid(f"workflow: {exc}") from None
    return doc


def draft_workflow(app: AppRecord) -> dict[str, Any]:
    """The draft as workflow JSON (a simple app stored as a config is compiled; one stored as FastGPT
    ``modules`` runs those nodes, as FastGPT runs every simple app)."""
    draft = app.draft or {}
    if app.type == "simple" and SIMPLE_KEY in draft:
        return compile_simple_app(draft.get(SIMPLE_KEY) or {})
    if app.type in TOOL_SET_TYPES:
        return {"nodes": scrub_tool_set_nodes(draft.get("nodes") or []), "edges": [], "chatConfig": {}}
    return {
        "nodes": list(draft.get("nodes") or []),
        "edges": list(draft.get("edges") or []),
        "chatConfig": dict(draft.get("chatConfig") or {}),
    }


def tool_config_status(workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per tool node of a workflow, whether it still needs configuration (``getToolConfigStatus``):
    the editor shows these nodes as "needs configuration"; the Tool Call and Agent nodes skip them."""
    return workflow_tool_config_status(workflow)


def version_workflow(version: AppVersionRecord) -> dict[str, Any]:
    """A frozen version as workflow JSON; a simple app's frozen config is compiled at run time."""
    simple = version.chat_config.get(SIMPLE_KEY)
    if isinstance(simple, dict):
        return compile_simple_app(simple)
    chat_config = {k: v for k, v in version.chat_config.items() if k != SIMPLE_KEY}
    return {"nodes": version.nodes, "edges": version.edges, "chatConfig": chat_config}


def _has_graph(values: dict[str, Any]) -> bool:
    return values.get("nodes") is not None or values.get("modules") is not None


def make_draft(kind: str, values: dict[str, Any]) -> dict[str, Any]:
    """The stored draft of a new or updated app from request values.

    A simple app comes in three shapes: Fathom's ``simpleConfig``, FastGPT's stored ``modules`` (kept as
    they are, every node), or FastGPT's form ``{aiSettings, dataset, selectedTools, chatConfig}``
    (compiled to the nodes FastGPT's ``form2AppWorkflow`` builds)."""
    if kind == "simple":
        if values.get(SIMPLE_KEY) is None and values.get("config") is None:
            if _has_graph(values):
                return check_workflow(values)
            if is_simple_form(values):
                return check_workflow(form_to_workflow(values))
        return {SIMPLE_KEY: validate_simple_config(values.get(SIMPLE_KEY) or values.get("config") or {})}
    if kind in WORKFLOW_TYPES:
        return check_workflow(values)
    return {}


HEADER_SECRET_KEY = "system_header_secret"


def _seal_header_secrets(draft: dict[str, Any], secrets: Any) -> dict[str, Any]:
    """The draft with every plain header secret (``{secret, value}`` with a value) encrypted and blanked,
    as FastGPT's ``storeSecretValue`` does before saving: plaintext secrets never reach the database."""
    if secrets is None or not isinstance(draft.get("nodes"), list):
        return draft
    nodes = []
    for node in draft["nodes"]:
        if isinstance(node, dict) and isinstance(node.get("inputs"), list):
            inputs = [
                {**item, "value": secrets.store_secret_value(item["value"])}
                if isinstance(item, dict)
                and item.get("key") == HEADER_SECRET_KEY
                and isinstance(item.get("value"), dict)
                else item
                for item in node["inputs"]
            ]
            node = {**node, "inputs": inputs}
        nodes.append(node)
    return {**draft, "nodes": nodes}


class ModelLister(Protocol):
    """The configured models, as the model registry lists them."""

    default_chat_id: str | None

    def of_type(self, model_type: Any) -> list[Any]: ...


class AppService:
    """App use cases over an :class:`AppRepository`; callers check permissions first."""

    def __init__(
        self, apps: AppRepository, *, secrets: Any = None, models: ModelLister | None = None
    ) -> None:
        self.apps = apps
        self.secrets = secrets
        self.models = models
        # a version never changes once frozen: its workflow (a simple app's compiled) is kept by id, as
        # JSON text so that every run gets its own copy to change, and as the graph it validates into
        # (None when it does not: the run reports the error, as for any graph)
        self._versions: OrderedDict[str, PublishedGraph] = OrderedDict()

    async def create(
        self,
        team_id: str,
        name: str,
        kind: str,
        values: dict[str, Any],
        *,
        intro: str = "",
        version_name: str | None = None,
    ) -> AppRecord:
        """Store the app and, as FastGPT's ``onCreateApp`` does, its first published version (named after
        the app unless ``version_name``), so the next API chat answers without a separate publish."""
        if kind not in (*RUNNABLE_TYPES, "folder"):
            raise _invalid(f"type: {kind!r} is not one of {', '.join((*RUNNABLE_TYPES, 'folder'))}")
        if not name.strip():
            raise _invalid("name: must not be empty")
        _check_length("name", name, NAME_MAX)
        _check_length("avatar", str(values["avatar"]) if values.get("avatar") else None, AVATAR_MAX)
        _check_length("versionName", version_name, VERSION_NAME_MAX)
        draft = make_draft(kind, values)
        if kind in RUNNABLE_TYPES:  # created published, as FastGPT does: so checked as a publish is
            self.refuse_broken(self._draft_of(kind, draft))
        draft = _seal_header_secrets(draft, self.secrets)
        app = await self.apps.create_app(team_id, name, type=kind, intro=intro, draft=draft)
        if values.get("avatar"):
            app = await self.apps.update_app(team_id, app.id, avatar=str(values["avatar"]))
        if kind in RUNNABLE_TYPES:
            await self.publish(team_id, app.id, version_name=name if version_name is None else version_name)
            app = await self.apps.get_app(team_id, app.id)
        return app

    async def update(self, team_id: str, app_id: str, values: dict[str, Any]) -> AppRecord:
        app = await self.apps.get_app(team_id, app_id)
        changes: dict[str, Any] = {}
        for key in ("name", "intro", "avatar"):
            if values.get(key) is not None:
                changes[key] = str(values[key])
        if "name" in changes and not changes["name"].strip():
            raise _invalid("name: must not be empty")
        _check_length("name", changes.get("name"), NAME_MAX)
        _check_length("avatar", changes.get("avatar"), AVATAR_MAX)
        graph_app = app.type in WORKFLOW_TYPES or (app.type == "simple" and SIMPLE_KEY not in app.draft)
        if app.type == "simple" and (
            values.get(SIMPLE_KEY) is not None or values.get("config") is not None or is_simple_form(values)
        ):
            changes["draft"] = make_draft("simple", values)
        elif (graph_app or app.type == "simple") and _has_graph(values):
            changes["draft"] = check_workflow({**draft_workflow(app), **values})
        elif graph_app and values.get("chatConfig") is not None:
            changes["draft"] = {**draft_workflow(app), "chatConfig": dict(values["chatConfig"])}
        if not changes:
            return app
        if "draft" in changes:
            changes["draft"] = _seal_header_secrets(changes["draft"], self.secrets)
        return await self.apps.update_app(team_id, app_id, **changes)

    async def publish(
        self, team_id: str, app_id: str, values: dict[str, Any] | None = None, *, version_name: str = ""
    ) -> AppVersionRecord:
        """Freeze the draft (after applying ``values``, FastGPT's publish body) into a version."""
        app = await self.apps.get_app(team_id, app_id)
        if app.type not in RUNNABLE_TYPES:
            raise _invalid(f"app {app_id} is a {app.type} and cannot be published")
        _check_length("versionName", version_name, VERSION_NAME_MAX)
        if values:
            app = await self.update(team_id, app_id, values)
        workflow = draft_workflow(app)
        self.refuse_broken(workflow)
        chat_config = dict(workflow["chatConfig"])
        if app.type == "simple" and SIMPLE_KEY in app.draft:
            chat_config[SIMPLE_KEY] = app.draft.get(SIMPLE_KEY) or {}
        return await self.apps.publish(
            team_id,
            app_id,
            nodes=workflow["nodes"],
            edges=workflow["edges"],
            chat_config=chat_config,
            version_name=version_name,
        )

    def problems(self, workflow: dict[str, Any]) -> list[dict[str, str]]:
        """The workflow checks' findings on ``workflow`` (FastGPT JSON), each ``{nodeId, field, problem,
        level}``; a graph that does not load is refused earlier, when it is saved."""
        try:
            graph = load_workflow(workflow)
        except (WorkflowGraphError, ValueError):
            return []
        return [item.to_dict() for item in check_workflow_graph(graph, models=self._catalog())]

    def draft_problems(self, app: AppRecord) -> list[dict[str, str]]:
        """The problems of an app's draft (none for folders and tool sets)."""
        if app.type not in RUNNABLE_TYPES:
            return []
        return self.problems(draft_workflow(app))

    def refuse_broken(self, workflow: dict[str, Any]) -> None:
        """Raise :class:`WorkflowCheckFailed` when ``workflow`` has a problem that blocks publishing."""
        try:
            graph = load_workflow(workflow)
        except (WorkflowGraphError, ValueError):
            return  # structural errors are refused where the draft is made
        found = check_workflow_graph(graph, models=self._catalog())
        if has_errors(found):
            errors = [item for item in found if item.level == "error"]
            raise WorkflowCheckFailed(describe_problems(graph, errors), [item.to_dict() for item in found])

    def _catalog(self) -> ModelCatalog | None:
        if self.models is None:
            return None
        return ModelCatalog(
            frozenset(model.id for model in self.models.of_type("llm")), self.models.default_chat_id
        )

    @staticmethod
    def _draft_of(kind: str, draft: dict[str, Any]) -> dict[str, Any]:
        if kind == "simple" and SIMPLE_KEY in draft:
            return compile_simple_app(draft.get(SIMPLE_KEY) or {})
        return {
            "nodes": list(draft.get("nodes") or []),
            "edges": list(draft.get("edges") or []),
            "chatConfig": dict(draft.get("chatConfig") or {}),
        }

    async def copy(self, team_id: str, app_id: str) -> AppRecord:
        """A new app with the same draft; the source's published version is published again."""
        app = await self.apps.get_app(team_id, app_id)
        name = f"{app.name} Copy"
        if len(name) > NAME_MAX:  # FastGPT's "<name> Copy", cut to fit the name limit
            name = f"{app.name[: NAME_MAX - len(' Copy')]} Copy"
        new = await self.apps.create_app(team_id, name, type=app.type, intro=app.intro, draft=dict(app.draft))
        if app.avatar:
            new = await self.apps.update_app(team_id, new.id, avatar=app.avatar)
        if app.published_version_id:
            version = await self.apps.get_version(team_id, app_id, app.published_version_id)
            await self.apps.publish(
                team_id,
                new.id,
                nodes=version.nodes,
                edges=version.edges,
                chat_config=version.chat_config,
                version_name=version.version_name,
            )
        return new

    async def get(self, team_id: str, app_id: str) -> AppRecord:
        """The team's app (``NotFound`` for another team's)."""
        return await self.apps.get_app(team_id, app_id)

    async def get_with_owner(self, team_id: str, app_id: str) -> tuple[AppRecord, str | None]:
        """The team's app and the member who created it, read in one statement."""
        return await self.apps.get_app_and_owner(team_id, app_id)

    async def list_apps(self, team_id: str) -> list[AppRecord]:
        return await self.apps.list_apps(team_id)

    async def versions(self, team_id: str, app_id: str) -> list[AppVersionRecord]:
        """The app's versions, newest first."""
        return await self.apps.list_versions(team_id, app_id)

    async def version(self, team_id: str, app_id: str, version_id: str) -> AppVersionRecord:
        return await self.apps.get_version(team_id, app_id, version_id)

    async def export(self, team_id: str, app_id: str) -> dict[str, Any]:
        """FastGPT workflow JSON of the draft (a simple app exported as its compiled graph)."""
        return draft_workflow(await self.apps.get_app(team_id, app_id))

    async def run_graph(
        self, team_id: str, app_id: str, *, draft: bool = False, app: AppRecord | None = None
    ) -> AppGraph:
        """The graph a run uses: the published version (cached per version id), or the draft for the
        chat test. ``app``: the app record when the caller has just read it."""
        if app is None or app.id != app_id or app.team_id != team_id:
            app = await self.apps.get_app(team_id, app_id)
        if app.type not in RUNNABLE_TYPES:
            raise ChatError(
                f"app {app_id} is a {app.type}; it cannot chat", http_status=400, status_text="invalidParams"
            )
        if draft:
            return AppGraph(app, draft_workflow(app), None)
        if not app.published_version_id:
            raise AppNotPublished(app_id)
        version_id = app.published_version_id
        published = self._versions.get(version_id)
        if published is None:
            workflow = version_workflow(await self.apps.get_version(team_id, app_id, version_id))
            published = PublishedGraph.of(workflow)
            self._versions[version_id] = published
            if len(self._versions) > VERSION_CACHE_SIZE:
                self._versions.popitem(last=False)
            return AppGraph(app, workflow, version_id, published.loaded)  # the document read just now
        self._versions.move_to_end(version_id)
        return AppGraph(app, None, version_id, published=published)


class ChildAppReader(Protocol):
    """Member-level read check on a child app (owner/admin role, the app's creator, or a read grant)."""

    async def can_read(self, member_id: str, app_id: str) -> bool: ...


class TeamChildAppLoader(ChildAppLoader):
    """``appModule`` / ``pluginModule`` child apps of one team (spec §4.8.3): every reader of the run (the
    parent app's owner and the running member, :mod:`fathom.chat.run_access`) must be allowed to read the
    child (member level, not only team), and the version is the node's pinned version when it belongs to
    the child, else the published one."""

    def __init__(
        self,
        apps: AppRepository,
        team_id: str,
        *,
        readers: tuple[RunReader, ...] = (),
        access: ChildAppReader | None = None,
    ) -> None:
        self.apps = apps
        self.team_id = team_id
        self.readers = readers
        self.access = access

    async def load_child_app(self, app_id: str, version: str | None) -> ChildApp:
        try:
            app = await self.apps.get_app(self.team_id, app_id)
        except NotFound:
            raise LookupError(f"app {app_id} not found") from None
        for reader in self.readers if self.access is not None else ():
            if self.access is not None and not await self.access.can_read(reader.member_id, app_id):
                raise PermissionError(
                    f"No read permission on app {app.name} ({app_id}): {reader.label} may not read it; "
                    "ask its owner for read access, or remove the node"
                )
        record = None
        if version:
            try:
                record = await self.apps.get_version(self.team_id, app_id, version)
            except NotFound:
                record = None
        if record is None and app.published_version_id:
            record = await self.apps.get_version(self.team_id, app_id, app.published_version_id)
        if record is None:
            raise LookupError(f"app {app_id} has no published version")
        return ChildApp(app_id=app.id, name=app.name, workflow=version_workflow(record), avatar=app.avatar)


__all__ = [
    "SIMPLE_KEY",
    "AppGraph",
    "AppService",
    "TeamChildAppLoader",
    "check_workflow",
    "draft_workflow",
    "version_workflow",
]
