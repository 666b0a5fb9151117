"""The root file context of a chat run, built at the chat entry with seed 001's checks (spec §6.4, §6.5).

Every query and history file of the request goes through
:func:`fathom.security.files.prepare_workflow_file_context`: a private file (one with an object
``key``) must belong to this run's app, user and chat (the key layout
``chat/app/{appId}/{uid}/{chatId}/{name}``) and reaches the run as a signed preview link; an external
file must be an absolute ``http(s)`` URL on the whitelisted hosts. A query file that fails is a 400
naming ``messages``; a history file that fails is dropped. The run gets the rewritten query and
histories; the chat stores what the user sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from fathom.chat.errors import ChatError
from fathom.security.files import (
    ChatKeyOwnerLookup,
    FileOwnerLookup,
    FileScope,
    FileUrlWhitelist,
    PreviewUrlSigner,
    WorkflowFileError,
    WorkflowFileStore,
    prepare_workflow_file_context,
)
from fathom.workflow.files import max_files_of


@dataclass
class RunFilePolicy:
    """How the entry checks files: the URL host whitelist, the preview signer and the key owners."""

    signer: PreviewUrlSigner
    whitelist: FileUrlWhitelist = field(default_factory=FileUrlWhitelist)
    owners: FileOwnerLookup = field(default_factory=ChatKeyOwnerLookup)

    @classmethod
    def build(cls, secret_key: str, public_url: str, whitelist: Iterable[str] = ()) -> RunFilePolicy:
        """A policy signing under ``public_url``; a non-empty whitelist also admits that host
        (FastGPT admits its own storage and site hosts next to the listed ones)."""
        domains = [d for d in whitelist if d.strip()]
        if domains:
            domains.append(urlsplit(public_url).hostname or "")
        return cls(PreviewUrlSigner(secret_key, public_url), FileUrlWhitelist(domains))


@dataclass
class RunFiles:
    """What the run receives: rewritten query and histories and the root file store."""

    query: list[dict[str, Any]]
    histories: list[dict[str, Any]]
    store: WorkflowFileStore


async def prepare_run_files(
    policy: RunFilePolicy,
    *,
    query: Sequence[Mapping[str, Any]],
    histories: Sequence[Mapping[str, Any]],
    app_id: str,
    uid: str,
    chat_id: str,
    chat_config: Mapping[str, Any] | None,
) -> RunFiles:
    """Register the request's files in a new root context (raises :class:`ChatError` 400 for a query
    file that fails its check)."""
    try:
        prepared = await prepare_workflow_file_context(
            query=query,
            histories=histories,
            scope=FileScope("app", app_id, uid, chat_id),
            max_file_amount=max_files_of(chat_config),
            get_preview_url=policy.signer,
            owner_lookup=policy.owners,
            validate_url_domain=policy.whitelist,
        )
    except WorkflowFileError as exc:
        raise ChatError(f"messages: {exc}", http_status=400, status_text="invalidParams") from None
    store = WorkflowFileStore(prepared.file_context, prepared.registrar)
    return RunFiles(prepared.query, prepared.histories, store)


__all__ = ["RunFilePolicy", "RunFiles", "prepare_run_files"]
