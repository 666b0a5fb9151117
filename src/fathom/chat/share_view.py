"""What a share link's visitor sees of a run and of their stored answers, by the link's settings:

- ``responseDetail`` false: no node responses at all (no quotes, no node details): the
  ``flowResponses`` / ``flowNodeResponse`` frames are dropped, ``responseData`` is left out and a
  record's ``totalQuoteList`` is empty; the answer's citation markers are removed.
- ``showNodeStatus`` false: no ``flowNodeStatus`` frames (which node is running).
- ``showRawSource`` false: quotes keep their text and source name but lose what opens the raw source
  (``sourceId``, ``collectionId``, ``datasetId``), in the runs inside a node's response too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fathom.chat.channel import Frame
from fathom.store.protocols import ShareLinkRecord
from fathom.workflow.result import NESTED_RESPONSES

RESPONSE_EVENTS = frozenset({"flowResponses", "flowNodeResponse"})
RAW_SOURCE_FIELDS = ("sourceId", "collectionId", "datasetId")


@dataclass(frozen=True)
class ShareView:
    response_detail: bool
    show_node_status: bool
    show_raw_source: bool

    @classmethod
    def of(cls, link: ShareLinkRecord) -> ShareView:
        return cls(link.response_detail, link.show_node_status, link.show_raw_source)

    def frame(self, frame: Frame) -> Frame | None:
        """The frame as the visitor gets it, or None when the link hides it."""
        if frame.event == "flowNodeStatus" and not self.show_node_status:
            return None
        if frame.event in RESPONSE_EVENTS:
            if not self.response_detail:
                return None
            if frame.event == "flowResponses" and isinstance(frame.data, list):
                return Frame(frame.seq, frame.event, self.responses(frame.data))
            if isinstance(frame.data, dict):
                return Frame(frame.seq, frame.event, self._response(frame.data))
        return frame

    def responses(self, responses: list[Any]) -> list[Any]:
        """Node responses as the visitor may see them (none without ``responseDetail``)."""
        if not self.response_detail:
            return []
        return [self._response(r) if isinstance(r, dict) else r for r in responses]

    def quotes(self, quotes: list[Any]) -> list[Any]:
        if not self.response_detail:
            return []
        return [self._quote(q) for q in quotes]

    def _response(self, response: dict[str, Any]) -> dict[str, Any]:
        """The response's quotes, and those of the runs inside it (a loop's, a child app's, a tool
        call's), without what opens their raw source."""
        if self.show_raw_source:
            return response
        shown = dict(response)
        if isinstance(response.get("quoteList"), list):
            shown["quoteList"] = [self._quote(q) for q in response["quoteList"]]
        for key in NESTED_RESPONSES:
            if isinstance(inner := response.get(key), list):
                shown[key] = [self._response(r) if isinstance(r, dict) else r for r in inner]
        return shown

    def _quote(self, quote: Any) -> Any:
        if self.show_raw_source or not isinstance(quote, dict):
            return quote
        return {k: v for k, v in quote.items() if k not in RAW_SOURCE_FIELDS}
