"""``python -m fathom`` runs the CLI."""

from fathom.cli import main

main()
