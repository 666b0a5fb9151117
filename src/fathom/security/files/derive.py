"""Child file contexts (spec §6.5.4, ``runWithDerivedWorkflowFileContext``).

A child workflow (run-app node, plugin, tool) sees only the files selected for it, under the parent's
``max_file_amount`` quota, chosen in priority order: current query files, then explicit variable/node
files, then history files newest to oldest (output order is preserved). Unselected history file values
are removed, and every input is deep-copied so the child cannot mutate the parent's query or history.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fathom.security.files.context import WorkflowFileContext, WorkflowFileRegistrar
from fathom.security.files.refs import (
    CHILD_FILE_NOT_SELECTED,
    RegistrationSource,
    UrlDomainValidator,
    WorkflowFileError,
    WorkflowFileRef,
    file_key,
    file_url,
)

T = TypeVar("T")


@dataclass
class WorkflowFileStore:
    """The file context and registrar of the run currently executing (``None`` registrar: read-only)."""

    file_context: WorkflowFileContext
    registrar: WorkflowFileRegistrar | ChildFileRegistrar | None = None


_current: contextvars.ContextVar[WorkflowFileStore | None] = contextvars.ContextVar(
    "fathom_workflow_files", default=None
)


def current_workflow_files() -> WorkflowFileStore | None:
    """The file store of the workflow run executing in this task, if any."""
    return _current.get()


def set_workflow_files(store: WorkflowFileStore | None) -> contextvars.Token[WorkflowFileStore | None]:
    """Make ``store`` current for this task (the entry does this after preparing the root context)."""
    return _current.set(store)


@dataclass
class DerivedWorkflowFiles:
    """What a child run receives: its own context, filtered deep copies, and a quota-bound registrar."""

    store: WorkflowFileStore | None
    """The child's store; ``None`` when the parent run has no file context (nothing to isolate)."""
    query: list[dict[str, Any]]
    histories: list[dict[str, Any]]
    _parent: WorkflowFileContext | None = None
    _accepted: set[str] = field(default_factory=set)
    _rejected: set[str] = field(default_factory=set)

    @property
    def file_context(self) -> WorkflowFileContext | None:
        """The child's context (``None`` without a parent context)."""
        return self.store.file_context if self.store is not None else None

    def identity(self, file: Any) -> str | None:
        """The dedupe identity of a file value (the parent's identity when it is registered there)."""
        parent = self._parent
        if parent is not None:
            ref = parent.resolve(file) if isinstance(file, str) else parent.resolve_input_file(file)
            if ref is not None:
                return parent.get_identity(ref.model_url)
        key = file_key(file)
        if key is not None:
            return f"key:{key}"
        url = file_url(file)
        return f"url:{url}" if url is not None else None

    def is_selected(self, file: Any) -> bool:
        """Whether ``file`` was selected for the child."""
        identity = self.identity(file)
        return identity is not None and identity in self._accepted

    def filter_files(self, files: Sequence[T]) -> list[T]:
        """Deep copies of the ``files`` that were selected for the child."""
        if self._parent is None:
            return copy.deepcopy(list(files))
        return [copy.deepcopy(f) for f in files if self.is_selected(f)]

    def resolve_input_file(self, file: Any) -> str | None:
        """The child's model URL of ``file``; ``None`` if it lost to the quota; else refused."""
        context = self.file_context
        if context is None:
            return file_url(file)
        ref = context.resolve_input_file(file)
        if ref is not None:
            return ref.model_url
        if self.identity(file) in self._rejected:
            return None
        raise WorkflowFileError(CHILD_FILE_NOT_SELECTED)


class ChildFileRegistrar:
    """Registers files a child adds while it runs: through the parent registrar, within the quota."""

    def __init__(
        self,
        derived: DerivedWorkflowFiles,
        parent_registrar: WorkflowFileRegistrar | ChildFileRegistrar,
        selected: list[Any],
        validate_url_domain: UrlDomainValidator | None,
    ) -> None:
        self._derived = derived
        self._parent_registrar = parent_registrar
        self._selected = selected
        self._validate = validate_url_domain
        self._lock = asyncio.Lock()

    async def register_input_file(
        self, file: Mapping[str, Any], source: RegistrationSource
    ) -> WorkflowFileRef | None:
        async with self._lock:  # serialised, so the quota holds under concurrency
            store, parent = self._derived.store, self._derived._parent
            if store is None or parent is None:
                return None
            existing = store.file_context.resolve_input_file(file)
            if existing is not None:
                return existing
            if len(self._selected) >= parent.limits.max_file_amount:
                return None
            ref = await self._parent_registrar.register_input_file(file, source)
            if ref is None:
                return None
            self._selected.append(ref.model_url)
            identity = parent.get_identity(ref.model_url)
            if identity is not None:
                self._derived._accepted.add(identity)
            kwargs = {"validate_url_domain": self._validate} if self._validate else {}
            store.file_context = parent.derive(self._selected, **kwargs)
            return ref


def _derive_workflow_files(
    parent: WorkflowFileStore | None,
    *,
    files: Sequence[Any],
    query: Sequence[Mapping[str, Any]] = (),
    histories: Sequence[Mapping[str, Any]] = (),
    validate_url_domain: UrlDomainValidator | None = None,
) -> DerivedWorkflowFiles:
    """Select the child's files under the parent's quota and build its isolated context and inputs."""
    if parent is None:
        return DerivedWorkflowFiles(
            None, copy.deepcopy([dict(q) for q in query]), copy.deepcopy([dict(h) for h in histories])
        )

    parent_context = parent.file_context
    max_amount = max(parent_context.limits.max_file_amount, 0)
    derived = DerivedWorkflowFiles(WorkflowFileStore(parent_context), [], [], _parent=parent_context)
    seen: set[str] = set()
    selected: list[Any] = []

    def select(file: Any) -> bool:
        identity = derived.identity(file)
        if identity is not None and identity in seen:
            return identity in derived._accepted
        if identity is not None:
            seen.add(identity)
        if len(selected) >= max_amount:
            if identity is not None:
                derived._rejected.add(identity)
            return False
        selected.append(file)
        if identity is not None:
            derived._accepted.add(identity)
        return True

    kept_query = [item for item in query if not item.get("file") or select(item["file"])]
    for file in files:  # explicit variable/node files outrank old history files
        select(file)
    for history in reversed(histories):  # newest first when choosing...
        if history.get("obj") != "Human":
            continue
        for value in reversed(history.get("value") or []):
            if isinstance(value, Mapping) and value.get("file"):
                select(value["file"])
    kept_histories = []  # ...but the output keeps the original order
    for history in histories:
        if history.get("obj") == "Human":
            values = [
                v
                for v in history.get("value") or []
                if not (isinstance(v, Mapping) and v.get("file")) or derived.is_selected(v["file"])
            ]
            kept_histories.append({**history, "value": values})
        else:
            kept_histories.append(dict(history))
    derived.query = copy.deepcopy([dict(q) for q in kept_query])
    derived.histories = copy.deepcopy(kept_histories)
    kwargs = {"validate_url_domain": validate_url_domain} if validate_url_domain else {}
    store = WorkflowFileStore(parent_context.derive(selected, **kwargs))
    derived.store = store
    if parent.registrar is not None:
        store.registrar = ChildFileRegistrar(derived, parent.registrar, selected, validate_url_domain)
    return derived


async def run_with_derived_workflow_file_context(
    fn: Callable[[DerivedWorkflowFiles], Awaitable[T]],
    *,
    files: Sequence[Any],
    query: Sequence[Mapping[str, Any]] = (),
    histories: Sequence[Mapping[str, Any]] = (),
    validate_url_domain: UrlDomainValidator | None = None,
) -> T:
    """Run ``fn`` with the child's file store current (the parent's is restored afterwards)."""
    parent = current_workflow_files()
    derived = _derive_workflow_files(
        parent, files=files, query=query, histories=histories, validate_url_domain=validate_url_domain
    )
    token = _current.set(derived.store)
    try:
        return await fn(derived)
    finally:
        _current.reset(token)
