"""What every ``fathom`` command prints through: stdout, stderr, and the one-line error exit."""

from __future__ import annotations

import typer
from rich.console import Console

out = Console()
err = Console(stderr=True)


def fail(message: str) -> typer.Exit:
    """Print one line to stderr and give the exit to raise."""
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code=1)
