"""Views of chat records and of a chat's app, shared by the history routes and the share page's."""

from __future__ import annotations

from typing import Any

from fathom.chat import public_chat_config, record_preview, without_password_variables
from fathom.server.routes.common import iso
from fathom.store.protocols import AppRecord, ChatItemRecord, ChatRecord


def record_view(item: ChatItemRecord, *, custom_feedbacks: bool = False) -> dict[str, Any]:
    view: dict[str, Any] = {
        "_id": item.data_id,
        "dataId": item.data_id,
        "obj": item.obj,
        "value": item.value,
        "time": iso(item.created_at),
        "hideInUI": False,
        "durationSeconds": item.duration_seconds,
    }
    if item.user_good_feedback is not None:
        view["userGoodFeedback"] = item.user_good_feedback
    if item.user_bad_feedback is not None:
        view["userBadFeedback"] = item.user_bad_feedback
    if item.admin_feedback:
        view["adminFeedback"] = item.admin_feedback
    if custom_feedbacks:
        view["customFeedbacks"] = [
            f for r in item.response_data if isinstance(r, dict) for f in r.get("customFeedbacks") or []
        ]
    if item.obj == "AI":
        view.update(record_preview(item))
    if item.status is not None:  # Fathom: "running" (its run goes on) or "interrupted" (its replica died)
        view["status"] = item.status
        view["interrupted"] = item.status == "interrupted"
    return view


def app_init_view(
    app: AppRecord, workflow: dict[str, Any], chat: ChatRecord | None, chat_id: str
) -> dict[str, Any]:
    """``core/chat/init``'s data: the chat's title and variables, and the app's chat settings."""
    chat_config = dict(workflow.get("chatConfig") or {})
    models = sorted(
        {
            str(i.get("value"))
            for n in workflow.get("nodes") or []
            for i in n.get("inputs") or []
            if i.get("key") == "model" and i.get("value")
        }
    )
    plugin_inputs = [
        i
        for n in workflow.get("nodes") or []
        if n.get("flowNodeType") == "pluginInput"
        for i in n.get("inputs") or []
    ]
    return {
        "chatId": chat_id,
        "appId": app.id,
        "title": chat.custom_title or chat.title if chat is not None else None,
        "variables": without_password_variables(chat.variables, chat_config) if chat is not None else {},
        "app": {
            "chatConfig": {
                "questionGuide": chat_config.get("questionGuide", False),
                "ttsConfig": chat_config.get("ttsConfig", {"type": "none"}),
                "whisperConfig": chat_config.get("whisperConfig", {"open": False}),
                "chatInputGuide": chat_config.get("chatInputGuide", {"open": False}),
                "instruction": chat_config.get("instruction", ""),
                "variables": public_chat_config(chat_config),
                "fileSelectConfig": chat_config.get(
                    "fileSelectConfig", {"canSelectFile": False, "canSelectImg": False, "maxFiles": 10}
                ),
                "welcomeText": chat_config.get("welcomeText", ""),
            },
            "chatModels": models,
            "name": app.name,
            "avatar": app.avatar,
            "intro": app.intro,
            "type": app.type,
            "pluginInputs": plugin_inputs,
        },
    }
