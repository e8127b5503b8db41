"""EQ-Bench 3 end to end: a full rubric run, pairwise Elo among three (then four) runs with the judge served over
loopback, and a conversation killed with SIGKILL mid-turn that resumes without repeating finished turns.

Offline: the scenarios come from the mirror through the project's fetch code; models are scripted in process or
served by the fake OpenAI server (testing/fake_openai.py).
"""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import run_in_process
from empathybench.cli import app
from empathybench.instruments.eqbench3 import data
from empathybench.instruments.eqbench3.canned import canned_answer
from empathybench.instruments.eqbench3.elo import (
    BT_PRIOR,
    BT_SCALE,
    _same_model,
    anchor_map,
    bradley_terry,
    bradley_terry_table,
    position_bias,
    win_matrix,
)
from empathybench.instruments.eqbench3.pairwise import Judgement
from empathybench.models.base import ChatRequest, Draw
from empathybench.models.scripted import register_script
from empathybench.testing.fake_openai import FakeOpenAIServer

TEST_KEY = "sk-test-eqb3-elo-0123456789"
_MARKER = re.compile(r"QUALITY(\d)")
_VERDICT_KEY = re.compile(r'^\s*"([a-z_]+)":\s*"winner & disparity rating"', re.MULTILINE)


def _records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines()]


def _register_model(quality: int) -> str:
    """A scripted model whose every paragraph carries its quality mark (QUALITYn), in the required sections."""

    def answer(request: ChatRequest) -> str:
        text = canned_answer(ChatRequest(request.messages, request.sampling, tag="eqbench3"), Draw(quality)) or ""
        return text.replace("I notice the tension", f"QUALITY{quality} I notice the tension")

    name = f"eqb3-elo-q{quality}"
    register_script(name, answer)
    return f"scripted/{name}"


def _pairwise_judge(prompts: list[str]) -> Any:
    """Over the wire: the respondent with the higher quality mark wins every criterion; the trailing comma of the
    template's example JSON is copied, as judges do."""

    def answer(request: dict[str, Any]) -> str:
        prompt = request["messages"][-1]["content"]
        prompts.append(prompt)
        marks = _MARKER.findall(prompt)
        first_shown, second_shown = int(marks[0]), int(marks[-1])  # A0493's block comes before A0488's
        winner = "A0493" if first_shown > second_shown else "A0488"
        keys = _VERDICT_KEY.findall(prompt)
        lines = [f'  "{key}": "{winner}+++",' for key in keys]
        return '{\n  "chain_of_thought_reasoning": "scripted",\n' + "\n".join(lines) + "\n}"

    return answer


@pytest.fixture
def env(tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", str(mirror))
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    return tmp_path


def _run(out: Path, model: str, *extra: str) -> None:
    command = ["run", "--model", model, "--judge", "scripted/plausible-2", "--bench", "eqbench3", "--quiet"]
    done = CliRunner().invoke(app, [*command, *extra, "--out", str(out)])
    assert done.exit_code == 0, done.output[-2000:]


def test_a_full_rubric_run_makes_the_documented_calls(env: Path) -> None:
    out = env / "full"
    _run(out, _register_model(1), "--preset", "full")
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    result = summary["benchmarks"]["eqbench3"]
    protocol = data.load_protocol()
    assert result["n_items"] == len(protocol.scenarios) == 45
    assert result["counts"]["rubric_scored"] == 45 and result["counts"]["error"] == 0
    assert set(result["by_type_0_100"]) == {"roleplay", "drafting", "analysis"}
    assert len(result["abilities"]) == 11 and len(result["style_traits"]) == 12
    # every call went through the engine: 118 model calls and 45 judge calls per iteration (README, spec §1)
    turns = sum(len(s.turns) for s in protocol.scenarios.values())
    debriefs = sum(1 for s in protocol.scenarios.values() if s.type.value != "analysis")
    assert turns + debriefs == 118
    assert summary["usage"]["calls"] == 118 + 45 and summary["usage"]["cache_hits"] == 0
    assert summary["usage"]["prompt_tokens"] > 0 and summary["usage"]["completion_tokens"] > 0


def _compare(env: Path, server: FakeOpenAIServer, runs: list[Path], *extra: str) -> tuple[Any, dict[str, Any]]:
    out = env / "cmp.html"
    command = ["report", *map(str, runs), "--judge", "openai/fake", "--base-url", server.base_url, "--out", str(out)]
    done = CliRunner().invoke(app, [*command, "--quiet", *extra])
    assert done.exit_code == 0, done.output[-3000:]
    comparison = json.loads((env / "cmp.json").read_text("utf-8"))
    return done, comparison["instrument_comparisons"]["eqbench3"]


def test_pairwise_elo_among_three_runs_then_a_fourth_judges_only_its_pairs(env: Path) -> None:
    runs = [env / f"q{q}" for q in (1, 3, 2)]
    for run, quality in zip(runs, (1, 3, 2), strict=True):
        _run(run, _register_model(quality), "--preset", "quick")
    scenarios = {r["item_id"] for r in _records(runs[0])}
    assert len(scenarios) >= 3
    prompts: list[str] = []
    with FakeOpenAIServer(answer=_pairwise_judge(prompts)) as server:
        done, elo = _compare(env, server, runs)
        # every pair of runs on every shared scenario, in both orders
        assert server.requests_total == 3 * len(scenarios) * 2 == elo["counts"]["new_judge_calls"]
        assert not server.repeated_bodies()
        shown = [tuple(int(m) for m in (_MARKER.findall(p)[0], _MARKER.findall(p)[-1])) for p in prompts]
        assert sorted(shown) == sorted((b, a) for a, b in shown)  # each order has its reverse
        assert elo["counts"]["judgements"] == len(prompts)
        assert elo["counts"]["trailing_comma_repairs"] == len(prompts) and elo["counts"]["unreadable_verdicts"] == 0
        ratings = elo["ratings"]
        labels = [r["label"] for r in elo["runs"]]
        q1, q3, q2 = labels
        assert ratings[q3]["elo"] > ratings[q2]["elo"] > ratings[q1]["elo"]
        assert ratings[q1]["elo"] == 1200.0 and "first run" in elo["anchors"]  # no published anchor among them
        for row in ratings.values():
            assert row["ci_low"] < row["elo"] < row["ci_high"]
        bt = elo["bradley_terry"]
        assert bt[q3]["elo"] > bt[q2]["elo"] > bt[q1]["elo"] == 1200.0
        assert elo["win_matrix"][q3][q1]["win_share"] == 1.0 and elo["win_matrix"][q1][q2]["win_share"] == 0.0
        # the better respondent won in both orders: the first-shown won exactly half the decided judgements
        assert elo["position_bias"]["first_shown_win_share"] == 0.5
        assert elo["position_bias"]["order_disagreement_share"] == 0.0
        html = (env / "cmp.html").read_text("utf-8")
        assert "EQ-Bench 3 pairwise Elo" in html and "Pairwise win share" in html
        assert "| rank | run | Elo |" in (env / "cmp.md").read_text("utf-8")
        assert "EQ-Bench 3 pairwise Elo:" in done.output
        assert elo["self_judged"] == [] and "may favour itself" not in html
        assert elo["judge"]["model"] == "fake" and elo["judge_settings"] == {"temperature": 0.0, "max_tokens": 8000}
        assert set(elo["templates"]) == {
            "pairwise_prompt_eqbench3.txt",
            "pairwise_prompt_eqbench3_analysis.txt",
            "scenario_notes.txt",
        }
        assert all(len(t["sha256"]) == 64 for t in elo["templates"].values())
        assert TEST_KEY not in html + (env / "cmp.json").read_text("utf-8")

        # a fourth run: only its pairs are judged (the judgements file; the response cache is off)
        fourth = env / "q4"
        _run(fourth, _register_model(4), "--preset", "quick")
        before = server.requests_total
        _, elo4 = _compare(env, server, [*runs, fourth], "--no-cache")
        new_prompts = prompts[before:]
        assert server.requests_total - before == 3 * len(scenarios) * 2 == elo4["counts"]["new_judge_calls"]
        assert all("QUALITY4" in p for p in new_prompts)
        assert elo4["counts"]["from_judgements_file"] == 3 * len(scenarios) * 2
        top = max(elo4["ratings"], key=lambda m: elo4["ratings"][m]["elo"])
        assert "q4" in top

        # without the judgements file, the engine's response cache answers every call: the server is not asked
        (env / "cmp.eqbench3-judgements.jsonl").unlink()
        before = server.requests_total
        _, again = _compare(env, server, runs)
        assert server.requests_total == before
        assert again["usage"]["cache_hits"] == again["counts"]["new_judge_calls"] == 3 * len(scenarios) * 2
        assert again["ratings"] == elo["ratings"]


def test_judge_is_refused_for_one_run_and_for_runs_without_a_judged_comparison(env: Path) -> None:
    single = env / "single"
    _run(single, _register_model(1), "--preset", "quick", "--limit", "1")
    one = CliRunner().invoke(app, ["report", str(single), "--judge", "scripted/plausible-2"])
    assert one.exit_code != 0 and "at least two run directories" in str(one.exception)
    others = [env / "e1", env / "e2"]
    for out in others:
        done = CliRunner().invoke(
            app, ["run", "--model", "scripted/plausible", "--bench", "eqbench", "--limit", "2", "-q", "--out", str(out)]
        )
        assert done.exit_code == 0, done.output[-2000:]
    none = CliRunner().invoke(
        app, ["report", *map(str, others), "--judge", "scripted/plausible-2", "-o", str(env / "c.html")]
    )
    assert none.exit_code != 0 and "eqbench3" in str(none.exception)
    assert not (env / "c.html").exists()  # refused before anything was written
    zero = CliRunner().invoke(
        app, ["report", *map(str, others), "--judge", "scripted/plausible-2", "--max-concurrency", "0"]
    )
    assert zero.exit_code != 0 and "--max-concurrency must be between 1 and 256, not 0" in str(zero.exception)


def _judgement(test: str, other: str, scenario: str, test_first: bool, outcome: float) -> Judgement:
    plus = (3, 0) if outcome == 1.0 else (0, 3) if outcome == 0.0 else (1, 1)
    return Judgement(scenario, "1", test, other, test_first, outcome, *plus, 0.5)


def test_win_matrix_and_position_bias_from_constructed_judgements() -> None:
    judgements = [
        _judgement("a", "b", "1", True, 1.0),  # a wins when shown first
        _judgement("a", "b", "1", False, 0.0),  # and loses when shown second: the orders disagree
        _judgement("a", "b", "2", True, 1.0),
        _judgement("a", "b", "2", False, 1.0),
        _judgement("a", "c", "1", True, 0.5),
    ]
    matrix = win_matrix(judgements, ["a", "b", "c"])
    # scenario 1 sums to 3-3, a draw; scenario 2 is a's
    assert matrix["a"]["b"] == {"won": 1, "drawn": 1, "lost": 0, "win_share": 0.75}
    assert matrix["b"]["a"]["win_share"] == 0.25 and matrix["a"]["c"]["drawn"] == 1
    assert matrix["b"]["c"]["win_share"] is None  # never compared
    bias = position_bias(judgements)
    assert bias["decided_judgements"] == 4 and bias["first_shown_win_share"] == 0.75
    assert bias["groups_with_both_orders_decided"] == 2 and bias["order_disagreement_share"] == 0.5


def test_bradley_terry_companion() -> None:
    # two runs, a wins 3 of 4 scenarios: the strength ratio is (3 + prior) / (1 + prior), in Elo points
    ratings = bradley_terry([(0, 1, 1.0)] * 3 + [(0, 1, 0.0)], 2)
    expected = BT_SCALE * math.log10((3 + BT_PRIOR) / (1 + BT_PRIOR))
    assert ratings[0] - ratings[1] == pytest.approx(expected, abs=1e-6) and sum(ratings) == pytest.approx(0.0)
    # a run that won everything stays finite; draws only: equal
    assert all(math.isfinite(r) for r in bradley_terry([(0, 1, 1.0)] * 5, 2))
    assert bradley_terry([(0, 1, 0.5)] * 4, 2) == pytest.approx([0.0, 0.0])
    judgements = [_judgement("a", "b", str(s), True, 1.0 if s < 6 else 0.0) for s in range(8)]
    table = bradley_terry_table(judgements, ["b", "a"])
    assert table["b"]["elo"] == 1200.0 and table["a"]["elo"] > 1200.0  # the first run given is the anchor
    assert table["a"]["ci_low"] <= table["a"]["elo"] <= table["a"]["ci_high"]
    assert table["a"]["ci_high"] - table["a"]["ci_low"] > 0  # resampling scenarios moves it


def test_anchors_published_when_both_anchor_models_are_compared_else_the_first_run() -> None:
    raw = {"o3": 1600.0, "meta-llama/llama-3.2-1b-instruct": 1000.0, "mine": 1300.0}
    norm, text = anchor_map(raw, "mine")
    assert norm.apply(1600.0) == pytest.approx(1500.0) and norm.apply(1000.0) == pytest.approx(200.0)
    assert norm.apply(1300.0) == pytest.approx(850.0) and "published" in text
    norm, text = anchor_map({"mine": 1250.0, "other": 1100.0}, "mine")
    assert _same_model("openai/gpt-4.1", "gpt-4.1") and _same_model("openai/gpt-4.1 (run2)", "gpt-4.1")
    assert not _same_model("openai/gpt-4.1-mini", "gpt-4.1")
    assert norm.apply(1250.0) == 1200.0 and norm.apply(1100.0) == 1050.0 and "mine" in text


# --- kill -9 in the middle of a conversation ---------------------------------------------------------------------


def _roleplay_server_answer(request: dict[str, Any]) -> str:
    prompt = request["messages"][-1]["content"]
    if "# My response" in prompt or "# Draft" in prompt:
        turn = sum(1 for m in request["messages"] if m["role"] == "user")
        filler = "I notice what is under the words and want to answer it gently. " * 3
        return (
            f"# I'm thinking & feeling\nturn {turn} {filler}\n# They're thinking & feeling\n{filler}\n"
            f"# My response\n{filler}\n--"
        )
    return "Debrief: " + "what went well and what I missed. " * 10


@pytest.fixture
def slow_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(answer=_roleplay_server_answer, latency_s=0.6) as server:
        yield server


def test_kill_9_mid_conversation_resumes_without_repeating_finished_turns(
    tmp_path: Path, mirror: Path, slow_server: FakeOpenAIServer
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"), EMPATHYBENCH_MIRROR=str(mirror), OPENAI_API_KEY=TEST_KEY)
    out = tmp_path / "run"
    command = [
        *(sys.executable, "-m", "empathybench", "run", "--model", "openai/fake", "--base-url", slow_server.base_url),
        *("--judge", "scripted/plausible-2", "--bench", "eqbench3", "--preset", "quick", "--limit", "1"),
        *("--max-concurrency", "1", "--quiet", "--out", str(out)),
    ]
    first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        # the third turn is in flight: turns 1 and 2 were answered (and cached) before it was asked
        while slow_server.requests_total < 3:
            assert first.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no progress before the kill"
            time.sleep(0.02)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == -signal.SIGKILL
    asked_before = slow_server.body_counts
    assert sum(asked_before.values()) == 3

    second = run_in_process(command, env)
    assert second.returncode == 0, second.stderr[-2000:]
    record = _records(out)[-1]
    scenario = data.load_protocol().scenarios[record["item_id"]]
    assert record["task_status"] == "rubric_scored" and len(record["turns"]) == len(scenario.turns) >= 3
    assert [t["cached"] for t in record["turns"][:2]] == [True, True]
    # turns 1 and 2 were never asked again; only the turn cut by the kill was asked twice
    repeated = slow_server.repeated_bodies()
    assert len(repeated) == 1 and list(repeated.values()) == [2]
    (turn_3_body,) = repeated
    assert asked_before[turn_3_body] == 1
    expected_after = len(scenario.turns) - 2 + 1  # turn 3 again, any later turns, the debrief
    assert slow_server.requests_total == 3 + expected_after


def test_the_judgements_file_skips_a_line_cut_short_by_a_kill(tmp_path: Path) -> None:
    from empathybench.run.comparisons import JUDGEMENTS_FORMAT, read_judgements

    path = tmp_path / "j.jsonl"
    whole = {"format": JUDGEMENTS_FORMAT, "key": "k1", "verdict": {"overall_eq": "A0493+"}}
    path.write_text(json.dumps(whole) + "\n" + json.dumps({**whole, "key": "k2"})[:25], encoding="utf-8")
    assert list(read_judgements(path)) == ["k1"]


def test_bradley_terry_fits_of_a_stack_equal_the_fits_one_by_one() -> None:
    """The bootstrap fits its resamples together; each must be exactly the fit it would be alone, whether it
    converges early (lopsided), late (close) or has a run nobody compared."""
    import random

    import numpy as np

    from empathybench.instruments.eqbench3.elo import _bradley_terry_fits, _win_matrix

    draw = random.Random(7)
    stack = []
    for _ in range(40):
        outcomes = [(i, j, draw.choice([0.0, 0.5, 1.0])) for i, j in (draw.sample(range(4), 2) for _ in range(12))]
        outcomes += [(0, 1, 1.0)] * draw.randint(0, 20)  # some stacks lopsided
        stack.append(_win_matrix(outcomes, 5))  # run 4 is never compared
    together = _bradley_terry_fits(np.array(stack))
    for wins, fitted in zip(stack, together, strict=True):
        assert fitted.tolist() == _bradley_terry_fits(wins[None])[0].tolist()
    assert len({tuple(row) for row in together.round(6).tolist()}) > 30  # the fits differ from one another
