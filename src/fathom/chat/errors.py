"""Errors of the chat application services; the HTTP layer turns them into FastGPT's responses."""

from __future__ import annotations

#: FastGPT's error strings, verbatim (spec §7.1, openapi §1.4).
MESSAGES_NOT_ARRAY = "messages is not array"
MESSAGES_EMPTY = "messages is empty"
USER_QUESTION_EMPTY = "User question is empty"
APP_KEY_REQUIRED = "Key is error. You need to use the app key rather than the account key."
APP_EMPTY = "app is empty"
APP_ID_EMPTY = "appId is empty"
WORKFLOW_TOO_OLD = "您的工作流版本过低，请重新发布一次"
DATA_ID_REQUIRED = "dataId is required"


class ChatError(Exception):
    """A request the chat service refuses: ``http_status``, FastGPT ``status_text`` and a message.

    ``status_text`` empty means FastGPT's generic error (HTTP 500, body code 500).
    """

    def __init__(self, message: str, *, http_status: int = 500, status_text: str = "") -> None:
        self.message = message
        self.http_status = http_status
        self.status_text = status_text
        super().__init__(message)


class AppNotPublished(ChatError):
    """The app has no published version, so API runs have nothing to run."""

    def __init__(self, app_id: str) -> None:
        super().__init__(
            f"{WORKFLOW_TOO_OLD} (app {app_id} has no published version: publish it first)",
            http_status=404,
            status_text="",
        )


class WorkflowCheckFailed(ChatError):
    """The workflow has problems that would make its runs go wrong; ``problems`` lists each
    ``{nodeId, field, problem, level}`` (warnings included, so the editor can show them all)."""

    def __init__(self, summary: str, problems: list[dict[str, str]]) -> None:
        errors = sum(1 for item in problems if item.get("level") == "error")
        super().__init__(
            f"{errors} problem{'s' if errors != 1 else ''} to fix before publishing: {summary}",
            http_status=400,
            status_text="workflowCheckFailed",
        )
        self.problems = problems


class ChatForbidden(ChatError):
    """The caller may not use this app or chat."""

    def __init__(self, message: str) -> None:
        super().__init__(message, http_status=403, status_text="unAuthApp")
