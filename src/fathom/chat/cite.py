"""Dataset citation markers in answers, as FastGPT's ``removeDatasetCiteText`` treats them.

A model that quotes knowledge-base chunks writes ``[<24-hex chunk id>](CITE)`` after a sentence. The API
(``/api/v1`` and ``/api/v2`` chat completions) removes them unless the request sets
``retainDatasetCite: true``; the literal placeholder ``[id](CITE)`` (a model copying the prompt's example)
is removed in both modes. The stored chat record keeps the raw answer, as FastGPT's does.
"""

from __future__ import annotations

import re

_ID_CITE = re.compile(r"[\[【][a-f0-9]{24}[\]】](?:\([^)]*\)?)?")
_PLACEHOLDER = re.compile(r"[\[【]id[\]】]\(CITE\)")
# a tail that may still grow into a marker once the next chunk arrives
_PARTIAL = re.compile(r"[\[【](?:[a-f0-9]{0,24}|id?|(?:[a-f0-9]{24}|id)[\]】](?:\([^)]{0,64})?)")
_OPENERS = ("[", "【")


def remove_dataset_cite_text(text: str, retain: bool) -> str:
    """``text`` without citation markers (``retain``: without the ``[id](CITE)`` placeholder only)."""
    if not text:
        return text
    if not retain:
        text = _ID_CITE.sub("", text)
    return _PLACEHOLDER.sub("", text)


class CiteStreamFilter:
    """The same removal over a stream of text chunks: a tail that could be the start of a marker is held
    back until the next chunk (or :meth:`flush`) decides it."""

    def __init__(self, retain: bool) -> None:
        self.retain = retain
        self._held = ""

    def feed(self, chunk: str) -> str:
        text = self._held + chunk
        cut = max(text.rfind(opener) for opener in _OPENERS)
        if cut >= 0 and _PARTIAL.fullmatch(text, cut):
            self._held = text[cut:]
            text = text[:cut]
        else:
            self._held = ""
        return remove_dataset_cite_text(text, self.retain)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return remove_dataset_cite_text(held, self.retain)

    @property
    def holding(self) -> bool:
        return bool(self._held)
