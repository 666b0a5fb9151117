"""Deterministic stand-ins for embedding and rerank models (no weights, no network).

``hash_embedding`` is feature hashing: each word (and each CJK character) adds ±1 to a bucket chosen by
its hash; the vector is L2-normalised. Equal texts give equal vectors and texts sharing words are
closer than unrelated ones, which keeps retrieval tests meaningful.
"""

from __future__ import annotations

import hashlib
import math
import re

_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]|[^\W_]+", re.UNICODE)


def _text_terms(text: str) -> list[str]:
    """Lower-cased words, with every CJK character its own term."""
    return [match.group(0) for match in _WORD.finditer(text.lower())]


def _bucket(term: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


def hash_embedding(text: str, dim: int = 256) -> list[float]:
    """A unit vector of length ``dim`` determined by the text's terms (whole text when it has none)."""
    vector = [0.0] * dim
    terms = _text_terms(text) or [text]
    for term in terms:
        index, sign = _bucket(term, dim)
        vector[index] += sign
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:
        index, _ = _bucket(text + "\x00", dim)
        vector[index] = 1.0
        return vector
    return [v / norm for v in vector]


def overlap_score(query: str, document: str) -> float:
    """Relevance in [0, 1]: the share of the query's distinct terms found in the document."""
    query_terms = set(_text_terms(query))
    if not query_terms:
        return 0.0
    doc_terms = set(_text_terms(document))
    return len(query_terms & doc_terms) / len(query_terms)
