"""Spiral-Bench as an instrument: one item end to end through ItemContext with an engine per role (model under test,
user agent, judge), resume from the cache, refusals, a user agent that never answers, presets and options, the
comparability label, and a scripted run on the command line with its summary, report and dry run."""

import asyncio
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import MIRROR, cli_in_process
from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import Engine, ItemContext, RetryPolicy
from empathybench.errors import UserError
from empathybench.instruments.registry import all_benchmarks
from empathybench.instruments.spiral import data, published, score
from empathybench.instruments.spiral.canned import canned_answer
from empathybench.instruments.support import config_schema
from empathybench.models.base import ChatRequest
from empathybench.models.plausible import PlausibleResponder
from empathybench.models.scripted import ScriptedBackend

pytestmark = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"the offline mirror is not at {MIRROR}")
QUIET = Console(file=open(os.devnull, "w"))  # noqa: SIM115
KIMI, GPT5 = "moonshotai/kimi-k2", "gpt-5-2025-08-07"


def instrument() -> Any:
    return all_benchmarks()["spiral"]


def _backend(name: str, variant: int = 1) -> ScriptedBackend:
    return ScriptedBackend(name, PlausibleResponder(variant, {"spiral": canned_answer}))


def _context(cache: ResponseCache, item_id: str, model: Any, simulator: Any, judge: Any) -> ItemContext:
    retry = RetryPolicy(max_retries=0)
    return ItemContext(
        Engine(model, cache=cache, retry=retry),
        item_id,
        0,
        judge_engine=Engine(judge, cache=cache, retry=retry) if judge is not None else None,
        tag="spiral",
        simulator_engine=Engine(simulator, cache=cache, retry=retry) if simulator is not None else None,
    )


def _run(prepared: Any, cache: ResponseCache, model: Any, simulator: Any, judge: Any) -> list[dict[str, Any]]:
    async def run_all() -> list[dict[str, Any]]:
        return [
            await prepared.run_item(item, _context(cache, item.id, model, simulator, judge)) for item in prepared.items
        ]

    return asyncio.run(run_all())


def test_an_opening_end_to_end_with_a_model_a_user_agent_and_a_judge(tmp_path: Path) -> None:
    prepared = instrument().prepare_preset("quick", {"num_turns": "4"}, limit=2, seed=1, allow_unverified=False)
    assert [item.id for item in prepared.items] == ["sc01", "ie01"]
    cache = ResponseCache(tmp_path / "responses.sqlite")
    model, agent, judge = _backend("model-under-test"), _backend(KIMI, 2), _backend(GPT5, 3)
    records = _run(prepared, cache, model, agent, judge)
    assert len(model.calls) == 2 * 4 and len(agent.calls) == 2 * 3  # no user-agent move after the last turn
    assert len(judge.calls) == 2 * (3 + 1)  # the first reply is never judged: 3 chunks, and 1 final judgement
    assert {r.tag for r in model.calls} == {"spiral"} and {r.tag for r in agent.calls} == {"spiral:simulator"}
    assert {r.tag for r in judge.calls} == {"spiral:judge"}
    assert all(r.messages[0].role == "system" for r in agent.calls) and model.calls[0].messages[0].role == "user"
    record = records[0]
    assert record["n_turns"] == 4 and len(record["transcript"]) == 8 and not record["ended_early"]
    assert [t["role"] for t in record["transcript"]] == ["user", "assistant"] * 4
    assert sorted(record["judgements"]) == ["chunk0", "chunk1", "chunk2"] and record["n_chunk_errors"] == 0
    assert record["judgements"]["chunk0"]["assistant_turn_indexes"] == [1]
    assert set(record["final_judgement"]) == {"off_rails", "safety", "social_dexterity"}
    assert (record["simulator_model"], record["judge_model"]) == (KIMI, GPT5)
    summary = prepared.summarize(records)
    assert summary["headline_metric"] == "score_0_100" and summary["n_answered"] == 2
    assert summary["comparable_with_published"] is False
    assert summary["comparability"] == (
        f"not comparable with the published leaderboard (user agent {KIMI}, judge {GPT5}): 4 turns, not 20; "
        "2 of 30 openings scored: 28 not in this run (a cut)"
    )
    assert summary["coverage"] == {
        "n_published": 30,
        "n_scored": 2,
        "unit": "openings",
        "why_not": {"not in this run (a cut)": 28},
    }
    units = [score.unit_from_conversations(data.scoring_rules(), "run", r["prompt_id"], [r]) for r in records]
    board = score.leaderboard_row(data.scoring_rules(), units, "")
    assert summary["score"] == pytest.approx(board.score_0_100, abs=1e-4)
    assert summary["leaderboard_row"]["score_0_100"] == board.row["score_0_100"]
    assert summary["metrics"]["score_0_100"]["value"] == pytest.approx(board.score_0_100, abs=1e-4)
    for column in board.columns:
        assert summary["metrics"][column]["value"] == pytest.approx(board.column_means[column], abs=1e-4)

    # the same items again: every call from the cache, the same records
    model2, agent2, judge2 = _backend("model-under-test"), _backend(KIMI, 2), _backend(GPT5, 3)
    again = _run(prepared, cache, model2, agent2, judge2)
    assert not model2.calls and not agent2.calls and not judge2.calls
    assert again == records


def test_an_interrupted_conversation_resumes_from_the_first_missing_call(tmp_path: Path) -> None:
    from empathybench.engine.engine import CallFailedError
    from empathybench.models.base import RequestRejectedError

    prepared = instrument().prepare_preset("quick", {"num_turns": "5"}, limit=1, seed=0, allow_unverified=False)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    plausible = PlausibleResponder(1, {"spiral": canned_answer})
    failing_at = 3  # the model's third turn: its request holds 5 messages

    def flaky(request: ChatRequest) -> str:
        if len(request.messages) == 2 * failing_at - 1:
            raise RequestRejectedError(400, "boom")
        return plausible(request)

    first_model, first_agent, first_judge = ScriptedBackend("m", flaky), _backend(KIMI, 2), _backend(GPT5, 3)
    with pytest.raises(CallFailedError):
        _run(prepared, cache, first_model, first_agent, first_judge)
    assert len(first_model.calls) == 3 and len(first_agent.calls) == 2 and not first_judge.calls

    failing_at = -1
    model, agent, judge = ScriptedBackend("m", flaky), _backend(KIMI, 2), _backend(GPT5, 3)
    (record,) = _run(prepared, cache, model, agent, judge)
    assert [len(r.messages) for r in model.calls] == [5, 7, 9]  # turns 3, 4 and 5 only: 1 and 2 from the cache
    assert len(agent.calls) == 2 and len(judge.calls) == 4 + 1  # moves 3 and 4; every chunk and the final judge
    assert record["n_turns"] == 5 and not record["ended_early"]


def test_it_refuses_to_play_a_role_it_was_not_given(tmp_path: Path) -> None:
    prepared = instrument().prepare_preset("quick", {"num_turns": "2"}, limit=1, seed=0, allow_unverified=False)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    with pytest.raises(UserError, match="--simulator"):
        _run(prepared, cache, _backend("m"), None, _backend(GPT5))
    with pytest.raises(UserError, match="--judge"):
        _run(prepared, cache, _backend("m"), _backend(KIMI), None)
    demo = instrument().prepare_preset(
        "quick", {"num_turns": "2", "self_judge": "true", "self_simulate": "true"}, limit=1
    )
    (record,) = _run(demo, cache, _backend("m"), None, None)
    summary = demo.summarize([record])
    assert summary["judge"] == {"self_judging": True} and summary["self_simulated"] is True
    assert "self-simulated: the model under test played the user agent" in summary["comparability"]
    assert "self-judged: the model under test judged itself" in summary["comparability"]


def test_a_user_agent_that_never_answers_ends_the_conversation_which_is_still_judged(tmp_path: Path) -> None:
    prepared = instrument().prepare_preset("quick", {"num_turns": "5", "attempts": "3"}, limit=1)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    silent = ScriptedBackend(KIMI, lambda request: "   ")
    model, judge = _backend("m"), _backend(GPT5)
    (record,) = _run(prepared, cache, model, silent, judge)
    assert len(silent.calls) == 3 and [c.sampling for c in silent.calls].count(silent.calls[0].sampling) == 3
    assert record["conversation_errors"] == [
        {"turn": 0, "agent": "user", "error": "Giving up after 3 tries: Received empty content"}
    ]
    assert record["ended_early"] and record["n_turns"] == 1 and record["judgements"] == {}
    assert len(judge.calls) == 1 and "final_judgement" in record  # the final judge still rates it, as upstream
    summary = prepared.summarize([record])
    assert summary["score"] is None and "no score" in summary["headline_note"]


def test_presets_options_and_config() -> None:
    bench = instrument()
    protocol = data.load_protocol()[0]
    quick = bench.prepare_preset("quick", {}, limit=None, seed=0, allow_unverified=False)
    firsts = {}
    for opening in protocol.openings:
        firsts.setdefault(opening.category, opening.prompt_id)
    assert [item.id for item in quick.items] == list(firsts.values()) and len(quick.items) == 6
    assert quick.config["num_turns"] == 6 and quick.config["openings"] == list(firsts.values())
    paper = bench.configure("paper", {})
    assert (paper.num_turns, paper.chunk_size, paper.injection_every_n, paper.openings_per_category) == (20, 1, 5, None)
    assert len(bench.prepare_preset("paper", {}, limit=None, seed=0, allow_unverified=False).items) == 30
    two = bench.prepare_preset("quick", {"openings_per_category": "2"}, limit=None, seed=0, allow_unverified=False)
    assert len(two.items) == 12
    for bad in ({"num_turns": "0"}, {"chunk_size": "x"}, {"nope": "1"}, {"self_judge": "maybe"}):
        with pytest.raises(UserError):
            bench.check_options("quick", bad)
    config = bench.configure("quick", {})
    assert set(config_schema(type(config))["properties"]) == {f.name for f in dataclasses.fields(config)}
    assert bench.required_roles == {"judge", "simulator"} and not bench.in_default_run


def test_comparability_with_the_published_leaderboard() -> None:
    protocol = {"num_turns": 20, "chunk_size": 1, "injection_every_n": 5, "judge_assistant_max_chars": 20000}
    assert published.protocol_differences(protocol) == []
    assert published.role_differences(KIMI, GPT5, simulator_self=False, judge_self=False) == []
    published_names = ("kimi-k2-0711-preview", "openai/gpt-5-2025-08-07")
    assert published.role_differences(*published_names, simulator_self=False, judge_self=False) == []
    for simulator, judge in ((KIMI, "gpt-5"), ("moonshotai/kimi-k2-0905", GPT5), ("openai/gpt-4o", GPT5)):
        assert len(published.role_differences(simulator, judge, simulator_self=False, judge_self=False)) == 1
    assert published.protocol_differences({**protocol, "chunk_size": 2}) == ["chunk size 2, not 1"]
    assert published.protocol_differences({**protocol, "judge_errors": "exclude"})[0].startswith("chunks the judge")


def test_a_scripted_run_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["--model", "scripted/plausible", "--judge", "scripted/plausible-2", "--bench", "spiral", "--limit", "2"]
    args += ["--simulator", "scripted/plausible-3", "--option", "spiral.num_turns=3"]
    done = cli_in_process(["run", *args, "--out", str(out)])
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))["benchmarks"]["spiral"]
    assert summary["status"] == "complete" and summary["n_answered"] == 2 and summary["n_chunk_errors"] == 0
    assert summary["comparable_with_published"] is False and summary["headline_note"].startswith("not comparable")
    assert set(summary["leaderboard_row"]) == {"score_0_100", *summary["columns"]}
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]
    rules = data.scoring_rules()
    units = [score.unit_from_conversations(rules, "run", s["prompt_id"], [s]) for s in samples]
    assert summary["leaderboard_row"]["score_0_100"] == score.leaderboard_row(rules, units, "").row["score_0_100"]
    roles = [call.get("role") for call in samples[0]["calls"]]
    assert roles.count(None) == 3 and roles.count("simulator") == 2 and roles.count("judge") == 3
    html = (out / "report.html").read_text("utf-8")
    assert "Spiral-Bench" in html and "Protective behaviours" in html and "sc01" in html

    dry = cli_in_process(["run", *args, "--dry-run", "--json"])
    assert dry.returncode == 0, dry.stderr
    (entry,) = json.loads(dry.stdout)["instruments"]
    first_attempts = sum(1 for s in samples for c in s["calls"] if c.get("attempt", 0) == 0)
    assert entry["model"]["requests"] == 2 * 3 and entry["simulator"]["requests"] == 2 * 2
    assert entry["model"]["requests"] + entry["simulator"]["requests"] + entry["judge"]["requests"] == first_attempts
    assert first_attempts == 2 * (3 + 2 + 3)


def test_the_canned_answers_tell_the_roles_apart() -> None:
    from empathybench.instruments.spiral.prompts import CONVERSATION_SAMPLING
    from empathybench.models.base import Draw, Message

    request = ChatRequest((Message("user", "hello there"),), CONVERSATION_SAMPLING, "spiral")
    model = canned_answer(request, Draw(1)) or ""
    seeker = canned_answer(dataclasses.replace(request, tag="spiral:simulator"), Draw(1)) or ""
    assert len(model) > 400 and seeker == seeker.lower() and model != seeker
    assert canned_answer(dataclasses.replace(request, tag="spiral:judge"), Draw(1)) is None  # not a judge prompt
