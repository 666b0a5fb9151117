"""The graph a run executes (:class:`AppGraph`), and a published version's, kept once per version
(:class:`PublishedGraph`).

A published version is shared by every chat of its app: its JSON is kept as text and its graph loaded
once. A chat reads the chat settings and the history length from it; the workflow JSON itself (a copy of
its own, decoded from the text) only where something needs the document (a plugin's inputs, a graph that
did not load, the question guide when it is on, the chat's opening data) — a FastGPT app's is 6–85 KB,
30–380 µs to decode, which every chat request used to pay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fathom import json_text
from fathom.store.protocols import AppRecord
from fathom.workflow import WorkflowGraph, WorkflowGraphError, load_workflow


def _history_load_limit(workflow: dict[str, Any]) -> int:
    """Chat items to load: ``max(10, largest numeric history setting among nodes) × 2`` (spec §4.6.2)."""
    largest = 10
    for node in workflow.get("nodes") or []:
        for item in node.get("inputs") or []:
            if item.get("key") in ("history", "historyMaxAmount"):
                value = item.get("value")
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    largest = max(largest, int(value))
    return largest * 2


@dataclass(frozen=True)
class PublishedGraph:
    """A published version as its runs share it: the JSON as text (each run that needs the document
    decodes its own copy), the chat settings as text, the history length, the loaded graph (None when it
    does not load: the run reports why)."""

    frozen: str
    chat_config_text: str
    history_limit: int
    loaded: WorkflowGraph | None

    @classmethod
    def of(cls, workflow: dict[str, Any]) -> PublishedGraph:
        frozen = json_text.dumps(workflow)
        try:
            # a copy of its own: shares nothing with ``workflow``
            loaded: WorkflowGraph | None = load_workflow(json_text.loads(frozen))
        except WorkflowGraphError:
            loaded = None
        return cls(
            frozen=frozen,
            chat_config_text=json_text.dumps(workflow.get("chatConfig") or {}),
            history_limit=_history_load_limit(workflow),
            loaded=loaded,
        )


class AppGraph:
    """What a run executes: FastGPT workflow JSON plus where it came from (``version_id``: None for a
    draft or a posted workflow); ``loaded``: the published version's graph, validated once and shared by
    its runs (each builds runtime copies)."""

    def __init__(
        self,
        app: AppRecord,
        workflow: dict[str, Any] | None,
        version_id: str | None,
        loaded: WorkflowGraph | None = None,
        *,
        published: PublishedGraph | None = None,
    ) -> None:
        if workflow is None and published is None:
            raise ValueError("AppGraph: a workflow or a published version")
        self.app = app
        self.version_id = version_id
        self.loaded = published.loaded if published is not None and loaded is None else loaded
        self._workflow = workflow
        self._published = published
        self._chat_config: dict[str, Any] | None = None

    @property
    def workflow(self) -> dict[str, Any]:
        """The workflow document, this graph's own copy."""
        if self._workflow is None:
            assert self._published is not None
            self._workflow = json_text.loads(self._published.frozen)
        return self._workflow

    @property
    def chat_config(self) -> dict[str, Any]:
        if self._workflow is not None:
            config: dict[str, Any] = self._workflow.get("chatConfig") or {}
            return config
        if self._chat_config is None:
            assert self._published is not None
            self._chat_config = json_text.loads(self._published.chat_config_text)
        return self._chat_config

    @property
    def history_limit(self) -> int:
        """Chat items a run of this graph loads (:func:`_history_load_limit`)."""
        if self._workflow is None and self._published is not None:
            return self._published.history_limit
        return _history_load_limit(self.workflow)
