"""The console screenshots in ``docs/images/console/`` are the ones the docs show, and only those: each is
written with ``FATHOM_UPDATE_SCREENSHOTS=1`` by the README walkthrough (tests/repo/readme_screenshots.py) or
copied from a browser test's (tests/console/conftest.py), which refreshes only images a page of ``docs/`` or
the README references, so an unreferenced file there would go stale unseen, and a referenced one that is
missing is a broken picture."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "images" / "console"


def _referenced() -> set[str]:
    texts = [p.read_text(encoding="utf-8") for p in [*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]]
    return {name for text in texts for name in re.findall(r"images/console/([\w.-]+\.png)", text)}


def test_every_console_screenshot_in_the_docs_exists_and_every_stored_one_is_shown() -> None:
    stored = {path.name for path in IMAGES.glob("*.png")}
    referenced = _referenced()
    assert not referenced - stored, f"docs show missing images: {sorted(referenced - stored)}"
    assert not stored - referenced, f"images no page shows (delete them): {sorted(stored - referenced)}"
