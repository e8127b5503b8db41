"""Cost: `run --dry-run` counts the real run's first attempts exactly and calls no model; the price table, --price
and unknown prices; `--max-cost` stops, keeps everything and continues with a larger budget; run.json records the
tokens and cost per role."""

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import cli_in_process
from empathybench.engine.engine import BudgetExhaustedError
from empathybench.errors import UserError
from empathybench.models.base import ChatRequest, ChatResponse, Message, Sampling
from empathybench.models.prices import parse_price_option, price_for
from empathybench.models.registry import parse_model_spec
from empathybench.run.cost import (
    CostMeter,
    RunPrices,
    estimate_input_tokens,
    estimate_text_tokens,
    spent_in_sessions,
)
from empathybench.run.dry_run import dry_run
from empathybench.run.execute import execute_run
from empathybench.run.options import RunOptions
from empathybench.rundir.store import read_samples
from empathybench.testing.fake_openai import FakeOpenAIServer

GIEBENCH_FIXTURES = Path(__file__).parent / "fixtures" / "giebench" / "official"
KEY = "sk-test-cost"
QUIET = Console(file=open(os.devnull, "w"))  # noqa: SIM115


def first_attempts(run_dir: Path) -> dict[str, int]:
    """First attempts per role in a run's samples.jsonl (what the dry run must predict)."""
    counts = {"model": 0, "judge": 0}
    for record in read_samples(run_dir):
        for call in record.get("calls") or []:
            if call.get("attempt", 0) == 0:
                counts["judge" if call.get("role") == "judge" else "model"] += 1
    return counts


# (benchmark, options, judge, limit): every instrument and protocol, small.
CASES = [
    ("eqbench", {}, None, 6),
    ("seceu", {}, None, 3),
    ("giebench", {"giebench.data_dir": str(GIEBENCH_FIXTURES)}, None, 2),
    ("emotionbench", {}, None, 1),
    ("empathetic", {}, "scripted/plausible-2", 2),
    ("emobench", {"emobench.protocol": "paper2024"}, None, 3),
    ("emobench", {"emobench.protocol": "repo2025"}, None, 3),
    ("eqbench3", {}, "scripted/plausible-2", 2),
    ("tombench", {"tombench.cot": "both", "tombench.try_times": "2"}, None, 3),
    ("tactfultom", {"tactfultom.cot": "both", "tactfultom.freeform": "true"}, None, 4),
]


@pytest.mark.parametrize(
    ("bench", "options", "judge", "limit"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_dry_run_counts_the_real_runs_first_attempts_per_instrument(
    bench: str, options: dict[str, str], judge: str | None, limit: int, tmp_path: Path, mirror: Path
) -> None:
    run_options = RunOptions(
        model="scripted/plausible",
        benchmarks=[bench],
        preset="quick",
        limit=limit,
        options=options,
        judge=judge,
        allow_unverified=bench == "giebench",  # the fixtures are not the pinned files
        use_cache=False,
        show_progress=False,
        out=tmp_path / "run",
    )
    estimate = dry_run(run_options, QUIET)
    assert not (tmp_path / "run").exists()  # the dry run writes no run directory
    execute_run(run_options, QUIET)
    real = first_attempts(tmp_path / "run")
    (entry,) = estimate["instruments"]
    assert entry["name"] == bench
    assert (entry["model"]["requests"], entry["judge"]["requests"]) == (real["model"], real["judge"])
    assert real["model"] > 0 and (real["judge"] > 0) == (judge is not None)
    assert entry["model"]["input_tokens"] > 0 and estimate["total"]["cost_usd"] == 0  # scripted models are free
    if bench == "eqbench3":  # role-play turns, analyses and debriefs ask for 800-1000 words: ~1,000+ tokens each
        assert entry["model"]["output_tokens"] >= 1000 * entry["model"]["requests"]


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return cli_in_process(["run", *args], env)


def cli_env(cache_dir: Path, mirror: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(cache_dir), EMPATHYBENCH_MIRROR=str(mirror), OPENAI_API_KEY=KEY)
    return env


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(seed=7) as fake:
        yield fake


def eqbench_args(server: FakeOpenAIServer, out: Path) -> list[str]:
    return [
        "-m",
        "openai/gpt-4o-mini",
        "--base-url",
        server.base_url,
        "-b",
        "eqbench",
        "-n",
        "12",
        "-o",
        str(out),
        "-q",
    ]


def test_dry_run_over_the_wire_sends_nothing_and_predicts_the_servers_requests(
    server: FakeOpenAIServer, tmp_path: Path, mirror: Path
) -> None:
    env = cli_env(tmp_path / "cache", mirror)
    dry = cli([*eqbench_args(server, tmp_path / "run"), "--dry-run", "--json"], env)
    assert dry.returncode == 0, dry.stderr
    assert server.requests_total == 0  # not one request reached the server
    # No run directory and no response cache (the data files are fetched into the cache's data/ as a run does).
    assert not (tmp_path / "run").exists() and not (tmp_path / "cache" / "responses.sqlite").exists()
    estimate = json.loads(dry.stdout)
    total = estimate["total"]
    # gpt-4o-mini from the shipped table: $0.15 in / $0.60 out per million tokens
    assert estimate["prices"]["model"]["input_per_mtok"] == 0.15 and estimate["prices"]["model"]["source"].startswith(
        "https://"
    )
    expected = (total["model"]["input_tokens"] * 0.15 + total["model"]["output_tokens"] * 0.60) / 1e6
    assert total["cost_usd"] == pytest.approx(expected, rel=1e-6)

    real = cli(eqbench_args(server, tmp_path / "run"), env)
    assert real.returncode == 0, real.stderr
    assert server.requests_total == total["model"]["requests"] == first_attempts(tmp_path / "run")["model"] == 12
    served = sum(c["prompt_tokens"] for r in read_samples(tmp_path / "run") for c in r["calls"])
    assert abs(total["model"]["input_tokens"] - served) <= 0.25 * served  # the estimate is within 25%
    assert "cost $" in real.stdout  # the terminal summary shows the run's cost


def test_price_table_price_option_batch_and_unknown_models(tmp_path: Path, mirror: Path) -> None:
    assert price_for("openai", "gpt-4o-mini-2024-07-18") == price_for("openai", "gpt-4o-mini")  # a dated snapshot
    assert price_for("openai", "gpt-4o-audio-preview") is None  # not a snapshot of gpt-4o: not guessed
    assert price_for("anthropic", "claude-sonnet-4-20250514").input == 3.0  # type: ignore[union-attr]
    assert price_for("llamacpp", "x.gguf").output == 0.0  # type: ignore[union-attr]
    given = parse_price_option("input=2, output=8, cached=0.5")
    assert (given.input, given.output, given.cached_input, given.source) == (2.0, 8.0, 0.5, "--price")
    for bad in ("input=2", "input=x,output=1", "input=-1,output=1", "input=1,output=1,foo=2", "input=inf,output=1"):
        with pytest.raises(UserError):
            parse_price_option(bad)

    base = {"benchmarks": ["seceu"], "limit": 3, "use_cache": False, "show_progress": False}
    unknown = dry_run(RunOptions(model="openai/my-gateway-model", **base), QUIET)
    assert unknown["total"]["cost_usd"] is None
    assert any("--price" in note and "openai/my-gateway-model" in note for note in unknown["notes"])
    priced = dry_run(RunOptions(model="openai/my-gateway-model", price="input=2,output=8", **base), QUIET)
    model = priced["total"]["model"]
    assert priced["total"]["cost_usd"] == pytest.approx((model["input_tokens"] * 2 + model["output_tokens"] * 8) / 1e6)
    assert model["requests"] == unknown["total"]["model"]["requests"] == 3
    batched = RunOptions(model="openai/my-gateway-model", price="input=2,output=8", **base)
    batched.batch = True  # type: ignore[attr-defined]  # `--batch` (another option) sets this
    assert dry_run(batched, QUIET)["total"]["cost_usd"] == pytest.approx(priced["total"]["cost_usd"] / 2)


def test_dry_run_json_and_its_option_errors(tmp_path: Path, mirror: Path) -> None:
    env = cli_env(tmp_path / "cache", mirror)
    common = ["-m", "openai/unknown-model", "-b", "seceu", "-n", "2", "--base-url", "http://127.0.0.1:9/v1"]
    text = cli([*common, "--dry-run"], env)
    assert text.returncode == 0, text.stderr
    assert "no model was called" in text.stdout and "--price" in text.stdout and "unknown" in text.stdout
    no_dry = cli([*common, "--json"], env)
    assert no_dry.returncode == 2 and "--dry-run" in no_dry.stderr
    judge_price = cli([*common, "--dry-run", "--judge-price", "input=1,output=1"], env)
    assert judge_price.returncode == 2 and "--judge" in judge_price.stderr
    budget = cli([*common, "--max-cost", "1"], env)  # a budget needs a price
    assert budget.returncode == 2 and "--max-cost needs prices" in budget.stderr
    zero = cli([*common, "--max-cost", "0", "--price", "input=1,output=1"], env)
    assert zero.returncode == 2 and "--max-cost must be a positive" in zero.stderr


def scores(run_dir: Path) -> dict[str, Any]:
    return {r["item_id"]: (r["status"], r.get("parsed"), r.get("score")) for r in read_samples(run_dir)}


def test_max_cost_stops_keeps_everything_and_a_larger_budget_continues(
    server: FakeOpenAIServer, tmp_path: Path, mirror: Path
) -> None:
    env = cli_env(tmp_path / "cache", mirror)
    priced = ["--price", "input=1000,output=1000"]  # expensive enough that a few requests use the budget up
    run_dir = tmp_path / "budgeted"
    stopped = cli([*eqbench_args(server, run_dir), *priced, "--max-cost", "1"], env)
    assert stopped.returncode == 3, stopped.stderr
    lines = [line for line in stopped.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "--max-cost" in lines[0] and "larger" in lines[0]
    run_info = json.loads((run_dir / "run.json").read_text())
    assert run_info["status"] == "budget" and run_info["sessions"][-1]["status"] == "budget"
    spent = run_info["cost"]["cost_usd"]
    assert 0 < spent <= 1
    kept = read_samples(run_dir)
    assert 0 < len(kept) < 12 and all(r["status"] == "ok" for r in kept)
    first_session_requests = server.requests_total

    continued = cli([*eqbench_args(server, run_dir), *priced, "--max-cost", "100"], env)
    assert continued.returncode == 0, continued.stderr
    run_info = json.loads((run_dir / "run.json").read_text())
    assert run_info["status"] == "complete" and len(run_info["sessions"]) == 2
    assert run_info["cost"]["model"]["calls"] == 12  # every answered request billed once, over both sessions
    # Nothing was asked twice: the requests answered before the stop came from the cache.
    assert server.requests_total == 12 and first_session_requests < 12

    reference = tmp_path / "reference"
    unbudgeted = cli([*eqbench_args(server, reference), *priced, "--no-cache"], env)
    assert unbudgeted.returncode == 0, unbudgeted.stderr
    assert scores(run_dir) == scores(reference)
    assert (
        json.loads((run_dir / "summary.json").read_text())["benchmarks"]["eqbench"]["score"]
        == json.loads((reference / "summary.json").read_text())["benchmarks"]["eqbench"]["score"]
    )


def test_run_json_records_tokens_and_cost_per_role(server: FakeOpenAIServer, tmp_path: Path, mirror: Path) -> None:
    options = RunOptions(
        model="openai/fake",
        judge="scripted/plausible-2",
        benchmarks=["empathetic"],
        limit=2,
        base_url=server.base_url,
        price="input=3,output=15",
        use_cache=False,
        show_progress=False,
        out=tmp_path / "run",
    )
    os.environ["OPENAI_API_KEY"] = KEY
    try:
        result = execute_run(options, QUIET)
    finally:
        os.environ.pop("OPENAI_API_KEY", None)
    run_info = json.loads((tmp_path / "run" / "run.json").read_text())
    cost = run_info["cost"]
    calls = [c for r in read_samples(tmp_path / "run") for c in r["calls"]]
    model_calls = [c for c in calls if c.get("role") != "judge"]
    served_in = sum(c["prompt_tokens"] for c in model_calls)
    served_out = sum(c["completion_tokens"] for c in model_calls)
    assert cost["model"]["calls"] == len(model_calls) == server.requests_total
    assert (cost["model"]["input_tokens"], cost["model"]["output_tokens"]) == (served_in, served_out)
    assert cost["model"]["cost_usd"] == pytest.approx((served_in * 3 + served_out * 15) / 1e6)
    assert cost["judge"]["calls"] == len(calls) - len(model_calls) > 0 and cost["judge"]["cost_usd"] == 0
    assert cost["prices"]["model"]["source"] == "--price" and cost["prices"]["judge"]["source"].startswith("free")
    assert result.summary["cost"] == cost
    report_md = (tmp_path / "run" / "report.md").read_text()
    html = (tmp_path / "run" / "report.html").read_text()
    line = f"cost ${cost['cost_usd']:.4f}"
    assert line in report_md and line in html


def test_meter_reads_cached_input_and_stops_before_the_budget() -> None:
    prices = RunPrices(
        {"model": parse_model_spec("openai/x")}, {"model": parse_price_option("input=10,output=20,cached=1")}
    )
    meter = CostMeter(prices, budget_usd=0.01, spent_before_usd=0.004)
    request = ChatRequest.of([Message("user", "a" * 400)], Sampling(temperature=0, max_tokens=100), "eqbench")
    reservation = meter.reserve("model", request)  # 106 in, 100 out at most: ~$0.003, fits
    response = ChatResponse(text="ok", prompt_tokens=1000, completion_tokens=10)
    response.cached_input_tokens = 800  # type: ignore[attr-defined]  # as a backend that reports it sets it
    meter.settle(reservation, response)
    assert meter.roles["model"].cached_input_tokens == 800
    assert meter.roles["model"].cost_usd == pytest.approx((200 * 10 + 800 * 1 + 10 * 20) / 1e6)
    assert meter.spent_usd == pytest.approx(0.004 + 0.003)
    with pytest.raises(BudgetExhaustedError):  # another ~$0.003 would pass $0.01
        meter.reserve("model", request)
    assert meter.stopped


def test_token_estimate_rules() -> None:
    assert estimate_text_tokens("abcdefgh") == 2
    assert estimate_text_tokens("你好世界") == 4  # one per CJK character
    assert estimate_input_tokens([Message("system", "abcd"), Message("user", "abcdefgh")]) == 3 + (3 + 1) + (3 + 2)


def test_budget_counts_earlier_sessions_killed_ones_from_their_tokens() -> None:
    price = parse_price_option("input=10,output=20")
    sessions = [
        {"n": 1, "status": "budget", "cost": {"cost_usd": 0.25}, "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
        # kill -9: no cost recorded, usage rebuilt from samples.jsonl
        {"n": 2, "status": "killed", "usage": {"prompt_tokens": 1000, "completion_tokens": 500}},
        {"n": 3, "status": "complete", "cost": {"cost_usd": None}},  # unknown price then: nothing to add
    ]
    assert spent_in_sessions(sessions, price) == pytest.approx(0.25 + (1000 * 10 + 500 * 20) / 1e6)
    assert spent_in_sessions(sessions, None) == pytest.approx(0.25)
