"""Run the scripted OpenAI-compatible server for a demo: ``python -m fathom.testing --port 8001``.

Without ``--script`` it echoes the last user message. A script file (YAML or JSON) is a list of turns:
strings, or mappings with ``content``, ``reasoning``, ``tool_calls: [{name, arguments}]``, ``status``,
``error``, ``delay``... (the fields of :class:`fathom.testing.Turn`). Loopback only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
from pathlib import Path
from typing import Any

from fathom.testing.scripted_openai import RecordedRequest, ScriptedOpenAIServer
from fathom.testing.scripted_turns import Turn, text_turn, turn_from_dict


def echo(request: RecordedRequest) -> Turn:
    """Reply with the last user message (text parts joined)."""
    messages = request.json.get("messages") or []
    last: dict[str, Any] = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    content = last.get("content", "")
    if isinstance(content, list):
        content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return text_turn(f"You said: {content}", delay=0.02)


def load_script(path: Path) -> list[Turn]:
    """Turns from a YAML or JSON list."""
    text = path.read_text(encoding="utf-8")
    data: Any
    if path.suffix.lower() == ".json":
        data = json.loads(text)
    else:
        import yaml

        data = yaml.safe_load(text)
    if not isinstance(data, list):
        raise SystemExit(f"{path}: expected a list of turns")
    return [turn_from_dict(item) for item in data]


def _main(argv: list[str] | None = None) -> None:
    """Parse arguments and serve until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m fathom.testing", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--script", type=Path, help="YAML/JSON list of turns (default: echo)")
    parser.add_argument("--model", default="scripted-chat")
    args = parser.parse_args(argv)
    script = load_script(args.script) if args.script else echo
    server = ScriptedOpenAIServer(script, model=args.model, port=args.port)
    with server:
        print(f"scripted OpenAI server on {server.base_url} (Ctrl-C to stop)", flush=True)
        print(
            f"  FATHOM_OPENAI_BASE_URL={server.base_url} FATHOM_CHAT_MODEL={args.model} fathom serve",
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    _main()
