"""``examples/fastgpt_dataset_script.py``, written against FastGPT's dataset docs, runs unchanged against a
real Fathom server (its own process, plain HTTP) and finishes: its texts are trained in QA mode by the
knowledge base's ``agentModel`` (the scripted model), and the tag-filtered ``searchTest`` finds exactly the
question/answer pairs that model wrote for the collection carrying the tag."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_support import LiveServer, backend_database_url, free_port, start_live_server

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer, Turn
from fathom.testing.scripted_openai import RecordedRequest

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "fastgpt_dataset_script.py"
CONTEXT = re.compile(r"<Context>\n(.*?)\n</Context>", re.S)
MODEL = "scripted-agent"


def pairs_for(chunk: str) -> list[tuple[str, str]]:
    """The pairs the scripted model writes for a chunk: two per chunk, named after its first word."""
    first = chunk.split()[0]
    return [(f"What does the text say about {first}?", chunk), (f"Who wrote about {first}?", "The shop.")]


def qa_reply(request: RecordedRequest) -> Turn:
    chunk = CONTEXT.findall(request.messages[-1]["content"])[-1].strip()
    numbered = [f"Q{n}: {q}\nA{n}: {a}" for n, (q, a) in enumerate(pairs_for(chunk), start=1)]
    return Turn(content="\n".join(numbered))


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, ScriptedOpenAIServer]]:
    database_url = backend_database_url(request, "example_script")
    with ScriptedOpenAIServer(qa_reply) as scripted:
        root = tmp_path_factory.mktemp(f"example_{request.param}")
        settings = Settings(
            data_dir=root / "data",
            port=free_port(),
            workers=1,
            openai_base_url=scripted.base_url,
            chat_model=MODEL,
            database_url=database_url,
        )
        for server in start_live_server(settings):
            yield server, scripted


def test_the_fastgpt_dataset_script_runs_unchanged_in_qa_mode(
    served: tuple[LiveServer, ScriptedOpenAIServer],
) -> None:
    server, scripted = served
    env = {
        **os.environ,
        "FASTGPT_BASE_URL": server.base_url,
        "FASTGPT_API_KEY": server.admin_key,
        "FASTGPT_AGENT_MODEL": MODEL,
    }
    run = subprocess.run(
        [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == "done"

    # the knowledge base's agentModel was asked once per text, in the model the script named
    asked = scripted.requests_to("/chat/completions")
    assert len(asked) == 2 and {request.json["model"] for request in asked} == {MODEL}
    chunks = {CONTEXT.findall(request.messages[-1]["content"])[-1].strip() for request in asked}
    (refunds,) = [chunk for chunk in chunks if chunk.startswith("Refunds")]

    # the search filtered by the tag 'money' found exactly the pairs the model wrote for the refunds text
    found = [
        json.loads(line.removeprefix("  found: "))
        for line in run.stdout.splitlines()
        if line.startswith("  found: ")
    ]
    assert sorted((item["q"], item["a"]) for item in found) == sorted(pairs_for(refunds))
