"""``fathom users``: the console's password users, for whoever runs the machine (a lost root password is
recovered here). Each command goes through the platform's account service, on SQLite or PostgreSQL alike;
a password it makes is printed once and never stored in clear."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Any, TypeVar

import typer

from fathom.cli.output import fail, out
from fathom.config import ConfigError, load_settings

T = TypeVar("T")

users_app = typer.Typer(help="Console users (password sign-in).", no_args_is_help=True)


class RoleChoice(StrEnum):
    member = "member"
    admin = "admin"
    owner = "owner"


def _with_platform(work: Callable[[Any, Any], Awaitable[T]]) -> T:
    """Run ``work(platform, boot)`` on a prepared platform (migrated; root team present), turning
    configuration and account errors into one line on stderr."""
    from fathom.cli.start_banner import print_credentials
    from fathom.platform import Platform
    from fathom.security.accounts import AccountError

    async def main() -> T:
        platform = Platform.build(load_settings())
        try:
            boot = await platform.prepare()
            print_credentials(boot)  # a first start made here must not lose root's password
            return await work(platform, boot)
        finally:
            await platform.db.close()

    try:
        return asyncio.run(main())
    except ConfigError as exc:
        raise fail(str(exc)) from None
    except AccountError as exc:
        raise fail(f"{exc.field}: {exc}" if exc.field else str(exc)) from None


def _print_password(username: str, password: str) -> None:
    out.print(f"Password of {username} (shown only this once; keep it):", highlight=False)
    out.print(f"  {password}", highlight=False)


@users_app.command("list")
def users_list() -> None:
    """List the root team's users: name, role, state and when each was created."""
    from fathom.security.accounts import is_disabled

    async def work(platform: Any, boot: Any) -> list[Any]:
        users: list[Any] = await platform.accounts.list_users(boot.team_id)
        return users

    users = _with_platform(work)
    out.print(f"{'USERNAME':<24} {'ROLE':<8} {'STATE':<9} CREATED", highlight=False)
    for user in users:
        state = "disabled" if is_disabled(user) else "active"
        created = user.created_at.strftime("%Y-%m-%d %H:%M")
        out.print(f"{user.username:<24} {user.role:<8} {state:<9} {created}", highlight=False)


@users_app.command("create")
def users_create(
    username: str = typer.Argument(..., help="3 to 64 characters: letters, digits and . _ @ -"),
    role: RoleChoice = typer.Option(RoleChoice.member, help="The member's role in the root team."),
) -> None:
    """Add a user to the root team with a new random password (printed once)."""
    password = secrets.token_urlsafe(12)

    async def work(platform: Any, boot: Any) -> str:
        user = await platform.accounts.create_user(boot.team_id, "owner", username, password, role.value)
        return str(user.username)

    name = _with_platform(work)
    out.print(f"Created the user {name} ({role.value}).", highlight=False)
    _print_password(name, password)


@users_app.command("reset-password")
def users_reset_password(
    username: str = typer.Argument(..., help="The user, e.g. root."),
) -> None:
    """Give a user a new random password (printed once), sign them out everywhere and lift a sign-in
    lock-out; a disabled user is enabled again."""

    async def work(platform: Any, boot: Any) -> tuple[str, str]:
        user = await platform.accounts.user_named(username)
        return user.username, await platform.accounts.reset_password(user.username)

    name, password = _with_platform(work)
    out.print(f"New password set for {name}; their sessions were ended.", highlight=False)
    _print_password(name, password)


@users_app.command("disable")
def users_disable(
    username: str = typer.Argument(..., help="The user to stop signing in."),
) -> None:
    """Stop a user signing in and end their sessions (`fathom users reset-password` enables them again).
    API keys are identities of their own and keep working until revoked."""

    async def work(platform: Any, boot: Any) -> str:
        return str((await platform.accounts.disable_user(username)).username)

    name = _with_platform(work)
    out.print(f"Disabled {name}: they can no longer sign in; their sessions were ended.", highlight=False)
