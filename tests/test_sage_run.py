"""SAGE end to end on scripted models: `empathybench run` (self-simulated until the CLI has --simulator), resume
from the cache, the report's trajectory chart, failed conversations counted, a separate simulator engine, presets,
options and the comparability label."""

import asyncio
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process
from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import Engine, ItemContext, RetryPolicy
from empathybench.errors import UserError
from empathybench.instruments.registry import load
from empathybench.instruments.sage import data
from empathybench.instruments.sage.bench import SageConfig, choose_people, run_person, summarize_records
from empathybench.instruments.sage.canned import plausible_answer
from empathybench.instruments.sage.score import simulator_differences
from empathybench.models.base import ChatRequest
from empathybench.models.plausible import PlausibleResponder
from empathybench.models.scripted import ScriptedBackend


def _env(tmp_path: Path, mirror: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"), EMPATHYBENCH_MIRROR=str(mirror))
    return env


def _records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").split("\n") if line]


def test_a_run_with_plausible_answers_resumes_and_reports(tmp_path: Path, mirror: Path) -> None:
    out, env = tmp_path / "run", _env(tmp_path, mirror)
    args = ["run", "-m", "scripted/plausible", "--simulator", "scripted/plausible-2", "--bench", "sage"]
    args += ["--limit", "2", "--out", str(out)]
    done = cli_in_process(args, env)
    assert done.returncode == 0, done.stderr[-2000:]
    records = _records(out)
    assert [r["item_id"] for r in records] == ["1", "2"] and all(r["status"] == "ok" for r in records)
    for record in records:
        roles = Counter(call.get("role") for call in record["calls"])
        rounds = record["rounds"]
        assert roles[None] == record["model_replies"] and roles["simulator"] == 2 * (rounds - 1)
        assert record["trajectory"][0] == 40 and len(record["trajectory"]) == rounds <= 5  # quick: 5 rounds
        assert record["turns"][0]["given"] and record["turns"][0]["speaker"] == "simulator"
        assert all(c["messages"][0]["role"] == "system" for c in record["calls"] if c.get("role") is None)
    summary = json.loads((out / "summary.json").read_text("utf-8"))["benchmarks"]["sage"]
    finals = [r["final_emotion"] for r in records]
    assert summary["score"] == pytest.approx(sum(finals) / 2) and summary["headline_metric"] == "sentient_score"
    assert summary["trajectories"] == {r["item_id"]: r["trajectory"] for r in records}
    assert "self_simulated" not in summary and summary["comparable_with_published"] is False
    assert summary["simulator"]["models"] == ["plausible-2"]
    assert "5 rounds, not 10" in summary["comparability"] and "2 of 100 people" in summary["comparability"]
    html = (out / "report.html").read_text("utf-8")
    assert 'data-chart="trajectories"' in html and html.count('class="path"') + html.count('class="path-dot"') == 2
    assert "not comparable with the published leaderboard" in html

    again = cli_in_process(args, env)  # the same command: everything from the run directory
    assert again.returncode == 0
    assert _records(out) == records


def test_without_a_simulator_only_the_demo_runs_self_simulated_and_says_so(tmp_path: Path, mirror: Path) -> None:
    env = _env(tmp_path, mirror)
    refused = cli_in_process(["run", "-m", "scripted/plausible", "--bench", "sage", "--out", str(tmp_path / "r")], env)
    assert refused.returncode == 2 and "needs a simulated person: add --simulator SPEC" in refused.stderr
    assert not (tmp_path / "r").exists()
    out = tmp_path / "demo"
    args = ["run", "-m", "scripted/plausible", "--bench", "sage", "--preset", "demo", "--out", str(out)]
    done = cli_in_process(args, env)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text("utf-8"))["benchmarks"]["sage"]
    assert summary["self_simulated"] is True and summary["validity"]["status"] == "self-simulated"
    run_info = json.loads((out / "run.json").read_text("utf-8"))
    assert run_info["simulator"]["spec"] == "self"
    assert "self-simulated" in (out / "report.html").read_text("utf-8")


def test_an_interrupted_run_asks_only_the_missing_turns_again(tmp_path: Path, mirror: Path) -> None:
    """A run directory removed after the run: the same command asks the model nothing (every turn is cached)."""
    env = _env(tmp_path, mirror)
    first, second = tmp_path / "a", tmp_path / "b"
    base = ["run", "-m", "scripted/plausible", "--simulator", "scripted/plausible", "--bench", "sage", "--limit", "1"]
    assert cli_in_process([*base, "--out", str(first)], env).returncode == 0
    assert cli_in_process([*base, "--out", str(second)], env).returncode == 0
    calls = _records(second)[0]["calls"]
    assert calls and all(call["cached"] for call in calls)
    assert _records(first)[0]["trajectory"] == _records(second)[0]["trajectory"]


def _ctx(tmp_path: Path, model: ScriptedBackend, simulator: ScriptedBackend, item: str = "1") -> ItemContext:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    retry = RetryPolicy(max_retries=0)
    return ItemContext(
        Engine(model, cache=cache, retry=retry),
        item,
        3,
        simulator_engine=Engine(simulator, cache=cache, retry=retry),
        tag="sage",
    )


def test_a_simulator_that_never_gives_a_change_fails_the_conversation_and_is_counted(
    tmp_path: Path, mirror: Path
) -> None:
    people, protocol, _ = data.load()
    canned = PlausibleResponder(1, {"sage": plausible_answer})

    def no_change(request: ChatRequest) -> str:
        return "Content:\n[...]\nChange:\n[无]" if "Response:" not in request.messages[-1].content else canned(request)

    model, simulator = ScriptedBackend("m", canned), ScriptedBackend("deepseek-v3-1227", no_change)
    config = SageConfig(attempts=3)
    ctx = _ctx(tmp_path, model, simulator)
    failed = asyncio.run(run_person(config, protocol, people[0], ctx))
    assert failed["conversation_status"] == "failed" and failed["final_emotion"] is None
    assert failed["stop_reason"] == "simulator analysis unreadable after 3 asks: no integer after Change:"
    assert failed["failure"]["asks"] == 3 and failed["rounds"] == 1 and failed["emotion_at_failure"] == 40
    # the true counts: the simulator was asked 3 times (its analysis, never read), 2 of them re-asks; the model once
    assert (failed["simulator_asks"], failed["simulator_reasks"], failed["model_asks"]) == (3, 2, 1)
    assert [c["attempt"] for c in ctx.calls if c.get("role") == "simulator"] == [0, 1, 2]
    assert ctx.simulator_identity["model"] == "deepseek-v3-1227" and not ctx.simulator_is_self

    good_simulator = ScriptedBackend(
        "deepseek-v3-1227", lambda r: canned(ChatRequest(r.messages, r.sampling, "sage:simulator"))
    )
    good = asyncio.run(run_person(config, protocol, people[1], _ctx(tmp_path, model, good_simulator, "2")))
    assert good["conversation_status"] == "completed" and good["simulator"]["self_simulated"] is False
    summary = summarize_records(config, 2, [{"item_id": "1", **failed}, {"item_id": "2", **good}])
    assert summary["n_failed_conversations"] == 1 and summary["n_completed"] == 1
    assert summary["failed_conversations"] == {"1": failed["stop_reason"]}
    assert summary["score"] == good["final_emotion"] and summary["metrics"]["sentient_score"]["n"] == 1
    assert summary["comparability"] == (
        "not comparable with the published leaderboard (simulator deepseek-v3-1227): 1 of 100 people scored: "
        "1 failed (the simulator's reply unreadable after 3 asks), 98 not in this run (a cut)"
    )
    assert summary["headline_note"].startswith(summary["comparability"])
    assert "over the 1 completed conversations" in summary["headline_note"]


def test_comparability_names_the_simulator() -> None:
    assert simulator_differences("deepseek-ai/DeepSeek-V3", self_simulated=False) == []
    assert simulator_differences("deepseek-v3-2024-1227", self_simulated=False) == []
    assert simulator_differences("gpt-4o", self_simulated=False) == [
        "the simulator is not the published DeepSeek-V3 (2024-12-27)"
    ]
    assert simulator_differences("deepseek-chat", self_simulated=False) != []  # the alias has served later models
    assert simulator_differences("gpt-4o", self_simulated=True) == [
        "self-simulated: the model under test played the person"
    ]


def test_presets_options_and_the_quick_cut(mirror: Path) -> None:
    sage: Any = load("sage")
    assert sage.required_roles == {"simulator"} and sage.in_default_run is False
    assert sage.configure("paper", {}) == SageConfig()
    quick = sage.configure("quick", {})
    assert (quick.rounds, quick.people_per_task) == (5, 2)
    assert sage.configure("quick", {"rounds": "3", "people_per_task": ""}) == SageConfig(rounds=3)
    for bad in ({"rounds": "0"}, {"attempts": "x"}, {"nope": "1"}):
        with pytest.raises(UserError):
            sage.check_options("paper", bad)
    people, _, _ = data.load()
    chosen = choose_people(people, 2)
    assert len(chosen) == 16 and set(Counter(p.task for p in chosen).values()) == {2}
    assert [p.number for p in chosen] == sorted(p.number for p in chosen)
    prepared = sage.prepare_preset("quick")
    assert [item.id for item in prepared.items] == [str(p.number) for p in chosen]
    assert prepared.config["rounds"] == 5 and {f.key for f in prepared.data_files} == set(data.RUN_KEYS)
    assert len(sage.prepare_preset("paper").items) == 100


def test_the_trajectory_chart_holds_ended_conversations_at_their_final_emotion() -> None:
    from empathybench.instruments.sage.report import trajectory_chart
    from empathybench.report import svg

    summary = {"rounds_limit": 4, "trajectories": {"1": [40, 50, 60, 70], "2": [40, 30], "3": [40, 45, 100]}}
    chart = trajectory_chart([("a", summary), ("b", {"rounds_limit": 4, "trajectories": {"9": [40]}})])
    assert chart.x_labels == ("1", "2", "3", "4") and [g.name for g in chart.groups] == ["a", "b"]
    first = chart.groups[0]
    assert first.paths[1] == (40, 30, None, None)
    assert first.summary == pytest.approx((40.0, 125 / 3, 190 / 3, 200 / 3))  # the last point: the mean final emotion
    drawn = svg.trajectories(
        list(chart.x_labels),
        [(g.name, [list(p) for p in g.paths], list(g.summary or [])) for g in chart.groups],
        references=list(chart.references),
        domain=chart.domain,
    )
    assert drawn.count('class="path"') == 3 and drawn.count('class="path-dot"') == 1  # a path of one point is a dot
    assert drawn.count('class="ref"') == 4 and "a: mean of 3" in drawn
    assert 'data-chart="trajectories"' in svg.trajectories([], [])  # no data: a small "no data" chart


def test_a_comparison_draws_both_runs_trajectories_and_says_they_are_not_comparable(
    tmp_path: Path, mirror: Path
) -> None:
    env = _env(tmp_path, mirror)
    for model, out in (("scripted/plausible", "a"), ("scripted/plausible-3", "b")):
        args = ["run", "-m", model, "--simulator", "scripted/plausible-2", "--bench", "sage", "--limit", "2"]
        assert cli_in_process([*args, "--out", str(tmp_path / out)], env).returncode == 0
    done = cli_in_process(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "cmp")], env)
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "cmp.html").read_text("utf-8")
    assert html.count('data-chart="trajectories"') == 1 and "SAGE: the runs side by side" in html
    assert "scripted/plausible: mean of 2" in html and "scripted/plausible-3: mean of 2" in html
    comparison = json.loads((tmp_path / "cmp.json").read_text("utf-8"))
    (warning,) = [w for w in comparison["warnings"] if "published leaderboard" in w]
    assert warning.startswith("SAGE: scripted/plausible, scripted/plausible-3: not comparable with the published")
    assert "simulator plausible-2" in warning
