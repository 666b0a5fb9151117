"""Query extension (spec §5.7): parse the LLM's rewrites, keep up to 3 diverse relevant ones.

Selection is FastGPT's lazy greedy (``useTextCosine``): with ``alpha = 0.3``,
``gain(c) = alpha * cos(c, original)`` while nothing is selected, else
``alpha * cos(c, original) + (1 - max cos(c, selected))``. Candidates sit in a priority queue by a
possibly stale gain; the top one is recomputed and accepted when the fresh gain is at least the stored
one, else pushed back with the fresh gain. The diversity term starts from 0 (negative similarities
do not count).

Note (kept for fidelity with FastGPT): the diversity term only ever adds to the initial gain, so a
fresh gain is never below its stale value and the first candidate popped is always accepted: the
selection equals the top ``k`` candidates by relevance. The tests pin this.
"""

from __future__ import annotations

import heapq
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fathom.knowledge.text import letters_and_digits

MAX_SELECTED_QUERIES = 3
RELEVANCE_ALPHA = 0.3
GENERATE_COUNT = 10  # rewrites asked of the model


def extension_prompt(background: str) -> str:
    """Instructions for the rewrite model (the app's background is optional)."""
    parts = [
        "## Role\nYou rewrite the user's latest question so that it can be searched on its own: "
        "resolve pronouns and references from the conversation, keep the meaning, and vary the wording.",
    ]
    if background:
        parts.append(f"## Background\n{background}")
    parts.append(
        f"## Output\nReply with a JSON array of at most {GENERATE_COUNT} strings, each one rewritten "
        'question, e.g. ["...", "..."]. Reply [] when the question needs no rewrite.'
    )
    return "\n\n".join(parts)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 when either vector is all zeros."""
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return 0.0 if norm == 0 else dot / norm


def _lazy_greedy_select(
    original: Sequence[float],
    candidates: Sequence[Sequence[float]],
    k: int = MAX_SELECTED_QUERIES,
    alpha: float = RELEVANCE_ALPHA,
) -> list[int]:
    """Indexes of the chosen candidates, in selection order (at most ``min(k, len(candidates))``)."""
    k = min(k, len(candidates))
    if k <= 0:
        return []
    relevance = [alpha * _cosine(c, original) for c in candidates]
    selected: list[int] = []

    def gain(i: int) -> float:
        if not selected:
            return relevance[i]
        closest = max([0.0, *(_cosine(candidates[i], candidates[j]) for j in selected)])
        return relevance[i] + (1 - closest)

    heap = [(-relevance[i], i) for i in range(len(candidates))]
    heapq.heapify(heap)
    while heap and len(selected) < k:
        stored, i = heapq.heappop(heap)
        fresh = gain(i)
        if fresh >= -stored:
            selected.append(i)
        else:
            heapq.heappush(heap, (-fresh, i))
    return selected


def parse_query_extension_output(text: str) -> list[str]:
    """The rewrites in an LLM answer: the JSON array between the first ``[`` and the last ``]``.

    Escaped newlines and backslashes and double spaces are removed first; single-quoted strings and
    trailing commas (JSON5) are tolerated. Anything unparsable or not a non-empty array gives ``[]``.
    """
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        return []
    body = text[start : end + 1].replace("\\n", "").replace("\\", "")
    body = re.sub(r" {2,}", " ", body)
    parsed: Any = _loads_json5(body)
    if not isinstance(parsed, list):
        return []
    return [str(item).strip() for item in parsed if isinstance(item, str | int | float) and str(item).strip()]


def _loads_json5(body: str) -> Any:
    """JSON5 via the ``json5`` package when installed, else JSON with single quotes and trailing
    commas tolerated; None when unparsable."""
    try:
        import json5

        return json5.loads(body)
    except ImportError:
        pass
    except ValueError:
        return None
    for candidate in (body, _json5_to_json(body)):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


def _json5_to_json(body: str) -> str:
    body = re.sub(r",\s*]", "]", body)
    return re.sub(r"'([^']*)'", lambda m: json.dumps(m.group(1), ensure_ascii=False), body)


@dataclass(frozen=True)
class ExtendedQueries:
    """``searchQueries`` (the original first) and the ``reRankQuery`` built from them."""

    search_queries: list[str]
    re_rank_query: str


def _build_extended_queries(query: str, selected: Sequence[str]) -> ExtendedQueries:
    """Dedupe ``[query, *selected]`` by their letters and digits; join them by ``\\n`` for rerank."""
    seen: set[str] = set()
    queries: list[str] = []
    for text in [query, *selected]:
        key = letters_and_digits(text)
        if key in seen or not text.strip():
            continue
        seen.add(key)
        queries.append(text)
    return ExtendedQueries(queries, "\n".join(queries) if len(queries) > 1 else query)


async def _select_extension_queries(
    query: str, candidates: Sequence[str], embedder: Any, k: int = MAX_SELECTED_QUERIES
) -> ExtendedQueries:
    """Embed ``[query, *candidates]`` in one call, pick up to ``k`` by lazy greedy, build the queries.

    ``embedder.embed`` may return vectors or an object with ``vectors``."""
    candidates = [c for c in candidates if c.strip()]
    if not candidates:
        return _build_extended_queries(query, [])
    result = await embedder.embed([query, *candidates])
    vectors = result.vectors if hasattr(result, "vectors") else result
    chosen = _lazy_greedy_select(vectors[0], vectors[1:], k)
    return _build_extended_queries(query, [candidates[i] for i in chosen])


@dataclass(frozen=True)
class QueryExtension:
    """What query extension did for one search: the queries to run, the rerank query, and the model's
    token use (``input_tokens``/``output_tokens`` as the model reported or estimated them)."""

    queries: ExtendedQueries
    model_id: str
    input_tokens: int
    output_tokens: int


async def extend_search_query(
    query: str, model: Any, embedder: Any, *, background: str = ""
) -> QueryExtension:
    """Ask ``model`` (``complete(messages, temperature=…)`` → ``content``, ``usage``) for rewrites of
    ``query``, then keep up to 3 by lazy greedy over ``embedder``'s vectors (spec §5.7)."""
    messages = [
        {"role": "system", "content": extension_prompt(background)},
        {"role": "user", "content": query},
    ]
    result = await model.complete(messages, temperature=0.1)
    candidates = parse_query_extension_output(str(getattr(result, "content", "") or ""))
    extended = await _select_extension_queries(query, candidates, embedder)
    usage = getattr(result, "usage", None)
    config = getattr(model, "config", None)
    return QueryExtension(
        extended,
        str(getattr(config, "id", "") or getattr(model, "model_id", "") or ""),
        int(getattr(usage, "input_tokens", 0) or 0),
        int(getattr(usage, "output_tokens", 0) or 0),
    )
