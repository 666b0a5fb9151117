"""Knowledge-base app serving cost: server CPU per chat beyond the query embedding and the search itself.

    .venv/bin/python benchmarks/kb_app.py [--rounds 3] [--requests 200] [--clients 4] [--docs 200]
        [--backend sqlite|postgres]

One ``fathom serve`` (fresh SQLite data dir, or with ``--backend postgres`` a database of its own on an
embedded PostgreSQL started for the run; no in-process job workers) and the scripted OpenAI-compatible
model server (its own process: its CPU is not Fathom's), as in ``benchmarks/api.py``. Seeding, through the
HTTP API: one knowledge base on the built-in local embedding model, ``--docs`` SciFact abstracts
(``../shared/datasets/scifact``; generated English paragraphs where it is absent) as text collections,
indexed by one ``fathom worker --once`` process on the same data dir (a few hundred chunks). Two simple
apps on the same model and prompt: ``kb app`` (the knowledge base, FastGPT's simple-app search settings
with ``--search-mode``, default ``mixedRecall``, token limit 3000: start → dataset search → AI chat with
the quotes) and ``chat app`` (no knowledge base: start → AI chat).

Three contenders per round, over the same questions (SciFact claims, in the same order for each):

- ``kb app``: chat completions to the knowledge-base app — server CPU per request;
- ``chat app``: the same questions to the app without a knowledge base — server CPU per request;
- ``search``: the same search the app's dataset search node asks for (same parameters, same service:
  ``DatasetSearchService.search``, query embedding included), called in this process on a platform over the
  same data dir, one query at a time, without the cut items the node does not keep (``keep_cut=False``)
  — this process's CPU per query.

**CPU beyond search** = CPU(kb app) − CPU(chat app) − CPU(search): what a knowledge base adds to a chat
besides embedding the question and searching (the node's parameter handling, quotes into the prompt, the
quote list in the response and the stored chat item, the longer graph). Each round runs every contender
for ``--requests`` requests (``--clients`` closed-loop clients for the two apps), in an order rotated by
one each round, in two modes: ``json`` (``detail: false``) and ``sse`` (``stream``, ``detail: true``:
the console's case, whose ``flowResponses`` carries the quote list). CPU is utime + stime (server: from
``/proc``; search: ``time.process_time``); the report gives min / median / max over rounds. On PostgreSQL
the figures are Fathom's CPU (the server's, and this process's for the search); the database server's
own CPU is in none of the three (it runs in its own processes), so "beyond search" is what Fathom spends.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform as platform_module
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api  # noqa: E402

KB_APP = "kb app"
CHAT_APP = "chat app"
SEARCH = "search"
SCIFACT = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "scifact"
SYSTEM_PROMPT = "Be brief."


# -- corpus --------------------------------------------------------------------------------------


def corpus(docs: int, questions: int) -> tuple[list[tuple[str, str]], list[str]]:
    """(``docs`` (name, text) documents, ``questions`` questions): SciFact's where present."""
    if (SCIFACT / "corpus.jsonl").exists():
        with (SCIFACT / "corpus.jsonl").open() as lines:
            rows = [json.loads(line) for line in itertools.islice(lines, docs)]
        with (SCIFACT / "queries.jsonl").open() as lines:
            claims = [json.loads(line)["text"] for line in itertools.islice(lines, questions)]
        return [(f"{row['_id']}.txt", f"{row['title']}\n\n{row['text']}") for row in rows], claims
    rng = random.Random(7)
    vocabulary = (
        "cell protein gene patient trial dose risk blood brain tumour receptor signal mouse human "
        "increase decrease cause effect treatment response level expression pathway infection"
    )
    words = vocabulary.split()

    def sentence() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(8, 20))).capitalize() + "."

    texts = [(f"doc{n}.txt", " ".join(sentence() for _ in range(rng.randint(6, 14)))) for n in range(docs)]
    return texts, [sentence() for _ in range(questions)]


# -- seeding -------------------------------------------------------------------------------------


def data(response: httpx.Response) -> Any:
    body = response.json()
    if body.get("code") != 200:
        raise RuntimeError(f"{response.request.url}: {body}")
    return body["data"]


def seed(
    servers: api.Servers, documents: list[tuple[str, str]], search: dict[str, Any], database_url: str | None
) -> dict[str, str]:
    """The knowledge base (indexed by a ``fathom worker --once``) and the two apps: their ids."""
    headers = {"Authorization": f"Bearer {servers.key}"}
    with httpx.Client(base_url=servers.fathom_url, headers=headers, timeout=120) as client:
        kb = data(client.post("/api/core/dataset/create", json={"name": "SciFact"}))
        for name, text in documents:
            body = {"datasetId": kb, "name": name, "text": text}
            data(client.post("/api/core/dataset/collection/create/text", json=body))
        env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
        env.update({"FATHOM_DATA_DIR": str(servers.data_dir), "FATHOM_LOG_LEVEL": "warning"})
        if database_url is not None:
            env["FATHOM_DATABASE_URL"] = database_url
        subprocess.run(
            [sys.executable, "-m", "fathom", "worker", "--once"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        rows: list[dict[str, Any]] = []
        while True:  # every page (the route caps the page size)
            body = {"datasetId": kb, "offset": len(rows), "pageSize": 30}
            page = data(client.post("/api/core/dataset/collection/listV2", json=body))
            rows += page["list"]
            if not page["list"] or len(rows) >= int(page["total"]):
                break
        statuses = {row["status"] for row in rows}
        if len(rows) != len(documents):
            raise RuntimeError(f"{len(rows)} collections listed, {len(documents)} created")
        if statuses != {"ready"}:
            raise RuntimeError(f"collections not indexed: {statuses}")
        config = {"model": api.MODEL, "systemPrompt": SYSTEM_PROMPT}
        with_kb = {**config, "datasets": [{"datasetId": kb}], "datasetSearchSetting": search}
        apps = {
            KB_APP: data(client.post("/api/core/app/create", json=app_body("kb", with_kb))),
            CHAT_APP: data(client.post("/api/core/app/create", json=app_body("chat", config))),
        }
    chunks = sum(int(row.get("dataAmount") or 0) for row in rows)
    print(f"knowledge base: {len(documents)} documents, {chunks} chunks", flush=True)
    return {"kb": kb, **apps}


def app_body(name: str, config: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "type": "simple", "simpleConfig": config}


# -- the contenders ------------------------------------------------------------------------------


@dataclass
class Asking(api.Target):
    """A chat target whose requests cycle through the questions (restarted for every share)."""

    questions: tuple[str, ...] = ()
    detail: bool = False
    sent: int = 0

    def body_for(self, client: int, stream: bool) -> dict[str, Any]:
        question = self.questions[self.sent % len(self.questions)]
        self.sent += 1
        return {
            **self.body,
            "stream": stream,
            "detail": self.detail,
            "messages": [{"role": "user", "content": question}],
        }


class InProcessSearch:
    """The dataset search node's search, called on a platform of this process over the server's data dir."""

    def __init__(
        self, data_dir: Path, dataset_id: str, search: dict[str, Any], database_url: str | None
    ) -> None:
        self.data_dir, self.dataset_id, self.search = data_dir, dataset_id, search
        self.database_url = database_url
        self.platform: Any = None
        self.team_id = ""

    async def start(self) -> None:
        from fathom.config import Settings
        from fathom.platform import Platform

        settings = Settings(
            data_dir=self.data_dir, database_url=self.database_url, workers=0, seed_demo=False
        )
        self.platform = Platform.build(settings)
        self.team_id = (await self.platform.prepare()).team_id

    def params(self, question: str) -> Any:
        from fathom.knowledge.search import SearchDatasetDataParams

        s = self.search
        return SearchDatasetDataParams.model_validate(  # as the dataset search node builds them
            {
                "queries": [question],
                "reRankQuery": question,
                "datasetIds": [self.dataset_id],
                "similarity": s["similarity"],
                "limit": s["limit"],
                "searchMode": s["searchMode"],
                "embeddingWeight": s["embeddingWeight"],
                "usingReRank": s["usingReRank"],
                "rerankWeight": s["rerankWeight"],
                "rerankModel": None,
                "collectionFilterMatch": None,
            }
        )

    async def share(self, questions: list[str], requests: int, clients: int) -> api.Share:
        for question in questions[:4]:  # warm
            await self.platform.search.search(self.team_id, self.params(question), keep_cut=False)
        took: list[float] = []
        sent = 0

        async def client() -> None:
            nonlocal sent
            while sent < requests:
                question = questions[sent % len(questions)]
                sent += 1
                started = time.perf_counter()
                response = await self.platform.search.search(
                    self.team_id, self.params(question), keep_cut=False
                )
                took.append(time.perf_counter() - started)
                if not response.search_res:
                    raise RuntimeError("the search found nothing")

        cpu_before, started = time.process_time(), time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_before
        return api.Share(requests, 0, wall, cpu, took, took)

    async def close(self) -> None:
        await self.platform.close()


Results = dict[str, dict[str, list[api.Share]]]  # mode → contender → one share per round


async def run_rounds(
    targets: dict[str, Asking], search: InProcessSearch, questions: list[str], args: argparse.Namespace
) -> Results:
    await search.start()
    names = [*targets, SEARCH]
    results: Results = {}
    try:
        for number in range(args.rounds):
            order = names[number % len(names) :] + names[: number % len(names)]
            print(f"round {number + 1}: {', '.join(order)}", flush=True)
            for mode in ("json", "sse"):
                for name in order:
                    if name == SEARCH:
                        share = await search.share(questions, args.requests, args.clients)
                    else:
                        target = targets[name]
                        target.sent, target.detail = 0, mode == "sse"
                        share = await api.closed_loop(
                            target, stream=mode == "sse", clients=args.clients, requests=args.requests
                        )
                    results.setdefault(mode, {}).setdefault(name, []).append(share)
                    print(
                        f"  {mode:4} {name:17} {share.requests:5} req "
                        f"{1000 * share.cpu / share.requests:7.2f} ms CPU/req  "
                        f"p50 {api.p50_ms(share.total):7.1f} ms  errors {share.errors}",
                        flush=True,
                    )
    finally:
        await search.close()
    return results


def report(results: Results, args: argparse.Namespace, sides: list[str]) -> dict[str, Any]:
    def per_request(share: api.Share) -> float:
        return 1000 * share.cpu / share.requests if share.requests else float("nan")

    summary: dict[str, Any] = {"rounds": args.rounds, "requests": args.requests, "ms_cpu_per_request": {}}
    print()
    print("| code | mode | kb app | chat app | search | **beyond search** = kb app − chat app − search |")
    print("|---|---|---|---|---|---|")
    for side in sides:
        for mode in ("json", "sse"):
            kb, chat = (f"{name}{side}" for name in (KB_APP, CHAT_APP))
            rows = {name: [per_request(s) for s in results[mode][name]] for name in (kb, chat, SEARCH)}
            beyond = [k - c - s for k, c, s in zip(rows[kb], rows[chat], rows[SEARCH], strict=True)]
            summary["ms_cpu_per_request"][f"{mode}{side}"] = {**rows, "beyond search": beyond}
            code = side.strip(" ()") or "this"
            print(
                f"| {code} | {mode} | {api.spread(rows[kb])} | {api.spread(rows[chat])} "
                f"| {api.spread(rows[SEARCH])} | **{api.spread(beyond)}** |"
            )
    errors = sum(s.errors for shares in results.values() for group in shares.values() for s in group)
    summary["errors"] = errors
    print("\nms of CPU per request, min / median / max over rounds")
    print(
        f"errors: {errors}; machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, "
        f"Python {platform_module.python_version()}"
    )
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200, help="per contender, mode and round")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--docs", type=int, default=200, help="documents in the knowledge base")
    parser.add_argument("--questions", type=int, default=50, help="distinct questions, cycled")
    parser.add_argument(
        "--search-mode", default="mixedRecall", choices=("embedding", "fullTextRecall", "mixedRecall")
    )
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--before", type=Path, help="also serve this checkout's code, interleaved")
    parser.add_argument("--json", type=Path, help="also write the summary here")
    args = parser.parse_args()
    documents, questions = corpus(args.docs, args.questions)
    search = {
        "similarity": 0,
        "limit": 3000,
        "searchMode": args.search_mode,
        "embeddingWeight": 0.5,
        "usingReRank": False,
        "rerankWeight": 0.5,
    }
    sides: dict[str, dict[str, str]] = {"": {}}
    if args.before is not None:
        source = args.before.resolve() / "src"
        if not (source / "fathom").is_dir():
            parser.error(f"--before: {args.before} has no src/fathom (give a checkout of this repository)")
        sides[" (before)"] = {"PYTHONPATH": str(source)}
    running: list[api.Servers] = []
    postgres: Any = None
    try:
        targets: dict[str, Asking] = {}
        searcher: InProcessSearch | None = None
        for number, (side, env) in enumerate(sides.items()):
            database_url = None
            if args.backend == "postgres":
                if postgres is None:
                    from fathom.store.pg_embedded import EmbeddedPostgres

                    postgres = EmbeddedPostgres()
                    postgres.start()
                database_url = postgres.create_database(f"kb_app_{number}")
            servers = api.start_servers_with(env, database_url)
            running.append(servers)
            ids = seed(servers, documents, search, database_url)
            auth = {"Authorization": f"Bearer {servers.key}"}
            url = servers.fathom_url + "/api/v1/chat/completions"
            for name in (KB_APP, CHAT_APP):
                body = {"appId": ids[name]}
                targets[f"{name}{side}"] = Asking(
                    f"{name}{side}", url, body, servers.fathom, auth, questions=tuple(questions)
                )
            if searcher is None:
                searcher = InProcessSearch(servers.data_dir, ids["kb"], search, database_url)
        assert searcher is not None
        results = asyncio.run(run_rounds(targets, searcher, questions, args))
        summary = report(results, args, list(sides))
        if args.json:
            args.json.write_text(json.dumps(summary, indent=1))
    finally:
        for servers in running:
            servers.stop()
        if postgres is not None:
            postgres.stop()


if __name__ == "__main__":
    main()
