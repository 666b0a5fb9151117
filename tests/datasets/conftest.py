"""A platform on each database backend, for the knowledge-base application service tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fathom.config import Settings
from fathom.platform import Bootstrap, Platform
from fathom.store.db import Database


@pytest.fixture
async def platform(database: Database, tmp_path: Path) -> AsyncIterator[tuple[Platform, Bootstrap]]:
    settings = Settings(data_dir=tmp_path / "data", workers=0)
    settings.ensure_data_dir()
    built = Platform(settings=settings, db=database, secret_key="k" * 32)
    boot = await built.bootstrap()
    yield built, boot
