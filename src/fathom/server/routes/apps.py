"""Apps and versions over FastGPT's paths: ``/api/core/app/{create,list,detail,update,del,copy}``,
``/api/core/app/version/{publish,list,detail,latest}``; Fathom adds ``exportWorkflow`` and
``importWorkflow`` (FastGPT workflow JSON)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from fathom.chat import (
    SIMPLE_KEY,
    draft_workflow,
    system_tool_templates,
    template_detail,
    template_list,
    tool_config_status,
    version_workflow,
)
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.pagination import Page
from fathom.server.permissions import permission_view, require_permission, require_team_key
from fathom.server.routes.app_access import (
    chat_of,
    load_app,
    require_readable_references,
)
from fathom.server.routes.app_models import (
    AppDetailView,
    AppRef,
    AppView,
    CopiedApp,
    CreateApp,
    DraftChecked,
    ImportWorkflow,
    ListApps,
    ListVersions,
    Publish,
    Published,
    SystemToolView,
    TemplateDetail,
    TemplateRef,
    TemplateView,
    UpdateApp,
    VersionDetailView,
    VersionRef,
    VersionView,
)
from fathom.server.routes.common import ANY_METHOD, iso, platform_of
from fathom.server.typed import NoParams, answers, parsed
from fathom.store.protocols import AppRecord, AppVersionRecord

router = APIRouter(tags=["apps"])


def _app_view(app: AppRecord, auth: AuthContext, owner: str | None, *, full: bool = False) -> dict[str, Any]:
    view: dict[str, Any] = {
        "_id": app.id,
        "parentId": None,
        "teamId": app.team_id,
        "tmbId": owner,
        "name": app.name,
        "type": app.type,
        "intro": app.intro,
        "avatar": app.avatar,
        "version": "v2",
        "updateTime": iso(app.updated_at),
        "publishedVersionId": app.published_version_id,
        "hasPublished": app.published_version_id is not None,
        "permission": permission_view(auth, owner),
    }
    if full:
        workflow = (
            draft_workflow(app) if app.type != "folder" else {"nodes": [], "edges": [], "chatConfig": {}}
        )
        view.update({"modules": workflow["nodes"], "nodes": workflow["nodes"], "edges": workflow["edges"]})
        view["chatConfig"] = workflow["chatConfig"]
        view["toolConfigStatus"] = tool_config_status(workflow)
        if app.type == "simple" and SIMPLE_KEY in app.draft:  # a simple app kept as FastGPT modules has none
            view[SIMPLE_KEY] = app.draft.get(SIMPLE_KEY) or {}
    return view


def _version_view(version: AppVersionRecord, *, full: bool = False) -> dict[str, Any]:
    view: dict[str, Any] = {
        "_id": version.id,
        "appId": version.app_id,
        "versionName": version.version_name,
        "time": iso(version.created_at),
        "isPublish": version.is_publish,
    }
    if full:
        view.update(version_workflow(version))
    return view


async def _owner(request: Request, app_id: str) -> str | None:
    return await chat_of(request).owner_of(app_id)


@router.api_route("/api/core/app/create", methods=ANY_METHOD, summary="Create an app", responses=answers(str))
async def create_app(
    request: Request, auth: AuthContext = Depends(authenticate), payload: CreateApp = parsed(CreateApp)
) -> dict[str, Any]:
    require_team_key(auth, "create apps")
    app = await chat_of(request).create_app_from(auth.team_id, auth.member_id, payload.fields())
    return envelope(app.id)


@router.api_route(
    "/api/core/app/importWorkflow",
    methods=ANY_METHOD,
    summary="Create an app from FastGPT JSON",
    responses=answers(str),
)
async def import_workflow(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: ImportWorkflow = parsed(ImportWorkflow),
) -> dict[str, Any]:
    require_team_key(auth, "create apps")
    document: dict[str, Any] = payload.workflow if payload.workflow is not None else payload.fields()
    kind = payload.type or "advanced"
    if kind == "folder":
        raise ApiError(
            400, "invalidParams", "type: a workflow import makes a 'simple', 'advanced' or 'plugin' app"
        )
    app = await chat_of(request).create_app(
        auth.team_id, auth.member_id, payload.name, kind, document, intro=payload.intro or ""
    )
    return envelope(app.id)


@router.api_route(
    "/api/core/app/list", methods=ANY_METHOD, summary="List apps", responses=answers(list[AppView])
)
async def list_apps(
    request: Request, auth: AuthContext = Depends(authenticate), payload: ListApps = parsed(ListApps)
) -> dict[str, Any]:
    platform = platform_of(request)
    search = (payload.searchKey or "").lower()
    kinds = payload.type
    wanted = set(kinds if isinstance(kinds, list) else [kinds] if kinds else [])
    views = []
    for app in await chat_of(request).apps.list_apps(auth.team_id):
        if auth.key_app_bound and app.id != auth.app_id:
            continue
        if wanted and app.type not in wanted:
            continue
        if search and search not in app.name.lower() and search not in app.intro.lower():
            continue
        owner = await _owner(request, app.id)
        if not auth.key_app_bound:
            try:
                await require_permission(platform, auth, "app", app.id, owner, "read")
            except ApiError:
                continue
        views.append(_app_view(app, auth, owner))
    views.sort(key=lambda view: view["updateTime"] or "", reverse=True)
    return envelope(views)


@router.api_route(
    "/api/core/app/detail",
    methods=ANY_METHOD,
    summary="An app with its draft",
    responses=answers(AppDetailView),
)
async def app_detail(
    request: Request, auth: AuthContext = Depends(authenticate), payload: AppRef = parsed(AppRef)
) -> dict[str, Any]:
    app = await load_app(request, auth, payload.app_id, "read")
    return envelope(_app_view(app, auth, await _owner(request, app.id), full=True))


@router.api_route(
    "/api/core/app/update",
    methods=ANY_METHOD,
    summary="Change an app's draft or details",
    responses=answers(DraftChecked),
)
async def update_app(
    request: Request, auth: AuthContext = Depends(authenticate), payload: UpdateApp = parsed(UpdateApp)
) -> dict[str, Any]:
    app = await load_app(request, auth, payload.app_id, "write")
    values = payload.fields()
    await require_readable_references(request, auth, values)
    service = chat_of(request).apps
    updated = await service.update(auth.team_id, app.id, values)
    # a draft may be saved with problems; they are answered so the editor can show them before publishing
    return envelope({"problems": service.draft_problems(updated)})


@router.api_route("/api/core/app/del", methods=ANY_METHOD, summary="Delete an app", responses=answers(None))
async def delete_app(
    request: Request, auth: AuthContext = Depends(authenticate), payload: AppRef = parsed(AppRef)
) -> dict[str, Any]:
    require_team_key(auth, "delete apps")
    app = await load_app(request, auth, payload.app_id, "manage")
    await chat_of(request).delete_app(auth.team_id, app.id)
    return envelope(None)


@router.api_route(
    "/api/core/app/copy", methods=ANY_METHOD, summary="Copy an app", responses=answers(CopiedApp)
)
async def copy_app(
    request: Request, auth: AuthContext = Depends(authenticate), payload: AppRef = parsed(AppRef)
) -> dict[str, Any]:
    require_team_key(auth, "create apps")
    app = await load_app(request, auth, payload.app_id, "read")
    new = await chat_of(request).copy_app(auth.team_id, auth.member_id, app.id)
    return envelope({"appId": new.id})


@router.api_route(
    "/api/core/app/exportWorkflow",
    methods=ANY_METHOD,
    summary="FastGPT JSON of the draft",
    responses=answers(dict[str, Any]),
)
async def export_workflow(
    request: Request, auth: AuthContext = Depends(authenticate), payload: AppRef = parsed(AppRef)
) -> dict[str, Any]:
    app = await load_app(request, auth, payload.app_id, "read")
    return envelope(await chat_of(request).apps.export(auth.team_id, app.id))


@router.api_route(
    "/api/core/app/version/publish",
    methods=ANY_METHOD,
    summary="Publish the draft",
    responses=answers(Published),
)
async def publish(
    request: Request, auth: AuthContext = Depends(authenticate), payload: Publish = parsed(Publish)
) -> dict[str, Any]:
    app = await load_app(request, auth, payload.app_id, "write")
    values = payload.fields()
    changes = {k: v for k, v in values.items() if k in ("nodes", "edges", "chatConfig", SIMPLE_KEY)}
    await require_readable_references(request, auth, changes)
    service = chat_of(request).apps
    version = await service.publish(auth.team_id, app.id, changes, version_name=payload.versionName or "")
    problems = service.problems(version_workflow(version))
    return envelope({"versionId": version.id, "versionName": version.version_name, "problems": problems})


@router.api_route(
    "/api/core/app/version/list",
    methods=ANY_METHOD,
    summary="Versions of an app",
    responses=answers(Page[VersionView]),
)
async def list_versions(
    request: Request, auth: AuthContext = Depends(authenticate), payload: ListVersions = parsed(ListVersions)
) -> dict[str, Any]:
    app = await load_app(request, auth, payload.app_id, "read")
    offset, size = payload.window(cap=100)
    versions = await chat_of(request).apps.versions(auth.team_id, app.id)
    page = versions[offset : offset + size]
    return envelope({"list": [_version_view(v) for v in page], "total": len(versions)})


@router.api_route(
    "/api/core/app/version/detail",
    methods=ANY_METHOD,
    summary="One version, frozen",
    responses=answers(VersionDetailView),
)
async def version_detail(
    request: Request, auth: AuthContext = Depends(authenticate), payload: VersionRef = parsed(VersionRef)
) -> dict[str, Any]:
    app = await load_app(request, auth, payload.app_id, "read")
    version = await chat_of(request).apps.version(auth.team_id, app.id, payload.versionId)
    return envelope(_version_view(version, full=True))


@router.api_route(
    "/api/core/app/version/latest",
    methods=ANY_METHOD,
    summary="The published version",
    responses=answers(VersionDetailView),
)
async def latest_version(
    request: Request, auth: AuthContext = Depends(authenticate), payload: AppRef = parsed(AppRef)
) -> dict[str, Any]:
    app = await load_app(request, auth, payload.app_id, "read")
    if not app.published_version_id:
        raise ApiError(404, "", f"app {app.id} has no published version")
    version = await chat_of(request).apps.version(auth.team_id, app.id, app.published_version_id)
    return envelope(_version_view(version, full=True))


@router.api_route(
    "/api/core/app/plugin/getSystemPluginTemplates",
    methods=ANY_METHOD,
    summary="FastGPT system tools this server runs",
    responses=answers(list[SystemToolView]),
)
async def system_plugin_templates(
    auth: AuthContext = Depends(authenticate), _: NoParams = parsed(NoParams)
) -> dict[str, Any]:
    """The ``community-…`` tools a ``pluginModule``/``tool`` node may name (FastGPT's ids, inputs and
    outputs); any other system tool id fails its node with an error naming it."""
    require_team_key(auth, "read tool templates")
    return envelope(system_tool_templates())


@router.api_route(
    "/api/core/app/template/list",
    methods=ANY_METHOD,
    summary="Built-in app templates",
    responses=answers(list[TemplateView]),
)
async def list_templates(
    auth: AuthContext = Depends(authenticate), _: NoParams = parsed(NoParams)
) -> dict[str, Any]:
    require_team_key(auth, "read app templates")
    return envelope(template_list())


@router.api_route(
    "/api/core/app/template/detail",
    methods=ANY_METHOD,
    summary="One template with its graph",
    responses=answers(TemplateDetail),
)
async def get_template(
    auth: AuthContext = Depends(authenticate), payload: TemplateRef = parsed(TemplateRef)
) -> dict[str, Any]:
    require_team_key(auth, "read app templates")
    return envelope(template_detail(payload.templateId))
