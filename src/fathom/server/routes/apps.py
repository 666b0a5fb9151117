"""Apps and versions over FastGPT's paths: ``/api/core/app/{create,list,detail,update,del,copy}``,
``/api/core/app/version/{publish,list,detail,latest}``; Fathom adds ``exportWorkflow`` and
``importWorkflow`` (FastGPT workflow JSON)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from fathom.chat import (
    SIMPLE_KEY,
    ChatError,
    apply_template,
    draft_workflow,
    system_tool_templates,
    template_detail,
    template_list,
    tool_config_status,
    version_workflow,
)
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.pagination import page_window
from fathom.server.permissions import permission_view, require_permission, require_team_key
from fathom.server.routes.app_access import (
    api_error,
    chat_of,
    load_app,
    require_readable_references,
)
from fathom.server.routes.common import ANY_METHOD, iso, object_id, params, platform_of, required
from fathom.store.protocols import AppRecord, AppVersionRecord

router = APIRouter(tags=["apps"])


def app_view(app: AppRecord, auth: AuthContext, owner: str | None, *, full: bool = False) -> dict[str, Any]:
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


def version_view(version: AppVersionRecord, *, full: bool = False) -> dict[str, Any]:
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


def _app_id(values: dict[str, Any]) -> str:
    return object_id(values, "appId" if values.get("appId") else "id", "app")


async def _owner(request: Request, app_id: str) -> str | None:
    return await chat_of(request).owners.owner_of(app_id)


@router.api_route("/api/core/app/create", methods=ANY_METHOD, summary="Create an app")
async def create_app(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_team_key(auth, "create apps")
    values = await params(request)
    chat = chat_of(request)
    workflow = values.get("workflow")
    if isinstance(workflow, dict) and values.get("modules") is None and values.get("nodes") is None:
        values = {**values, **workflow}  # a FastGPT template file ({name, type, workflow}) sent as it is
    try:
        values = apply_template(values)
        app = await chat.apps.create(
            auth.team_id,
            str(required(values, "name")),
            str(values.get("type") or "simple"),
            values,
            intro=str(values.get("intro") or ""),
        )
    except ChatError as exc:
        raise api_error(exc) from None
    await chat.owners.set_owner(app.id, auth.member_id)
    return envelope(app.id)


@router.api_route(
    "/api/core/app/importWorkflow", methods=ANY_METHOD, summary="Create an app from FastGPT JSON"
)
async def import_workflow(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_team_key(auth, "create apps")
    values = await params(request)
    workflow = values.get("workflow")
    document: dict[str, Any] = workflow if isinstance(workflow, dict) else values
    kind = str(values.get("type") or "advanced")
    if kind == "folder":
        raise ApiError(
            400, "invalidParams", "type: a workflow import makes a 'simple', 'advanced' or 'plugin' app"
        )
    chat = chat_of(request)
    try:
        app = await chat.apps.create(
            auth.team_id, str(required(values, "name")), kind, document, intro=str(values.get("intro") or "")
        )
    except ChatError as exc:
        raise api_error(exc) from None
    await chat.owners.set_owner(app.id, auth.member_id)
    return envelope(app.id)


@router.api_route("/api/core/app/list", methods=ANY_METHOD, summary="List apps")
async def list_apps(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    platform = platform_of(request)
    search = str(values.get("searchKey") or "").lower()
    kinds = values.get("type")
    listed = kinds if isinstance(kinds, list) else [kinds] if kinds else []
    if not all(isinstance(kind, str) for kind in listed):
        raise ApiError(400, "invalidParams", "type: must be an app type or a list of app types (strings)")
    wanted = set(listed)
    views = []
    for app in await chat_of(request).apps.apps.list_apps(auth.team_id):
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
        views.append(app_view(app, auth, owner))
    views.sort(key=lambda view: view["updateTime"] or "", reverse=True)
    return envelope(views)


@router.api_route("/api/core/app/detail", methods=ANY_METHOD, summary="An app with its draft")
async def app_detail(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    app = await load_app(request, auth, _app_id(values), "read")
    return envelope(app_view(app, auth, await _owner(request, app.id), full=True))


@router.api_route("/api/core/app/update", methods=ANY_METHOD, summary="Change an app's draft or details")
async def update_app(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    app = await load_app(request, auth, _app_id(values), "write")
    await require_readable_references(request, auth, values)
    try:
        await chat_of(request).apps.update(auth.team_id, app.id, values)
    except ChatError as exc:
        raise api_error(exc) from None
    return envelope(None)


@router.api_route("/api/core/app/del", methods=ANY_METHOD, summary="Delete an app")
async def delete_app(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    require_team_key(auth, "delete apps")
    app = await load_app(request, auth, _app_id(values), "manage")
    await chat_of(request).apps.apps.delete_app(auth.team_id, app.id)
    return envelope(None)


@router.api_route("/api/core/app/copy", methods=ANY_METHOD, summary="Copy an app")
async def copy_app(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_team_key(auth, "create apps")
    values = await params(request)
    app = await load_app(request, auth, _app_id(values), "read")
    chat = chat_of(request)
    new = await chat.apps.copy(auth.team_id, app.id)
    await chat.owners.set_owner(new.id, auth.member_id)
    return envelope({"appId": new.id})


@router.api_route("/api/core/app/exportWorkflow", methods=ANY_METHOD, summary="FastGPT JSON of the draft")
async def export_workflow(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    app = await load_app(request, auth, _app_id(values), "read")
    return envelope(await chat_of(request).apps.export(auth.team_id, app.id))


@router.api_route("/api/core/app/version/publish", methods=ANY_METHOD, summary="Publish the draft")
async def publish(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    app = await load_app(request, auth, _app_id(values), "write")
    changes = {k: v for k, v in values.items() if k in ("nodes", "edges", "chatConfig", SIMPLE_KEY)}
    await require_readable_references(request, auth, changes)
    try:
        version = await chat_of(request).apps.publish(
            auth.team_id, app.id, changes, version_name=str(values.get("versionName") or "")
        )
    except ChatError as exc:
        raise api_error(exc) from None
    return envelope({"versionId": version.id, "versionName": version.version_name})


@router.api_route("/api/core/app/version/list", methods=ANY_METHOD, summary="Versions of an app")
async def list_versions(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    app = await load_app(request, auth, _app_id(values), "read")
    body = values if "pageSize" in values else {}
    offset, size = page_window(body, dict(request.query_params), cap=100)
    versions = await chat_of(request).apps.apps.list_versions(auth.team_id, app.id)
    page = versions[offset : offset + size]
    return envelope({"list": [version_view(v) for v in page], "total": len(versions)})


@router.api_route("/api/core/app/version/detail", methods=ANY_METHOD, summary="One version, frozen")
async def version_detail(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    app = await load_app(request, auth, _app_id(values), "read")
    version_id = object_id(values, "versionId", "version")
    version = await chat_of(request).apps.apps.get_version(auth.team_id, app.id, version_id)
    return envelope(version_view(version, full=True))


@router.api_route("/api/core/app/version/latest", methods=ANY_METHOD, summary="The published version")
async def latest_version(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    app = await load_app(request, auth, _app_id(values), "read")
    if not app.published_version_id:
        raise ApiError(404, "", f"app {app.id} has no published version")
    version = await chat_of(request).apps.apps.get_version(auth.team_id, app.id, app.published_version_id)
    return envelope(version_view(version, full=True))


@router.api_route(
    "/api/core/app/plugin/getSystemPluginTemplates",
    methods=ANY_METHOD,
    summary="FastGPT system tools this server runs",
)
async def system_plugin_templates(auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    """The ``community-…`` tools a ``pluginModule``/``tool`` node may name (FastGPT's ids, inputs and
    outputs); any other system tool id fails its node with an error naming it."""
    require_team_key(auth, "read tool templates")
    return envelope(system_tool_templates())


@router.api_route("/api/core/app/template/list", methods=ANY_METHOD, summary="Built-in app templates")
async def list_templates(auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_team_key(auth, "read app templates")
    return envelope(template_list())


@router.api_route("/api/core/app/template/detail", methods=ANY_METHOD, summary="One template with its graph")
async def get_template(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_team_key(auth, "read app templates")
    values = await params(request)
    try:
        return envelope(template_detail(str(required(values, "templateId"))))
    except ChatError as exc:
        raise api_error(exc) from None
