"""The root workflow file context: register query and history files at the entry (spec §6.5.1–3).

Private files are identified by their object key and must belong to the current chat scope; models
only ever see a signed preview URL. External files must be absolute http(s) URLs that pass the domain
whitelist. Every registered file gets one :class:`WorkflowFileRef` per identity (``chat:{key}`` or
``external:{url}``); reading a file that was never registered is refused.
"""

from __future__ import annotations

import asyncio
import logging
import posixpath
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fathom.json_values import copy_json
from fathom.security.files.refs import (
    CHILD_NOT_SELECTED_FOR_SOURCE,
    CHILD_PRIVATE_NOT_IN_PARENT,
    CHILD_PRIVATE_NOT_INHERITED,
    INVALID_CHILD_FILE_URL,
    INVALID_QUERY_FILE_URL,
    KEY_NOT_IN_WORKFLOW,
    NOT_REGISTERED,
    PARENT_IDENTITY_UNAVAILABLE,
    QUERY_FILE_UNAVAILABLE,
    ChatKeyOwnerLookup,
    ChatObjectSource,
    ExternalHttpSource,
    FileLimits,
    FileOwnerLookup,
    FileScope,
    FileSource,
    RegistrationSource,
    UrlDomainValidator,
    WorkflowFileError,
    WorkflowFileRef,
    chat_identity,
    external_identity,
    file_key,
    file_name_from_url,
    file_url,
    is_absolute_http_url,
)

logger = logging.getLogger(__name__)

PreviewUrlGetter = Callable[[str], Awaitable[str]]


def _allow_all(url: str) -> bool:
    return True


class WorkflowFileContext:
    """Registered files of one workflow run (root) or of a child run derived from it."""

    def __init__(self, limits: FileLimits, parent: WorkflowFileContext | None = None) -> None:
        self.limits = limits
        self.parent = parent
        self._by_url: dict[str, WorkflowFileRef] = {}
        self._by_identity: dict[str, WorkflowFileRef] = {}
        self._identity_of: dict[int, str] = {}
        self._inherited: set[int] = set()

    # -- registration ---------------------------------------------------------------------------

    def add(
        self, ref: WorkflowFileRef, identity: str, aliases: Sequence[str] = (), *, inherited: bool = False
    ) -> WorkflowFileRef:
        """Register ``ref`` under ``identity``; a known identity keeps its first ref (duplicates collapse)."""
        existing = self._by_identity.get(identity)
        if existing is not None:
            for url in aliases:
                self._by_url[url] = existing
            return existing
        self._by_url[ref.model_url] = ref
        for url in aliases:
            self._by_url[url] = ref
        self._by_identity[identity] = ref
        self._identity_of[id(ref)] = identity
        if inherited:
            self._inherited.add(id(ref))
        return ref

    # -- lookups --------------------------------------------------------------------------------

    def resolve(self, url: str) -> WorkflowFileRef | None:
        """The ref registered for a runtime URL (model URL or original URL)."""
        return self._by_url.get(url)

    def resolve_input_file(self, file: Any) -> WorkflowFileRef | None:
        """The ref for a file value: by ``chat:{key}`` when it has a key (trusted identity), else by URL."""
        key = file_key(file)
        if key is not None:
            return self._by_identity.get(chat_identity(key))
        url = file_url(file)
        return self.resolve(url) if url is not None else None

    def get_identity(self, url: str) -> str | None:
        """``chat:{key}`` / ``external:{url}`` of the ref registered for ``url``."""
        ref = self.resolve(url)
        return self._identity_of.get(id(ref)) if ref is not None else None

    def owns(self, ref: WorkflowFileRef) -> bool:
        """Whether ``ref`` was registered in this very context."""
        return (
            self._identity_of.get(id(ref)) is not None
            and self._by_identity.get(self._identity_of[id(ref)]) is ref
        )

    @property
    def refs(self) -> list[WorkflowFileRef]:
        """Registered refs, one per identity, in registration order."""
        return list(self._by_identity.values())

    def get_source(self, target: str | WorkflowFileRef) -> FileSource:
        """Where to read a registered file; refused for files this context never registered."""
        ref = self.resolve(target) if isinstance(target, str) else target
        if self.parent is None:
            if ref is None or not self.owns(ref):
                raise WorkflowFileError(NOT_REGISTERED)
        else:
            if ref is None or not self.owns(ref):
                raise WorkflowFileError(CHILD_NOT_SELECTED_FOR_SOURCE)
            if id(ref) in self._inherited:
                return self.parent.get_source(ref)
            if not isinstance(ref.source, ExternalHttpSource):
                raise WorkflowFileError(CHILD_PRIVATE_NOT_INHERITED)
        if isinstance(ref.source, ChatObjectSource):
            return FileSource(
                "internal", ref.name, self.limits.max_bytes_per_file, object_key=ref.source.object_key
            )
        name = ref.name or file_name_from_url(ref.source.url)
        return FileSource("external", name, self.limits.max_bytes_per_file, url=ref.source.url)

    # -- children -------------------------------------------------------------------------------

    def derive(
        self, files: Sequence[Any], validate_url_domain: UrlDomainValidator = _allow_all
    ) -> WorkflowFileContext:
        """A child context holding exactly ``files``: parent refs are inherited, new external URLs are
        validated, private keys must come from this context (spec §6.5.4)."""
        child = WorkflowFileContext(self.limits, parent=self)
        for file in files:
            url = file_url(file)
            key = file_key(file) if not isinstance(file, str) else None
            parent_ref = self.resolve_input_file(file) if key else (self.resolve(url) if url else None)
            if parent_ref is not None:
                identity = self.get_identity(parent_ref.model_url)
                if identity is None:
                    raise WorkflowFileError(PARENT_IDENTITY_UNAVAILABLE)
                aliases = [url] if url and is_absolute_http_url(url) else []
                child.add(parent_ref, identity, aliases, inherited=True)
                continue
            if key:
                raise WorkflowFileError(CHILD_PRIVATE_NOT_IN_PARENT)
            if url is None or not is_absolute_http_url(url) or not validate_url_domain(url):
                raise WorkflowFileError(INVALID_CHILD_FILE_URL)
            name = (file.get("name") if isinstance(file, Mapping) else None) or file_name_from_url(url)
            ftype = (file.get("type") if isinstance(file, Mapping) else None) or "file"
            ref = WorkflowFileRef(str(name), str(ftype), url, ExternalHttpSource(url))
            child.add(ref, external_identity(url))
        return child


class WorkflowFileRegistrar:
    """Registers one input file into the root context (query, history, variable, interactive, plugin)."""

    def __init__(
        self,
        context: WorkflowFileContext,
        scope: FileScope,
        get_preview_url: PreviewUrlGetter,
        owner_lookup: FileOwnerLookup,
        validate_url_domain: UrlDomainValidator,
    ) -> None:
        self.context = context
        self.scope = scope
        self._get_preview_url = get_preview_url
        self._owners = owner_lookup
        self._validate = validate_url_domain
        self._preview_cache: dict[str, asyncio.Future[str]] = {}

    async def is_authorized_key(self, key: str) -> bool:
        """Whether the stored file ``key`` belongs to this run's app, user and chat."""
        return await self._owners.owner_of(key) == self.scope

    async def get_preview_url(self, key: str) -> str:
        """The signed preview URL of an authorised key, signed once per key and cached."""
        if not await self.is_authorized_key(key):
            raise WorkflowFileError(KEY_NOT_IN_WORKFLOW)
        cached = self._preview_cache.get(key)
        if cached is None:
            cached = asyncio.ensure_future(self._sign(key))
            self._preview_cache[key] = cached
        return await asyncio.shield(cached)

    async def _sign(self, key: str) -> str:
        url = await self._get_preview_url(key)
        if not is_absolute_http_url(url):
            raise ValueError("Workflow file signer must return an absolute HTTP(S) URL")
        return url

    async def register_input_file(
        self, file: Mapping[str, Any], source: RegistrationSource
    ) -> WorkflowFileRef | None:
        """Register ``file``; ``None`` means skipped (history files that fail checks are skipped)."""
        original_url = file_url(file)
        key = file_key(file)
        if key is not None:
            if source == "history" and not await self.is_authorized_key(key):
                logger.warning("Skip unauthorized workflow history file", extra={"file_key": key})
                return None
            model_url = await self.get_preview_url(key)
            identity = chat_identity(key)
            file_source: ChatObjectSource | ExternalHttpSource = ChatObjectSource(key)
            default_name = posixpath.basename(key) or "file"
        else:
            if (
                original_url is None
                or not is_absolute_http_url(original_url)
                or not self._validate(original_url)
            ):
                if source == "query":
                    raise WorkflowFileError(INVALID_QUERY_FILE_URL)
                if source == "history":
                    logger.warning("Skip unavailable workflow history file", extra={"file_url": original_url})
                    return None
                raise WorkflowFileError(f"Invalid workflow {source} file URL")
            model_url = original_url
            identity = external_identity(original_url)
            file_source = ExternalHttpSource(original_url)
            default_name = file_name_from_url(model_url)
        aliases = [original_url] if original_url and is_absolute_http_url(original_url) else []
        ref = WorkflowFileRef(
            str(file.get("name") or default_name), str(file.get("type") or "file"), model_url, file_source
        )
        return self.context.add(ref, identity, [model_url, *aliases])


def _copy_text_item(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of a history item that holds text values only (``{"type": "text", "text": {"content": …}}``)
    and strings beside them, built directly (most of a chat's history: nothing to register, and
    :func:`copy_json` would walk it key by key); None for any other item."""
    values = item.get("value")
    if type(values) is not list:
        return None
    texts = []
    for value in values:
        if type(value) is not dict or len(value) != 2 or value.get("type") != "text":
            return None
        text = value.get("text")
        if type(text) is not dict or len(text) != 1 or type(content := text.get("content")) is not str:
            return None
        texts.append(content)
    copied: dict[str, Any] = {}
    for key, field in item.items():
        if key != "value" and field is not None and type(field) is not str:
            return None
        copied[key] = field
    copied["value"] = [{"type": "text", "text": {"content": content}} for content in texts]
    return copied


@dataclass
class PreparedWorkflowFileContext:
    """What the entry hands to the run: the context, its registrar, and rewritten query/histories."""

    file_context: WorkflowFileContext
    registrar: WorkflowFileRegistrar
    query: list[dict[str, Any]]
    histories: list[dict[str, Any]]


async def prepare_workflow_file_context(
    *,
    query: Sequence[Mapping[str, Any]],
    histories: Sequence[Mapping[str, Any]],
    scope: FileScope,
    max_file_amount: int,
    get_preview_url: PreviewUrlGetter,
    max_bytes_per_file: int = 100 * 1024 * 1024,
    owner_lookup: FileOwnerLookup | None = None,
    validate_url_domain: UrlDomainValidator | None = None,
) -> PreparedWorkflowFileContext:
    """Validate and register the query and history files; return new query/histories (inputs untouched).

    A query file that fails its check raises; a history file that fails is dropped with a warning.
    File URLs in the returned items are replaced by their model URLs (signed previews for private files).
    """
    context = WorkflowFileContext(FileLimits(max_file_amount, max_bytes_per_file))
    registrar = WorkflowFileRegistrar(
        context,
        scope,
        get_preview_url,
        owner_lookup or ChatKeyOwnerLookup(),
        validate_url_domain or _allow_all,
    )

    async def prepare(file: Mapping[str, Any], source: RegistrationSource) -> dict[str, Any] | None:
        ref = await registrar.register_input_file(file, source)
        if ref is None:
            return None
        prepared = copy_json(dict(file))
        if "url" in prepared or file_key(file) is not None:
            prepared["url"] = ref.model_url
        return prepared

    new_query: list[dict[str, Any]] = []
    for item in query:
        copied = copy_json(dict(item))
        if isinstance(item.get("file"), Mapping):
            prepared = await prepare(item["file"], "query")
            if prepared is None:
                raise WorkflowFileError(QUERY_FILE_UNAVAILABLE)
            copied["file"] = prepared
        new_query.append(copied)

    new_histories: list[dict[str, Any]] = []
    for history in histories:
        copied_text = _copy_text_item(history)
        if copied_text is not None:
            new_histories.append(copied_text)
            continue
        if history.get("obj") != "Human":
            new_histories.append(copy_json(dict(history)))
            continue
        copied = {key: copy_json(item) for key, item in history.items() if key != "value"}
        values = []
        for value in history.get("value") or []:
            if isinstance(value, Mapping) and isinstance(value.get("file"), Mapping):
                prepared = await prepare(value["file"], "history")
                if prepared is None:
                    continue
                values.append({**copy_json(dict(value)), "file": prepared})
            else:
                values.append(copy_json(value))
        copied["value"] = values
        new_histories.append(copied)
    return PreparedWorkflowFileContext(context, registrar, new_query, new_histories)
