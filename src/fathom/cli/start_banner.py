"""What ``fathom serve`` prints once the server is listening: where it is and, on the first start, the
one-time credentials, in a box after every start-up log line (migrations, workers, uvicorn's own), so
they are the last thing on the screen rather than lost among the logs."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import uvicorn
from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from fathom import __version__
from fathom.cli.output import out

if TYPE_CHECKING:
    from fathom.platform import Bootstrap

_ALL_INTERFACES = ("0.0.0.0", "::", "")


def _base_url(host: str, port: int) -> str:
    """The address to open in a browser (loopback when the server listens on every interface)."""
    shown = "127.0.0.1" if host in _ALL_INTERFACES else host
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"


def print_credentials(boot: Bootstrap, base: str | None = None) -> None:
    """The credentials made just now (root's password, the admin key) with the console's address and the
    demo app's id, boxed; nothing when this start made none."""
    rows: list[tuple[str, str]] = []
    if base:
        rows.append(("Console", f"{base}/"))
    if boot.root_password:
        rows += [("User", "root"), ("Password", boot.root_password)]
    if boot.admin_key:
        rows.append(("API key", boot.admin_key))
    if not boot.root_password and not boot.admin_key:
        return
    if boot.demo_app_id:
        rows.append(("Demo app", boot.demo_app_id))
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True, min_width=8)
    grid.add_column(no_wrap=True)
    for label, value in rows:
        grid.add_row(label, value)
    hint = Text(
        "\nShown only this once: keep them. Lost the password?\n  fathom users reset-password root"
        "\nMore keys: fathom keys create",
        style="dim",
    )
    title = "[bold green]First start: your credentials[/]"
    out.print(Panel(Group(grid, hint), title=title, expand=False, border_style="green"), highlight=False)


def print_ready(settings_host: str, port: int, boot: Bootstrap) -> None:
    """The server's addresses, then the first start's credentials (if any)."""
    base = _base_url(settings_host, port)
    print_credentials(boot, base)
    out.print(
        f"Fathom {__version__} on {base}  (console: {base}/, API docs: {base}/docs)",
        highlight=False,
        soft_wrap=True,
    )
    sys.stdout.flush()


class AnnouncingServer(uvicorn.Server):
    """uvicorn's server that calls ``on_started`` once it listens (after its own start-up lines)."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and not self.should_exit:
            self._on_started()
