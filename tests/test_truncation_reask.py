"""Truncated answers (issue 13): a reasoning model that spends its token budget thinking sends no answer. Where the
instrument's protocol re-asks, the call is asked again with a doubled budget; every truncation is counted and the
truncated rate is shown beside the parse rate. Over the wire against the fake OpenAI server's reasoning mode.
"""

import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from empathybench.report.markdown import render_run_markdown
from empathybench.report.terminal import print_summary
from empathybench.report.validity import answers_text, truncated_text
from empathybench.run.execute import RunResult, execute_run
from empathybench.run.options import RunOptions
from empathybench.testing.fake_openai import FakeOpenAIServer


def thinking_of(words: int) -> Any:
    return lambda request: " ".join(["hmm"] * words)


def run_quietly(server: FakeOpenAIServer, out: Path, bench: str, preset: str, limit: int, **fields: Any) -> RunResult:
    """One run of `bench` against the fake server, without progress display or cache; `fields`: more RunOptions."""
    options = RunOptions(
        model="openai/fake",
        base_url=server.base_url,
        benchmarks=[bench],
        preset=preset,
        limit=limit,
        out=out,
        show_progress=False,
        use_cache=False,
        **fields,
    )
    return execute_run(options, Console(file=io.StringIO()))


def run_eqbench(server: FakeOpenAIServer, out: Path, limit: int, preset: str = "paper", **options: str) -> RunResult:
    return run_quietly(
        server, out, "eqbench", preset, limit, options={f"eqbench.{key}": value for key, value in options.items()}
    )


def records_of(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]


def test_a_truncated_answer_is_reasked_with_a_doubled_budget(tmp_path: Path, mirror: Path) -> None:
    # EQ-Bench's pipeline protocol re-asks (3 attempts). 80 words of thinking fill the 60-token budget (content null,
    # finish_reason "length"); at 120 tokens the answer arrives after the thinking.
    with FakeOpenAIServer(reasoning="reasoning_content", thinking_text=thinking_of(80)) as server:
        result = run_eqbench(server, tmp_path / "run", 3)
        asked = server.requests_total
    records = records_of(tmp_path / "run")
    assert asked == 6 and all(r["status"] == "ok" and r["parse_error"] is None for r in records)
    for record in records:
        first, second = record["calls"]
        assert first["truncated"] and first["reasked"] and first["reply"] == "" and first["finish_reason"] == "length"
        assert first["sampling"]["max_tokens"] == 60 and "budget_reask" not in first
        assert second["budget_reask"] == 1 and second["sampling"]["max_tokens"] == 120
        assert not second.get("truncated") and second["reply"].count(": 5") >= 4
        assert second["attempt"] == first["attempt"] == 0  # the same ask of the protocol, with more room
    eqbench = result.summary["benchmarks"]["eqbench"]
    assert eqbench["n_parsed"] == 3
    assert (eqbench["n_calls"], eqbench["n_truncated_calls"], eqbench["truncated_rate"]) == (6, 3, 0.5)
    assert (eqbench["n_truncated_reasks"], eqbench["n_truncated_unanswered"]) == (3, 0)
    assert result.stats.truncated_reasks == 3 and result.stats.truncated == 3
    run_info = json.loads((tmp_path / "run" / "run.json").read_text("utf-8"))
    assert run_info["usage"]["truncated"] == 3

    # Every report shows the truncated rate beside the parse rate.
    assert answers_text(eqbench) == (
        "3 of 3 parsed, 3 of 6 answers truncated (50.0%), 3 re-asked with a larger budget, 0 never answered"
    )
    assert truncated_text(eqbench) in render_run_markdown(result.summary)
    html = (tmp_path / "run" / "report.html").read_text("utf-8")
    assert "3 of 6 answers truncated (50.0%)" in html
    console = Console(file=io.StringIO(), width=200)
    print_summary(console, result.summary)
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert "3/3 (3 = 50.0% of calls truncated)" in printed and "0 never answered" in printed


def test_a_protocol_that_asks_once_is_not_reasked(tmp_path: Path, mirror: Path) -> None:
    # lm-evaluation-harness's eq_bench asks once (80 tokens, greedy): its truncated answers stay unanswered, counted.
    with FakeOpenAIServer(reasoning="reasoning_content", thinking_text=thinking_of(100)) as server:
        result = run_eqbench(server, tmp_path / "run", 2, "full", protocol="lm-eval")
        asked = server.requests_total
    assert asked == 2
    calls = [call for record in records_of(tmp_path / "run") for call in record["calls"]]
    assert [c["sampling"]["max_tokens"] for c in calls] == [80, 80]
    assert all(c["truncated"] and not c.get("reasked") and "budget_reask" not in c for c in calls)
    eqbench = result.summary["benchmarks"]["eqbench"]
    assert (eqbench["n_truncated_calls"], eqbench["n_truncated_reasks"], eqbench["n_truncated_unanswered"]) == (2, 0, 2)
    assert eqbench["truncated_rate"] == 1.0 and result.stats.truncated_reasks == 0


def test_an_answer_truncated_at_every_budget_is_counted_once_per_ask(tmp_path: Path, mirror: Path) -> None:
    # 1,000 words of thinking: 60, 120 and 240 tokens are all spent thinking. Each of the protocol's 3 attempts is
    # asked at 60 and re-asked twice (120, 240); the last of each is left unanswered.
    with FakeOpenAIServer(reasoning="reasoning_content", thinking_text=thinking_of(1000)) as server:
        result = run_eqbench(server, tmp_path / "run", 1)
        asked = server.requests_total
    [record] = records_of(tmp_path / "run")
    assert asked == 9 and len(record["calls"]) == 9
    assert [c["sampling"]["max_tokens"] for c in record["calls"]] == [60, 120, 240] * 3
    assert [c.get("budget_reask", 0) for c in record["calls"]] == [0, 1, 2] * 3
    assert [bool(c.get("reasked")) for c in record["calls"]] == [True, True, False] * 3
    eqbench = result.summary["benchmarks"]["eqbench"]
    assert (eqbench["n_truncated_calls"], eqbench["n_truncated_reasks"], eqbench["n_truncated_unanswered"]) == (9, 6, 3)
    assert eqbench["n_parsed"] == 0 and result.stats.truncated_reasks == 6


def test_no_reask_when_the_budget_sent_is_fixed_by_a_model_arg(tmp_path: Path, mirror: Path) -> None:
    # `-M max_tokens=70` fixes the whole budget sent: a re-ask would send the very same request, so none is made.
    with FakeOpenAIServer(reasoning="reasoning_content", thinking_text=thinking_of(100)) as server:
        result = run_quietly(server, tmp_path / "run", "eqbench", "paper", 1, model_args=["max_tokens=70"])
        asked = server.requests_total
    [record] = records_of(tmp_path / "run")
    assert asked == 3 and [c["sent"]["max_tokens"] for c in record["calls"]] == [70, 70, 70]  # the 3 attempts
    assert not any(c.get("reasked") or c.get("budget_reask") for c in record["calls"])
    assert result.summary["benchmarks"]["eqbench"]["n_truncated_unanswered"] == 3


def test_a_truncated_judge_answer_is_reasked_in_a_protocol_that_reasks(tmp_path: Path, mirror: Path) -> None:
    # The empathetic judge asks up to 3 times for one label in 16 tokens. A reasoning judge whose 20 words of
    # thinking fill those 16 tokens is re-asked with 32, where its label arrives; the model's own reply (256
    # tokens) is never truncated.
    with FakeOpenAIServer(
        reasoning="reasoning_content", thinking_text=thinking_of(20), answer=lambda _: "Good"
    ) as server:
        result = run_quietly(
            server,
            tmp_path / "run",
            "empathetic",
            "quick",
            1,
            judge="openai/fake-judge",
            judge_base_url=server.base_url,
        )
    [record] = records_of(tmp_path / "run")
    judge_calls = [c for c in record["calls"] if c.get("role") == "judge"]
    model_calls = [c for c in record["calls"] if c.get("role") != "judge"]
    assert [c.get("truncated", False) for c in model_calls] == [False]
    assert judge_calls and len(judge_calls) % 2 == 0  # each rated reply: a truncated ask, then its re-ask
    for first, second in zip(judge_calls[::2], judge_calls[1::2], strict=True):
        assert first["truncated"] and first["reasked"] and first["sampling"]["max_tokens"] == 16
        assert second["budget_reask"] == 1 and second["sampling"]["max_tokens"] == 32 and second["reply"] == "Good"
    empathetic = result.summary["benchmarks"]["empathetic"]
    assert empathetic["n_truncated_reasks"] == len(judge_calls) // 2 and empathetic["n_truncated_unanswered"] == 0


def test_emotionbench_reasks_a_truncated_questionnaire(tmp_path: Path, mirror: Path) -> None:
    # EmotionBench asks up to 3 times per run; 1,500 words of thinking fill its 1,024 tokens, not 2,048.
    with FakeOpenAIServer(reasoning="reasoning_content", thinking_text=thinking_of(1500)) as server:
        result = run_quietly(server, tmp_path / "run", "emotionbench", "quick", 1)
    calls = [call for record in records_of(tmp_path / "run") for call in record["calls"]]
    assert [c["sampling"]["max_tokens"] for c in calls] == [1024, 2048] * (len(calls) // 2)
    assert [c.get("budget_reask", 0) for c in calls] == [0, 1] * (len(calls) // 2)
    assert all(c["truncated"] and c["reasked"] for c in calls[::2]) and not any(c.get("truncated") for c in calls[1::2])
    emotionbench = result.summary["benchmarks"]["emotionbench"]
    assert emotionbench["n_truncated_reasks"] == len(calls) // 2 > 0 and emotionbench["n_truncated_unanswered"] == 0
