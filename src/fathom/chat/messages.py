"""OpenAI chat messages ⇄ FastGPT chat items, and the request checks FastGPT makes on ``messages``."""

from __future__ import annotations

from typing import Any

from fathom.chat.errors import MESSAGES_EMPTY, MESSAGES_NOT_ARRAY, USER_QUESTION_EMPTY, ChatError

_ROLE_TO_OBJ = {"system": "System", "developer": "System", "user": "Human", "assistant": "AI"}


def text_value(text: str) -> dict[str, Any]:
    """One FastGPT text value."""
    return {"type": "text", "text": {"content": text}}


def _part_values(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [text_value(content)] if content else []
    values: list[dict[str, Any]] = []
    if not isinstance(content, list):
        return [text_value(str(content))]
    for part in content:
        if isinstance(part, str):
            values.append(text_value(part))
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            values.append(text_value(part["text"]))
        elif kind == "image_url":
            url = (
                (part.get("image_url") or {}).get("url") if isinstance(part.get("image_url"), dict) else None
            )
            if url:
                values.append({"type": "file", "file": {"type": "image", "name": "", "url": url}})
        elif kind == "file_url" and (part.get("url") or part.get("key")):
            file: dict[str, Any] = {
                "type": "file",
                "name": part.get("name") or "",
                "url": part.get("url") or "",
            }
            if isinstance(part.get("key"), str) and part["key"]:
                file["key"] = part["key"]  # a stored chat file: checked against this chat at the entry
            values.append({"type": "file", "file": file})
    return values


def _message_to_chat_item(message: dict[str, Any]) -> dict[str, Any] | None:
    """A FastGPT chat item for one OpenAI message (tool and function messages have none)."""
    obj = _ROLE_TO_OBJ.get(str(message.get("role")))
    if obj is None:
        return None
    item: dict[str, Any] = {"obj": obj, "value": _part_values(message.get("content"))}
    if message.get("dataId"):
        item["dataId"] = str(message["dataId"])
    return item


def _messages_to_chat_items(messages: list[Any]) -> list[dict[str, Any]]:
    """FastGPT ``GPTMessages2Chats``: every system/user/assistant message as a chat item."""
    items = []
    for message in messages:
        if isinstance(message, dict):
            item = _message_to_chat_item(message)
            if item is not None:
                items.append(item)
    return items


def split_messages(
    messages: Any, *, plugin: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(earlier chat items, the user query values) from a request's ``messages``.

    Raises :class:`ChatError` with FastGPT's strings: ``messages is not array``, ``messages is empty``,
    ``User question is empty``. Plugin apps need no messages (their query comes from variables).
    """
    if messages is None and plugin:
        return [], []
    if not isinstance(messages, list):
        raise ChatError(MESSAGES_NOT_ARRAY)
    if not messages:
        if plugin:
            return [], []
        raise ChatError(MESSAGES_EMPTY)
    items = _messages_to_chat_items(messages)
    if plugin:
        return items, []
    if not items or items[-1]["obj"] != "Human":
        raise ChatError(USER_QUESTION_EMPTY)
    query = items.pop()["value"]
    if not any(v.get("type") == "file" or (v.get("text") or {}).get("content") for v in query):
        raise ChatError(USER_QUESTION_EMPTY)
    return items, query


def value_text(values: list[Any]) -> str:
    """The text values of a chat item joined (no separator), for titles and previews."""
    return "".join(
        (v.get("text") or {}).get("content") or ""
        for v in values
        if isinstance(v, dict) and v.get("type") == "text"
    )


def concat_histories(stored: list[dict[str, Any]], sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored histories, then the request's earlier messages not already stored (same ``dataId``)."""
    known = {item.get("dataId") for item in stored if item.get("dataId")}
    return [*stored, *(item for item in sent if not item.get("dataId") or item["dataId"] not in known)]
