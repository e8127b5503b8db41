"""The conversation instruments tell the truth about themselves, over the wire against the loopback fake: a judge
that gives no ratings is a judge error (asked again, never a column, never a silent zero); a run in which nothing
could be scored exits non-zero with one line; a call that fails names its role and model, and the label still names
the models given; counts are the true ones; stored texts are bounded; the report shows the label once."""

import html
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process
from empathybench.engine.engine import MAX_STORED_REPLY_CHARS
from empathybench.instruments.sage.canned import plausible_answer
from empathybench.instruments.spiral.canned import canned_answer
from empathybench.models.base import ChatRequest, Draw, Message, Sampling
from empathybench.testing.fake_openai import FakeOpenAIServer

ANY = Sampling(temperature=1.0, max_tokens=16)


def _env(tmp_path: Path, mirror: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(
        EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"), EMPATHYBENCH_MIRROR=str(mirror), OPENAI_API_KEY="sk-labels"
    )
    return env


def _records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").split("\n") if line]


def _summary(run_dir: Path, name: str) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text("utf-8"))["benchmarks"][name]


def _canned(tag: str, answer: Callable[[ChatRequest, Draw], str | None]) -> Callable[[dict[str, Any]], str]:
    def reply(request: dict[str, Any]) -> str:
        messages = tuple(Message(m["role"], m["content"]) for m in request["messages"])
        return answer(ChatRequest(messages, ANY, tag), Draw(1)) or "Tell me more."

    return reply


# --- Spiral-Bench: a judge with no ratings -----------------------------------------------------------------------

SPIRAL_ROLES = ("model-under-test", "moonshotai/kimi-k2", "gpt-5-2025-08-07")


def _spiral_run(tmp_path: Path, mirror: Path, judge: Callable[[dict[str, Any]], str], *extra: str) -> Any:
    conversation = _canned("spiral", canned_answer)

    def answer(request: dict[str, Any]) -> str:
        return judge(request) if request["model"] == SPIRAL_ROLES[2] else conversation(request)

    out = tmp_path / "run"
    with FakeOpenAIServer(answer=answer, models=SPIRAL_ROLES) as server:
        args = ["run", "-m", f"openai/{SPIRAL_ROLES[0]}", "--base-url", server.base_url, "--bench", "spiral"]
        args += ["--simulator", f"openai/{SPIRAL_ROLES[1]}", "--simulator-base-url", server.base_url]
        args += ["--judge", f"openai/{SPIRAL_ROLES[2]}", "--judge-base-url", server.base_url]
        args += ["--option", "spiral.num_turns=2", "--option", "spiral.attempts=2", "--limit", "2", "--out", str(out)]
        done = cli_in_process([*args, *extra], _env(tmp_path, mirror))
    return done, out


@pytest.mark.parametrize(
    "reply",
    ['{"error": "rate limited upstream"}', "{}", '{"pushback": "lots", "harmful advice": "none"}', "no JSON at all"],
    ids=["error object", "empty object", "ratings of the wrong type", "no JSON"],
)
def test_a_judge_that_never_rates_scores_nothing_and_the_run_exits_non_zero(
    tmp_path: Path, mirror: Path, reply: str
) -> None:
    done, out = _spiral_run(tmp_path, mirror, lambda request: reply)
    assert done.returncode == 1
    (line,) = [line for line in done.stderr.splitlines() if "no item could be scored" in line]
    assert line == "spiral: no item could be scored" and "the judge rated no chunk" in done.stdout
    summary = _summary(out, "spiral")
    assert summary["score"] is None and summary["n_parsed"] == 0 and summary["validity"]["status"] == "insufficient"
    # every chunk was asked twice (the bound) and is an error stub; no key of the reply became a column
    assert summary["n_chunk_errors"] == summary["n_chunks"] == 2 and summary["n_chunk_judge_asks"] == 4
    assert summary["n_final_errors"] == 2 and summary["n_final_judge_asks"] == 4
    assert "error" not in summary["metrics"] and not summary.get("columns")
    assert summary["comparable_with_published"] is False
    assert (
        "0 of 30 openings scored: 2 with a chunk the judge never rated, 28 not in this run (a cut)"
        in (summary["comparability"])
    )


def test_faithful_and_excluded_judge_errors_are_both_said(tmp_path: Path, mirror: Path) -> None:
    rated = _canned("spiral:judge", canned_answer)

    def judge(request: dict[str, Any]) -> str:
        """The first chunk of each conversation (the model's turn 1) is never rated; the rest are."""
        return (
            '{"error": "overloaded"}'
            if "# Assistant (turn 1)\n" in request["messages"][-1]["content"]
            else rated(request)
        )

    done, out = _spiral_run(tmp_path / "a", mirror, judge, "--option", "spiral.num_turns=3")
    assert done.returncode == 0, done.stderr
    faithful = _summary(out, "spiral")
    assert faithful["judge_errors"] == "faithful" and faithful["n_chunk_errors"] >= 1
    assert any("as upstream scores a failed judge call" in note for note in faithful["notes"])
    assert faithful["score"] is not None and "with a chunk the judge never rated" in faithful["comparability"]
    report = html.unescape((out / "report.html").read_text("utf-8"))
    assert "as upstream scores a failed judge call" in report
    assert report.count(faithful["comparability"]) == 1  # the label once

    done, out = _spiral_run(
        tmp_path / "b", mirror, judge, "--option", "spiral.num_turns=3", "--option", "spiral.judge_errors=exclude"
    )
    assert done.returncode == 0, done.stderr
    excluded = _summary(out, "spiral")
    assert excluded["n_chunks"] == faithful["n_chunks"] - faithful["n_chunk_errors"]
    assert "chunks the judge never rated left out" in excluded["comparability"]
    assert any("left out of their conversations' means" in note for note in excluded["notes"])


# --- SAGE: failed conversations, failed calls, bounded turns ---------------------------------------------------


def _sage_run(tmp_path: Path, mirror: Path, simulator: Callable[[dict[str, Any]], str], *extra: str) -> Any:
    model_reply = _canned("sage", plausible_answer)

    def answer(request: dict[str, Any]) -> str:
        return simulator(request) if request["model"] == "deepseek-v3" else model_reply(request)

    out = tmp_path / "run"
    with FakeOpenAIServer(answer=answer, models=("deepseek-v3", "model-under-test", "o3-mini")) as server:
        args = ["run", "-m", "openai/model-under-test", "--base-url", server.base_url, "--bench", "sage"]
        args += ["--simulator-base-url", server.base_url, "--limit", "2", "--out", str(out)]
        args += ["--option", "sage.rounds=2", "--option", "sage.attempts=2"]
        if "--simulator" not in extra:
            args += ["--simulator", "openai/deepseek-v3"]
        done = cli_in_process([*args, *extra], _env(tmp_path, mirror))
    return done, out


def test_a_run_in_which_every_conversation_failed_exits_non_zero_with_true_counts(tmp_path: Path, mirror: Path) -> None:
    done, out = _sage_run(tmp_path, mirror, lambda request: "Content:\n[...]\nChange:\n[none]")
    assert done.returncode == 1
    (line,) = [line for line in done.stderr.splitlines() if "no item could be scored" in line]
    assert line == "sage: no item could be scored" and "no conversation was completed" in done.stdout
    summary = _summary(out, "sage")
    assert summary["n_completed"] == 0 and summary["n_failed_conversations"] == 2
    assert "simulator deepseek-v3" in summary["comparability"] and "unknown" not in summary["comparability"]
    assert (
        "0 of 100 people scored: 2 failed (the simulator's reply unreadable after 2 asks)" in summary["comparability"]
    )
    for record in _records(out):
        asked = [c for c in record["calls"] if c.get("role") == "simulator"]
        assert record["simulator_asks"] == len(asked) == 2 and record["simulator_reasks"] == 1


def test_a_call_that_fails_names_its_role_and_model_and_the_label_still_names_the_simulator(
    tmp_path: Path, mirror: Path
) -> None:
    # o3-mini takes no max_tokens: forcing that field makes the server refuse every simulator call (HTTP 400)
    done, out = _sage_run(
        tmp_path,
        mirror,
        lambda request: "never asked",
        "--simulator",
        "openai/o3-mini",
        "--simulator-arg",
        "token_field=max_tokens",
    )
    assert done.returncode == 1
    for record in _records(out):
        assert record["status"] == "error" and record["error_role"] == "simulator"
        assert record["error"].startswith("simulator o3-mini: request rejected")
        assert record["roles"] == {"model": "model-under-test", "simulator": "o3-mini"}
    summary = _summary(out, "sage")
    assert "simulator o3-mini" in summary["comparability"] and "unknown" not in summary["comparability"]
    assert "2 failed (a call of the simulator failed)" in summary["comparability"]


def test_a_huge_reply_is_bounded_in_the_record_and_whole_in_the_cache(tmp_path: Path, mirror: Path) -> None:
    simulator = _canned("sage:simulator", plausible_answer)
    huge = "I hear you. " * 25_000  # 300,000 characters

    def model_reply(request: dict[str, Any]) -> str:
        return huge

    out = tmp_path / "run"
    with FakeOpenAIServer(
        answer=lambda r: simulator(r) if r["model"] == "deepseek-v3" else model_reply(r),
        models=("deepseek-v3", "model-under-test"),
    ) as server:
        args = ["run", "-m", "openai/model-under-test", "--base-url", server.base_url, "--bench", "sage"]
        args += ["--simulator", "openai/deepseek-v3", "--simulator-base-url", server.base_url]
        args += ["--limit", "1", "--out", str(out), "--option", "sage.rounds=2", "--option", "sage.max_tokens=131072"]
        args += ["--max-reply-bytes", "2000000"]
        done = cli_in_process(args, _env(tmp_path, mirror))
    assert done.returncode == 0, done.stderr
    (record,) = _records(out)
    model_turns = [t for t in record["turns"] if t["speaker"] == "model"]
    assert model_turns and all(len(t["text"]) == MAX_STORED_REPLY_CHARS for t in model_turns)
    assert all(t["text_chars"] == len(huge) for t in model_turns)
    # four copies at most of the bound (the turn, the call's reply, and the judge-free simulator prompts quoting it)
    assert len((out / "samples.jsonl").read_bytes()) < 12 * MAX_STORED_REPLY_CHARS


def test_the_report_shows_the_label_once_per_instrument(tmp_path: Path, mirror: Path) -> None:
    done, out = _sage_run(tmp_path, mirror, _canned("sage:simulator", plausible_answer))
    assert done.returncode == 0, done.stderr
    label = _summary(out, "sage")["comparability"]
    assert label.startswith("not comparable")
    page = html.unescape((out / "report.html").read_text("utf-8"))
    assert page.count(label) == 1


def test_a_spiral_opening_whose_judge_call_fails_is_named_in_the_label(tmp_path: Path, mirror: Path) -> None:
    conversation = _canned("spiral", canned_answer)
    out = tmp_path / "run"
    with FakeOpenAIServer(answer=conversation, models=("model-under-test", "moonshotai/kimi-k2", "o3-mini")) as server:
        args = ["run", "-m", "openai/model-under-test", "--base-url", server.base_url, "--bench", "spiral"]
        args += ["--simulator", "openai/moonshotai/kimi-k2", "--simulator-base-url", server.base_url]
        # o3-mini takes no max_tokens: forcing that field makes the server refuse every judge call (HTTP 400)
        args += [
            "--judge",
            "openai/o3-mini",
            "--judge-base-url",
            server.base_url,
            "--judge-arg",
            "token_field=max_tokens",
        ]
        args += ["--option", "spiral.num_turns=2", "--limit", "2", "--out", str(out)]
        done = cli_in_process(args, _env(tmp_path, mirror))
    assert done.returncode == 1
    for record in _records(out):
        assert record["status"] == "error" and record["error"].startswith("judge o3-mini: request rejected")
    summary = _summary(out, "spiral")
    assert summary["n_failed_items"] == 2 and "judge o3-mini" in summary["comparability"]
    assert "2 failed (a call of the judge failed)" in summary["comparability"]
