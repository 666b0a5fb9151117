"""The files of a workflow run (spec §6.5): the root run registers its query and history files in a
file context; every child run (app module, plugin module, an app used as a tool) gets a context
derived from it (:func:`fathom.security.files.derive_workflow_files`: the parent's quota, current
input first, then explicit files, then history newest first; deep copies; only private files the
parent registered are inherited)."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from typing import Any

from fathom.security.files import (
    ExternalHttpSource,
    FileLimits,
    WorkflowFileContext,
    WorkflowFileRef,
    WorkflowFileStore,
    current_workflow_files,
    external_identity,
    is_absolute_http_url,
    set_workflow_files,
)

#: FastGPT: ``chatConfig.fileSelectConfig.maxFiles || 20``.
DEFAULT_MAX_FILES = 20


def max_files_of(chat_config: Mapping[str, Any] | None) -> int:
    """The app's file quota (``chatConfig.fileSelectConfig.maxFiles``, else 20)."""
    select = (chat_config or {}).get("fileSelectConfig")
    value = select.get("maxFiles") if isinstance(select, Mapping) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return int(value)
    return DEFAULT_MAX_FILES


def _files(query: Any, histories: list[dict[str, Any]]) -> Iterator[Mapping[str, Any]]:
    for item in query if isinstance(query, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("file"), Mapping):
            yield item["file"]
    for history in histories:
        if history.get("obj") != "Human":
            continue
        for value in history.get("value") or []:
            if isinstance(value, Mapping) and isinstance(value.get("file"), Mapping):
                yield value["file"]


def _root_file_store(query: Any, histories: list[dict[str, Any]], max_files: int) -> WorkflowFileStore:
    """The root run's file context: its external ``http(s)`` query and history files. (Private chat
    files are registered by an upload path with signed previews; files that are neither are not
    registered, so a child can never be handed them.)"""
    context = WorkflowFileContext(FileLimits(max_files))
    for file in _files(query, histories):
        url = file.get("url")
        if file.get("key") or not isinstance(url, str) or not is_absolute_http_url(url):
            continue
        name = str(file.get("name") or url.rsplit("/", 1)[-1] or "file")
        ref = WorkflowFileRef(name, str(file.get("type") or "file"), url, ExternalHttpSource(url))
        context.add(ref, external_identity(url), [url])
    return WorkflowFileStore(context)


def enter_root_file_context(
    query: Any, histories: list[dict[str, Any]], chat_config: Mapping[str, Any] | None
) -> contextvars.Token[WorkflowFileStore | None] | None:
    """Make a root file context current unless a run's context already is (a child run); returns the
    token to reset, or ``None`` when nothing was set."""
    if current_workflow_files() is not None:
        return None
    return set_workflow_files(_root_file_store(query, histories, max_files_of(chat_config)))


__all__ = ["DEFAULT_MAX_FILES", "enter_root_file_context", "max_files_of"]
