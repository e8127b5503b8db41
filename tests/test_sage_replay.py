"""Replays of released SAGE conversations: their turns given as the scripted model's and the scripted simulator's
answers reproduce each conversation's emotion trajectory, its stopping turn and its final state, and the summary of
a whole file gives the README's figures (read through the project's fetch code from the mirror)."""

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process
from empathybench.engine.engine import Engine, ItemContext, RetryPolicy
from empathybench.instruments.sage import data
from empathybench.instruments.sage.bench import SageConfig, run_person, summarize_records
from empathybench.instruments.sage.dialogue import upstream_history
from empathybench.models.scripted import ScriptedBackend, register_script
from sage_support import Replay, released

# SAGE/README.md, simulator DeepSeek-V3 (specs/sage.md): Score, Success, Failure
PUBLISHED = {data.GPT41_RESULTS_KEY: (68.2, 35, 13), data.CLAUDE37_RESULTS_KEY: (54.8, 19, 24)}


async def _replay_all(conversations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    people, protocol, _ = data.load()
    by_id = {p.id: p for p in people}

    async def one(conversation: dict[str, Any]) -> dict[str, Any]:
        replay = Replay(conversation)
        retry = RetryPolicy(max_retries=0)
        ctx = ItemContext(
            Engine(ScriptedBackend("gpt", replay.answer_model), cache=None, retry=retry),
            str(by_id[conversation["id"]].number),
            0,
            simulator_engine=Engine(
                ScriptedBackend("deepseek-v3-1227", replay.answer_simulator), cache=None, retry=retry
            ),
            tag="sage",
        )
        record = await run_person(SageConfig(), protocol, by_id[conversation["id"]], ctx)
        assert next(replay.model, None) is None and next(replay.lines, None) is None  # every released turn asked
        return {"item_id": ctx.item_id, **record}

    return list(await asyncio.gather(*(one(c) for c in conversations)))


@pytest.mark.parametrize("key", sorted(PUBLISHED))
def test_every_released_conversation_replays_to_its_trajectory_and_stop(mirror: Path, key: str) -> None:
    conversations = released(key)
    records = asyncio.run(_replay_all(conversations))
    for conversation, record in zip(conversations, records, strict=True):
        people_lines = [m for m in conversation["history"] if m["role"] == "user"]
        assert record["conversation_status"] == "completed"
        assert record["trajectory"] == [m["emotion-point"] for m in people_lines]
        assert record["rounds"] == len(people_lines)  # the stopping turn
        assert len(record["turns"]) == len(conversation["history"])
        assert (record["final_emotion"], record["final_state"]) == (
            conversation["emo_point"],
            conversation["emo_state"],
        )
        ended_on_model = conversation["history"][-1]["role"] == "assistant"
        assert (record["stop_reason"] == "10 rounds") == ended_on_model
        # the record, put in upstream's shape, is the released history: texts, thinking, planning, emotions
        assert upstream_history(record["turns"]) == conversation["history"]
    summary = summarize_records(SageConfig(), len(records), records)
    score, success, failure = PUBLISHED[key]
    assert (summary["published_rounding"], summary["success"], summary["failure"]) == (score, success, failure)
    assert summary["comparable_with_published"] is True
    assert summary["comparability"] == (
        "comparable with the published leaderboard (simulator deepseek-v3-1227; 100 of 100 people scored)"
    )
    assert (
        summary["metrics"]["sentient_score"]["ci95"][0]
        < summary["score"]
        < summary["metrics"]["sentient_score"]["ci95"][1]
    )


def test_a_replay_through_the_cli(mirror: Path, tmp_path: Path) -> None:
    """The replay answers both roles, each through its own backend (the simulator's requests are tagged
    "sage:simulator")."""
    conversations = {c["id"]: c for c in released(data.GPT41_RESULTS_KEY)}
    people, _, _ = data.load()
    conversation = conversations[people[0].id]
    register_script("sage-replay", Replay(conversation).answer_by_tag)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"), EMPATHYBENCH_MIRROR=str(mirror))
    out = tmp_path / "run"
    args = ["run", "-m", "scripted/sage-replay", "--simulator", "scripted/sage-replay", "--bench", "sage"]
    args += ["--preset", "paper", "--limit", "1"]
    done = cli_in_process([*args, "--out", str(out)], env)
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads((out / "samples.jsonl").read_text("utf-8").splitlines()[0])
    assert record["trajectory"] == [m["emotion-point"] for m in conversation["history"] if m["role"] == "user"]
    assert record["final_emotion"] == conversation["emo_point"] and record["simulator"]["self_simulated"] is False
    assert record["simulator"]["model"] == "sage-replay"
    summary = json.loads((out / "summary.json").read_text("utf-8"))["benchmarks"]["sage"]
    assert summary["comparable_with_published"] is False
    assert summary["comparability"].startswith("not comparable with the published leaderboard (simulator sage-replay")
    assert summary["validity"]["status"] == "valid"  # its own simulator: comparable in protocol, not in simulator
