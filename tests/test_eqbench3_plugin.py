"""EQ-Bench 3 as a registered instrument: `empathybench run/list` end to end on scripted models and a scripted
judge, offline from the mirror (the scenarios are read through the project's fetch code)."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import cli_in_process, words_joined
from empathybench.cli import app
from empathybench.instruments.eqbench3 import data
from empathybench.models.base import ChatRequest, Draw, RequestRejectedError
from empathybench.models.scripted import register_script


def _env(tmp_path: Path, mirror: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"), EMPATHYBENCH_MIRROR=str(mirror))
    return env


def _cli(tmp_path: Path, mirror: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli_in_process(list(args), _env(tmp_path, mirror))


def _records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines()]


def test_quick_run_with_a_scripted_judge_writes_summary_and_reports(tmp_path: Path, mirror: Path) -> None:
    out = tmp_path / "run"
    done = _cli(
        tmp_path,
        mirror,
        *("run", "--model", "scripted/plausible", "--judge", "scripted/plausible-2"),
        *("--bench", "eqbench3", "--preset", "quick", "--out", str(out)),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((out / "summary.json").read_text("utf-8"))["benchmarks"]["eqbench3"]
    scenarios = data.load_protocol().scenarios
    records = _records(out)
    types = {scenarios[r["item_id"]].type.value for r in records}
    assert types == {"roleplay", "drafting", "analysis"}  # a handful of each type
    assert 3 <= len(records) < len(scenarios) and result["n_items"] == len(records)
    assert all(r["task_status"] == "rubric_scored" for r in records)
    # every turn of every conversation was answered, with the role-play sections where the type has them
    for record in records:
        assert len(record["turns"]) == len(scenarios[record["item_id"]].turns)
        if scenarios[record["item_id"]].type.value == "roleplay":
            assert all(t["section_coverage"] == 1.0 for t in record["turns"])
    # the headline is 5 x the pooled mean of the judge's allowed criteria: recompute it from the records
    per_task = [r["score_0_20"] for r in records]
    assert result["score"] == pytest.approx(5 * sum(per_task) / len(per_task))
    low, high = result["score_ci95"]
    assert low <= result["score"] <= high
    assert set(result["by_type_0_100"]) == types and result["abilities"]
    assert "plausible-2" in result["judge_model"] and "comparable" in result["judge_era"]
    run_info = json.loads((out / "run.json").read_text("utf-8"))
    assert "plausible-2" in json.dumps(run_info["judge"])
    html = words_joined((out / "report.html").read_text("utf-8"))
    assert "EQ-Bench 3 rubric score (0-100)" in html and "ability (0-20)" in html and "score 0-20" in html
    assert "## EQ-Bench 3\n" in (out / "report.md").read_text("utf-8")  # its section, under its profile title
    # the headline is the profile's row for it
    profile = json.loads((out / "summary.json").read_text("utf-8"))["profile"]
    row = next(r for r in profile if r["benchmark"] == "eqbench3")
    assert row["value"] == result["score"] and row["ci95"] == result["score_ci95"] and row["title"] == "EQ-Bench 3"

    # and comparisons pair its tasks: a second model against the first
    other = tmp_path / "other"
    again = _cli(
        tmp_path,
        mirror,
        *("run", "--model", "scripted/plausible-3", "--judge", "scripted/plausible-2"),
        *("--bench", "eqbench3", "--preset", "quick", "--out", str(other)),
    )
    assert again.returncode == 0, again.stderr[-2000:]
    compared = _cli(tmp_path, mirror, "report", str(out), str(other), "--out", str(tmp_path / "cmp.html"))
    assert compared.returncode == 0, compared.stderr[-2000:]
    assert f"on {len(records)} shared items" in compared.stdout
    assert "EQ-Bench 3 rubric score" in (tmp_path / "cmp.md").read_text("utf-8")


def test_without_a_judge_it_is_refused_with_one_line_before_any_call(tmp_path: Path, mirror: Path) -> None:
    out = tmp_path / "run"
    refused = _cli(tmp_path, mirror, "run", "--model", "scripted/plausible", "--bench", "eqbench3", "--out", str(out))
    assert refused.returncode != 0
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "--judge" in lines[0] and "Traceback" not in refused.stderr
    assert not out.exists() and not (tmp_path / "cache").exists()  # no run directory, no call cached


def test_list_shows_it(tmp_path: Path, mirror: Path) -> None:
    listed = _cli(tmp_path, mirror, "list")
    assert listed.returncode == 0 and "eqbench3" in listed.stdout and "EQ-Bench 3" in listed.stdout


def test_a_run_without_bench_leaves_it_out(tmp_path: Path, mirror: Path) -> None:
    from empathybench.instruments.registry import resolve_benchmarks

    assert "eqbench3" not in [b.name for b in resolve_benchmarks(None)]
    assert [b.name for b in resolve_benchmarks(["eqbench3"])] == ["eqbench3"]


def test_a_resumed_run_replays_the_finished_turns(
    tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from empathybench.instruments.eqbench3.canned import canned_answer

    state = {"fail_at_turn": 3, "calls": []}  # fails on the 3rd user message of the first conversation

    def flaky(request: ChatRequest) -> str:
        turn = sum(1 for m in request.messages if m.role == "user")
        state["calls"].append(turn)
        if turn == state["fail_at_turn"]:
            raise RequestRejectedError(400, "boom")
        return canned_answer(ChatRequest(request.messages, request.sampling, tag="eqbench3"), Draw(1)) or ""

    register_script("eqb3-flaky-cli", flaky)
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", str(mirror))
    out = tmp_path / "run"
    command = [
        *("run", "--model", "scripted/eqb3-flaky-cli", "--judge", "scripted/plausible-2"),
        *("--bench", "eqbench3", "--preset", "quick", "--limit", "1", "--out", str(out)),
    ]
    first = CliRunner().invoke(app, command)
    scenario = data.load_protocol().scenarios[_records(out)[0]["item_id"]]
    assert len(scenario.turns) >= 3
    assert state["calls"] == [1, 2, 3], first.output[-2000:]
    state.update(fail_at_turn=-1, calls=[])
    second = CliRunner().invoke(app, command)
    assert second.exit_code == 0, second.output[-2000:]
    # only the turns from the failed one on were asked again (turns 1-2 came from the cache), then the debrief
    assert state["calls"][0] == 3 and 1 not in state["calls"] and 2 not in state["calls"]
    record = _records(out)[-1]
    assert record["task_status"] == "rubric_scored"
    assert [t["cached"] for t in record["turns"]][:2] == [True, True] and record["turns"][2]["cached"] is False
