"""Parsers against real documents.

``doc-parsing-docling``: every file is parsed and compared with the expected Markdown (written by
another parser, docling) using a tolerant metric: the Dice coefficient of the multisets of lower-cased
word tokens (``\\w+``), i.e. 2·|A∩B| / (|A| + |B|). Markdown syntax and layout do not count, words and
numbers do. Each format's mean must stay above a floor set below the measured mean with margin.

``pdf-samples-pypdf``: nothing crashes (only ``DocumentParseError`` may be raised) and encrypted files
raise ``EncryptedDocumentError`` naming the file. The two 117-page GeoTopo files are skipped for time.
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest

from fathom.knowledge.parse import DocumentParseError, EncryptedDocumentError, parse_document

DATASETS = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"
DOCLING = DATASETS / "doc-parsing-docling"
PYPDF = DATASETS / "pdf-samples-pypdf"

# measured means (docs/knowledge.md): pdf 0.94, docx 0.86, pptx 0.80, xlsx 0.87, html 0.90, csv 1.00, md 0.86
FLOORS = {"pdf": 0.85, "docx": 0.76, "pptx": 0.70, "xlsx": 0.77, "html": 0.82, "csv": 0.95, "md": 0.78}


def _tokens(text: str) -> collections.Counter[str]:
    return collections.Counter(re.findall(r"\w+", text.lower()))


def dice(a: str, b: str) -> float:
    ta, tb = _tokens(a), _tokens(b)
    total = sum(ta.values()) + sum(tb.values())
    return 1.0 if total == 0 else 2 * sum((ta & tb).values()) / total


def test_dice_metric() -> None:
    assert dice("| Hello | world |", "# hello\n\nWorld") == 1.0
    assert dice("a b", "c d") == 0.0
    assert dice("a a b", "a b") == pytest.approx(0.8)


@pytest.fixture(scope="module")
def docling_scores() -> dict[str, list[float]]:
    if not DOCLING.is_dir():
        pytest.skip(f"dataset not found at {DOCLING}")
    scores: dict[str, list[float]] = collections.defaultdict(list)
    for entry in json.loads((DOCLING / "manifest.json").read_text()):
        expected = (DOCLING / entry["expected_md"]).read_text(encoding="utf-8")
        try:
            text = parse_document(DOCLING / entry["source"]).text
        except DocumentParseError:
            text = ""  # e.g. Strict OOXML, which python-docx cannot open: scores 0
        scores[entry["format"]].append(dice(text, expected))
    return scores


@pytest.mark.parametrize("fmt", sorted(FLOORS))
def test_docling_corpus_mean_similarity_per_format(docling_scores: dict[str, list[float]], fmt: str) -> None:
    values = docling_scores[fmt]
    assert values, fmt
    mean = sum(values) / len(values)
    print(f"{fmt}: {len(values)} files, mean Dice {mean:.3f}")
    assert mean >= FLOORS[fmt]


def _pypdf_files() -> list[dict[str, object]]:
    if not (PYPDF / "files.json").is_file():
        return []
    return [
        f for f in json.loads((PYPDF / "files.json").read_text())["data"] if int(f.get("pages") or 0) <= 20
    ]


@pytest.mark.skipif(not PYPDF.is_dir(), reason="pdf-samples-pypdf dataset not found")
@pytest.mark.parametrize("meta", _pypdf_files(), ids=lambda m: str(m["path"]))
def test_pdf_samples_never_crash_and_encrypted_files_say_so(meta: dict[str, object]) -> None:
    path = PYPDF / str(meta["path"])
    if meta["encrypted"]:
        with pytest.raises(EncryptedDocumentError) as info:
            parse_document(path)
        assert path.name in str(info.value) and "encrypted" in str(info.value)
        return
    try:
        parsed = parse_document(path)
    except EncryptedDocumentError:
        pytest.fail("an unencrypted file reported as encrypted")
    except DocumentParseError as exc:
        assert path.name in str(exc)  # a clear, named error is allowed for broken files
        return
    assert parsed.format == "pdf"
    assert parsed.metadata["pages"] == meta["pages"]
