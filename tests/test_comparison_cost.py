"""Cost of the judged comparisons (`empathybench report A B --judge SPEC`) against the fake OpenAI server (in
process; the killed command in a subprocess): `--dry-run` counts exactly the judge requests still missing,
`--max-cost` stops before exceeding the budget (exit 3, nothing lost) and a larger budget asks only for the rest,
`--batch` sends the judgements as one batch that a killed command resumes polling, and comparison.json, the page and
comparison.md show the judge's tokens and cost.

Offline: the two EQ-Bench 3 runs are made in process by scripted models from the mirror's scenarios.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import kill_once_polled, run_in_process
from empathybench.cli import app
from empathybench.instruments.eqbench3.canned import canned_answer
from empathybench.models.base import ChatRequest, Draw
from empathybench.models.prices import price_table
from empathybench.models.scripted import register_script
from empathybench.run.cost import estimate_input_tokens
from empathybench.testing.fake_openai import FakeOpenAIServer, count_prompt_tokens

TEST_KEY = "sk-test-comparison-cost-0123456789"
PRICE = ["--judge-price", "input=1,output=2"]  # USD per million tokens
POLL = ["--batch-poll-interval", "0.05"]
SCENARIOS = 3
_MARKER = re.compile(r"QUALITY(\d)")
_VERDICT_KEY = re.compile(r'^\s*"([a-z_]+)":\s*"winner & disparity rating"', re.MULTILINE)


def _model(quality: int) -> str:
    """A scripted model whose replies carry their quality mark, in the sections EQ-Bench 3 asks for."""

    def answer(request: ChatRequest) -> str:
        text = canned_answer(ChatRequest(request.messages, request.sampling, tag="eqbench3"), Draw(quality)) or ""
        return text.replace("I notice the tension", f"QUALITY{quality} I notice the tension")

    name = f"cmp-cost-q{quality}"
    register_script(name, answer)
    return f"scripted/{name}"


def _judge(asked: list[list[dict[str, Any]]]) -> Any:
    """The respondent with the higher quality mark wins every criterion (over the wire)."""

    def answer(request: dict[str, Any]) -> str:
        asked.append(request["messages"])
        prompt = request["messages"][-1]["content"]
        marks = _MARKER.findall(prompt)
        winner = "A0493" if int(marks[0]) > int(marks[-1]) else "A0488"
        lines = [f'  "{key}": "{winner}++"' for key in _VERDICT_KEY.findall(prompt)]
        return '{\n  "chain_of_thought_reasoning": "scripted",\n' + ",\n".join(lines) + "\n}"

    return answer


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    mirror = Path(os.environ["EMPATHYBENCH_MIRROR"])  # the offline mirror (conftest.py)
    if not mirror.is_dir():
        pytest.skip(f"the offline mirror is not at {mirror}")
    base = tmp_path_factory.mktemp("runs")
    made = [base / "q1", base / "q2"]
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_")):
                patch.delenv(name)
        patch.setenv("EMPATHYBENCH_CACHE_DIR", str(base / "cache"))
        patch.setenv("EMPATHYBENCH_MIRROR", str(mirror))
        for out, quality in zip(made, (1, 2), strict=True):
            command = ["run", "-m", _model(quality), "--judge", "scripted/plausible-2", "-b", "eqbench3"]
            command += ["--preset", "quick", "--limit", str(SCENARIOS), "--quiet", "--out", str(out)]
            done = CliRunner().invoke(app, command)
            assert done.exit_code == 0, done.output[-2000:]
    return made


def _env(cache: Path, mirror: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(cache), EMPATHYBENCH_MIRROR=str(mirror), OPENAI_API_KEY=TEST_KEY)
    return env


def _report(runs: list[Path], server: FakeOpenAIServer, out: Path, *extra: str) -> list[str]:
    judge = ["--judge", "openai/fake", "--base-url", server.base_url]
    return [sys.executable, "-m", "empathybench", "report", *map(str, runs), *judge, "-o", str(out), "-q", *extra]


def _cli(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_in_process(command, env)


def _lines(path: Path) -> list[str]:
    return path.read_text("utf-8").splitlines() if path.exists() else []


def _elo(out: Path) -> dict[str, Any]:
    return json.loads(out.with_suffix(".json").read_text("utf-8"))["instrument_comparisons"]["eqbench3"]


def test_dry_run_counts_exactly_the_judge_requests_still_missing(
    runs: list[Path], tmp_path: Path, mirror: Path
) -> None:
    asked: list[list[dict[str, Any]]] = []
    out, env = tmp_path / "cmp.html", _env(tmp_path / "cache", mirror)
    judgements = tmp_path / "cmp.eqbench3-judgements.jsonl"
    with FakeOpenAIServer(answer=_judge(asked)) as server:
        dry = _cli([*_report(runs, server, out, *PRICE), "--dry-run", "--json"], env)
        assert dry.returncode == 0, dry.stderr[-2000:]
        estimate = json.loads(dry.stdout)
        assert server.requests_total == 0 and not out.exists() and not judgements.exists()  # no call, no file
        [entry] = estimate["comparisons"]
        assert entry["name"] == "eqbench3" and entry["from_judgements_file"] == 0

        real = _cli(_report(runs, server, out, *PRICE), env)
        assert real.returncode == 0, real.stderr[-2000:]
        # the estimate's requests are the real first attempts, and its input tokens those of the real prompts
        assert entry["judge"]["requests"] == server.requests_total == len(asked) == SCENARIOS * 2
        assert entry["judge"]["reasks"] == 0
        assert entry["judge"]["input_tokens"] == sum(estimate_input_tokens(messages) for messages in asked)
        assert entry["judge"]["output_tokens_max"] == 8000 * len(asked)  # the pairwise judge's max tokens
        assert entry["tasks"] == len(asked) and estimate["total"]["judge"]["requests"] == len(asked)
        expected_max = (entry["judge"]["input_tokens"] * 1 + entry["judge"]["output_tokens_max"] * 2) / 1e6
        assert entry["judge"]["cost_usd_max"] == pytest.approx(expected_max)

        # the judge's tokens and cost: in comparison.json, on the page, in comparison.md and on the terminal
        cost = _elo(out)["cost"]
        served_input = sum(count_prompt_tokens(messages) for messages in asked)
        assert cost["judge"]["calls"] == len(asked) and cost["judge"]["input_tokens"] == served_input
        output_tokens = cost["judge"]["output_tokens"]
        assert output_tokens > 0 and cost["batch"] is False
        assert cost["cost_usd"] == pytest.approx((served_input * 1 + output_tokens * 2) / 1e6)
        line = f"Judge calls made now: {len(asked)}, {served_input:,} input and {output_tokens:,} output tokens"
        assert line in out.read_text("utf-8") and line in out.with_suffix(".md").read_text("utf-8")
        assert line in real.stdout

        # two verdicts lost from the judgements file: the dry run counts exactly those two
        kept = _lines(judgements)
        judgements.write_text("\n".join(kept[2:]) + "\n", encoding="utf-8")
        again = _cli([*_report(runs, server, out, *PRICE), "--dry-run", "--json"], env)
        [entry] = json.loads(again.stdout)["comparisons"]
        assert entry["judge"]["requests"] == 2 and entry["from_judgements_file"] == len(asked) - 2
        text = _cli([*_report(runs, server, out, *PRICE), "--dry-run"], env)
        assert text.returncode == 0 and "no model was called" in text.stdout and "eqbench3" in text.stdout
        assert server.requests_total == len(asked)  # still no call from the dry runs
    assert TEST_KEY not in dry.stdout + text.stdout


def test_max_cost_stops_the_judging_and_a_larger_budget_asks_only_for_the_rest(
    runs: list[Path], tmp_path: Path, mirror: Path
) -> None:
    asked: list[list[dict[str, Any]]] = []
    out, env = tmp_path / "cmp.html", _env(tmp_path / "cache", mirror)
    judgements = tmp_path / "cmp.eqbench3-judgements.jsonl"
    with FakeOpenAIServer(answer=_judge(asked)) as server:
        unpriced = _cli([*_report(runs, server, out), "--max-cost", "1"], env)
        assert unpriced.returncode == 2 and "--max-cost needs prices" in unpriced.stderr
        no_judge = _cli([sys.executable, "-m", "empathybench", "report", *map(str, runs), "--max-cost", "1"], env)
        assert no_judge.returncode == 2 and "--judge" in no_judge.stderr
        for budget in ("0", "inf"):  # `run`'s own check: infinity was once a budget here
            refused = _cli([*_report(runs, server, out, *PRICE), "--max-cost", budget], env)
            assert refused.returncode == 2 and "--max-cost must be a positive number" in refused.stderr
        estimate = json.loads(_cli([*_report(runs, server, out, *PRICE), "--dry-run", "--json"], env).stdout)
        total = estimate["total"]["judge"]
        # room for about one and a half requests at their most (input and the max tokens as output)
        budget = 1.5 * total["cost_usd_max"] / total["requests"]
        stopped = _cli([*_report(runs, server, out, *PRICE), "--max-cost", f"{budget:.8f}", "-c", "1"], env)
        assert stopped.returncode == 3, stopped.stderr[-2000:]
        # one line says why and what to do (the data loader's notice about the parse mode may precede it)
        lines = [line for line in stopped.stderr.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and "--max-cost" in lines[0] and "larger" in lines[0]
        assert "Traceback" not in stopped.stderr
        judged = len(_lines(judgements))
        # every answered call was kept; the budget stopped the judging before the end; no report was written
        assert 0 < judged == server.requests_total < total["requests"]
        assert not out.exists() and not out.with_suffix(".json").exists()

        continued = _cli([*_report(runs, server, out, *PRICE), "--max-cost", "100"], env)
        assert continued.returncode == 0, continued.stderr[-2000:]
        assert server.requests_total == total["requests"] and not server.repeated_bodies()
        counts = _elo(out)["counts"]
        assert counts["from_judgements_file"] == judged and counts["new_judge_calls"] == total["requests"] - judged
        assert (
            _elo(out)["cost"]["budget_usd"] == 100 and _elo(out)["cost"]["judge"]["calls"] == counts["new_judge_calls"]
        )


def test_batch_sends_one_batch_that_a_killed_command_resumes(runs: list[Path], tmp_path: Path, mirror: Path) -> None:
    asked: list[list[dict[str, Any]]] = []
    out, env = tmp_path / "cmp.html", _env(tmp_path / "cache", mirror)
    journal = tmp_path / "cmp.batches.jsonl"
    with FakeOpenAIServer(answer=_judge(asked)) as server:
        fake = server.batches
        fake.hold = True  # the batch stays in progress until released
        command = [*_report(runs, server, out, *PRICE), "--batch", *POLL]
        kill_once_polled(command, env, fake)
        assert fake.batches_created == 1 and journal.exists() and not out.with_suffix(".json").exists()
        fake.hold = False
        rerun = _cli(command, env)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        created, chat_calls, answered = fake.batches_created, server.requests_total, fake.entries_answered
    assert created == 1 and chat_calls == 0  # the open batch was polled: nothing sent again, nothing live
    assert answered == len(asked) == SCENARIOS * 2
    events = [json.loads(line)["event"] for line in _lines(journal)]
    assert events == ["submitted", "ended"]
    elo = _elo(out)
    assert elo["counts"]["new_judge_calls"] == SCENARIOS * 2 and elo["counts"]["unreadable_verdicts"] == 0
    q1, q2 = (run["label"] for run in elo["runs"])
    assert elo["ratings"][q2]["elo"] > elo["ratings"][q1]["elo"]
    # billed at the batch price: the table's batch factor (half) of the live price of the same tokens
    cost = elo["cost"]
    assert cost["batch"] is True and cost["judge"]["calls"] == SCENARIOS * 2 and price_table().batch_factor < 1
    live = (cost["judge"]["input_tokens"] * 1 + cost["judge"]["output_tokens"] * 2) / 1e6
    assert cost["cost_usd"] == pytest.approx(live * price_table().batch_factor)


def test_batch_is_refused_for_a_judge_without_a_batch_api(runs: list[Path], tmp_path: Path, mirror: Path) -> None:
    command = [sys.executable, "-m", "empathybench", "report", *map(str, runs), "--judge", "scripted/plausible-2"]
    refused = _cli([*command, "--batch", "-o", str(tmp_path / "c.html")], _env(tmp_path / "cache", mirror))
    assert refused.returncode == 2 and "--batch needs a provider with a batch API" in refused.stderr
    assert not (tmp_path / "c.html").exists()
