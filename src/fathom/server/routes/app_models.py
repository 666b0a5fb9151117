"""Request and answer models of the app routes (:mod:`fathom.server.routes.apps`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, StringConstraints, model_validator

from fathom.chat.apps import AVATAR_MAX, NAME_MAX, VERSION_NAME_MAX
from fathom.server.pagination import PageQuery
from fathom.server.permissions import PermissionView
from fathom.server.typed import ApiModel, ObjectId, OptionalObjectId, Text


def _blank_as_none(value: Any) -> Any:
    return None if value == "" else value


AppName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=NAME_MAX)]
Avatar = Annotated[str, StringConstraints(max_length=AVATAR_MAX)]
VersionName = Annotated[str, StringConstraints(max_length=VERSION_NAME_MAX)]
#: the app kinds made by create (tool sets have their own routes)
CreateType = Annotated[
    Literal["simple", "advanced", "plugin", "tool", "folder"] | None, BeforeValidator(_blank_as_none)
]
Graph = list[dict[str, Any]]


def _without_blanks(values: Any, names: tuple[str, ...]) -> Any:
    """``values`` without the ``names`` sent as null or "" (FastGPT's clients send both for "absent")."""
    if not isinstance(values, dict):
        return values
    return {k: v for k, v in values.items() if k not in names or v not in (None, "")}


class AppRef(ApiModel):
    """Names one app: ``appId`` (FastGPT's), required; ``id`` is accepted in its place (FastGPT's app
    routes read either), copied into ``appId`` before validation when ``appId`` is absent."""

    id_kinds = {"id": "app"}
    appId: ObjectId = Field(description="The app's id (or send it as id)")
    id: OptionalObjectId = Field(None, description="The app's id, read when appId is absent")

    @model_validator(mode="before")
    @classmethod
    def _id_as_app_id(cls, values: Any) -> Any:
        values = _without_blanks(values, ("appId",))
        if isinstance(values, dict) and "appId" not in values and values.get("id") not in (None, ""):
            values = {**values, "appId": values["id"]}
        return values

    @property
    def app_id(self) -> str:
        return self.appId


class AppDraft(ApiModel):
    """A draft as FastGPT sends it: a workflow (``nodes``/``modules``, ``edges``, ``chatConfig``) or a
    simple app's config (``simpleConfig``, or the editor's form fields such as ``aiSettings``)."""

    nodes: Graph | None = None
    modules: Graph | None = Field(None, description="FastGPT's older name for nodes")
    edges: Graph | None = None
    chatConfig: dict[str, Any] | None = None
    simpleConfig: dict[str, Any] | None = None


class CreateApp(AppDraft):
    name: AppName | None = Field(None, description="Required unless a template supplies it")
    type: CreateType = Field(None, description="Default simple (or the template's)")
    intro: Text | None = None
    avatar: Avatar | None = None
    templateId: str | None = Field(None, description="A built-in template (see template/list)")
    workflow: dict[str, Any] | None = Field(None, description="A FastGPT template file's graph")


class ImportWorkflow(ApiModel):
    name: AppName
    type: CreateType = Field(None, description="simple, advanced (default), plugin or tool")
    intro: Text | None = None
    avatar: Avatar | None = None
    workflow: dict[str, Any] | None = Field(None, description="FastGPT workflow JSON (else the body is)")


class ListApps(ApiModel):
    searchKey: Annotated[str, StringConstraints(max_length=1000)] | None = None
    type: str | list[str] | None = Field(None, description="An app type or a list of them")


class UpdateApp(AppRef, AppDraft):
    name: AppName | None = None
    intro: Text | None = None
    avatar: Avatar | None = None


class Publish(AppRef):
    nodes: Graph | None = None
    edges: Graph | None = None
    chatConfig: dict[str, Any] | None = None
    simpleConfig: dict[str, Any] | None = None
    versionName: VersionName | None = None


class ListVersions(AppRef, PageQuery):
    pass


class VersionRef(AppRef):
    id_kinds = {"id": "app", "versionId": "version"}
    versionId: ObjectId = Field(description="The version's id")

    @model_validator(mode="before")
    @classmethod
    def _blank_version(cls, values: Any) -> Any:
        return _without_blanks(values, ("versionId",))


class TemplateRef(ApiModel):
    templateId: Annotated[str, StringConstraints(min_length=1, max_length=200)]


class AppView(BaseModel):
    id_: str = Field(alias="_id")
    parentId: None
    teamId: str
    tmbId: str | None
    name: str
    type: str
    intro: str
    avatar: str
    version: str
    updateTime: str | None
    publishedVersionId: str | None
    hasPublished: bool
    permission: PermissionView


class AppDetailView(AppView):
    modules: Graph
    nodes: Graph
    edges: Graph
    chatConfig: dict[str, Any]
    toolConfigStatus: dict[str, dict[str, Any]]
    simpleConfig: dict[str, Any] | None = None


class VersionView(BaseModel):
    id_: str = Field(alias="_id")
    appId: str
    versionName: str
    time: str | None
    isPublish: bool


class VersionDetailView(VersionView):
    nodes: Graph
    edges: Graph
    chatConfig: dict[str, Any]


class CopiedApp(BaseModel):
    appId: str


class WorkflowProblemView(BaseModel):
    """One finding of the workflow checks: the node, the input key ("" for the node) and what to fix."""

    nodeId: str
    field: str
    problem: str
    level: Literal["error", "warning"]


class DraftChecked(BaseModel):
    """What a save answers: the draft's problems (``error`` ones block publishing)."""

    problems: list[WorkflowProblemView]


class Published(BaseModel):
    versionId: str
    versionName: str
    problems: list[WorkflowProblemView] = Field(
        default_factory=list, description="Warnings of the published workflow (errors refuse the publish)"
    )


class TemplateView(BaseModel):
    templateId: str
    name: str
    intro: str
    type: str
    avatar: str
    tags: list[str]


class TemplateDetail(TemplateView):
    workflow: dict[str, Any]


class SystemToolView(BaseModel):
    id: str
    pluginId: str
    flowNodeType: str
    name: str
    intro: str
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
