"""The root user's password on first start (issue 19 item 1): FATHOM_ROOT_PASSWORD when set (then nothing
is printed), else generated and returned once; later starts keep it; a short one is a one-line ConfigError."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from fathom.config import ConfigError, Settings
from fathom.platform import Bootstrap, Platform
from fathom.security.accounts import AccountError


async def start(tmp_path: Path, password: str | None) -> tuple[Platform, Bootstrap]:
    settings = Settings(
        data_dir=tmp_path / "data", workers=0, root_password=SecretStr(password) if password else None
    )
    platform = Platform.build(settings)
    return platform, await platform.prepare()


async def test_the_configured_root_password_signs_in_and_is_never_printed(tmp_path: Path) -> None:
    platform, boot = await start(tmp_path, "from the environment")
    try:
        assert boot.root_password is None and boot.admin_key
        signed = await platform.accounts.sign_in("root", "from the environment", "127.0.0.1")
        assert signed.user.member_id == boot.member_id and signed.user.role == "owner"
    finally:
        await platform.close()


async def test_a_generated_root_password_is_returned_once_and_kept(tmp_path: Path) -> None:
    platform, first = await start(tmp_path, None)
    await platform.close()
    assert first.root_password and len(first.root_password) >= 16
    platform, second = await start(tmp_path, "set too late to matter")
    try:
        assert second.root_password is None
        await platform.accounts.sign_in("root", first.root_password, "127.0.0.1")
        with pytest.raises(AccountError):
            await platform.accounts.sign_in("root", "set too late to matter", "127.0.0.1")
    finally:
        await platform.close()


async def test_a_short_root_password_is_a_config_error(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", workers=0, root_password=SecretStr("short"))
    platform = Platform.build(settings)
    try:
        with pytest.raises(ConfigError, match="FATHOM_ROOT_PASSWORD: at least 8 characters"):
            await platform.prepare()
    finally:
        await platform.close()
