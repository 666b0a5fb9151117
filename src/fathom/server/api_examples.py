"""One recorded example per route, shown in the OpenAPI document and in ``docs/api-examples.md``.

``openapi_examples.json`` (beside this module) is written by ``tests/server/record_api_examples.py``,
which runs every route once against a live server; nothing in it is written by hand. Each entry:
``{method, multipart, request, status, response}`` under the route's path.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

EXAMPLES_FILE = Path(__file__).with_name("openapi_examples.json")
_BODY_METHODS = ("post", "put", "patch")


@cache
def load_examples() -> dict[str, Any]:
    if not EXAMPLES_FILE.exists():
        return {}
    examples: dict[str, Any] = json.loads(EXAMPLES_FILE.read_text())
    return examples


def attach_examples(document: dict[str, Any], examples: dict[str, Any]) -> None:
    """Put each path's recorded request and answer into its operations of ``document``."""
    for path, operations in document.get("paths", {}).items():
        example = examples.get(path)
        if example is None:
            continue
        request = example["request"]
        for method, operation in operations.items():
            if method in _BODY_METHODS and not example["multipart"]:
                for content in operation.get("requestBody", {}).get("content", {}).values():
                    content["example"] = request
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "query" and parameter["name"] in request:
                    parameter["example"] = request[parameter["name"]]
            answer = operation.get("responses", {}).get(str(example["status"]))
            if answer is not None:
                for media, content in answer.get("content", {}).items():
                    if media == "application/json" and not isinstance(example["response"], str):
                        content["example"] = example["response"]


def render_markdown(examples: dict[str, Any]) -> str:
    """``docs/api-examples.md``: every recorded example, in path order."""
    lines = [
        "# HTTP API: one recorded example per route",
        "",
        "Written by `make api-examples` (tests/server/record_api_examples.py), which runs every route once",
        "against a live server with the scripted model, as the team's owner; the same recording is each",
        "operation's example in `/openapi.json` and `/docs`. Do not edit by hand.",
        "",
    ]
    for path, example in examples.items():
        lines += [f"## `{example['method']} {path}`", ""]
        form = " (multipart: a `file` part and this `data` part)" if example["multipart"] else ""
        lines += [f"Request{form}:", "", "```json", json.dumps(example["request"], ensure_ascii=False), "```"]
        answer = example["response"]
        shown = answer if isinstance(answer, str) else json.dumps(answer, indent=1, ensure_ascii=False)
        if len(shown) > 4000:
            shown = shown[:4000] + "\n… (cut)"
        fence = "text" if isinstance(answer, str) else "json"
        lines += ["", f"→ HTTP {example['status']}", "", f"```{fence}", shown, "```", ""]
    return "\n".join(lines)
