"""`judge validate` and `run --judge` end to end (in process) against the fake OpenAI-compatible server.

The fake judge rates each reply by its length in words; every figure is recomputed here from that rule and the
released human ratings of the replies that were rated, with code independent of the library's statistics.
"""

import json
import os
import socket
import subprocess
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import spearmanr

from conftest import cli_in_process
from empathybench.instruments.empathetic.data import HUMAN, Prompt, load_released, one_per_emotion
from empathybench.instruments.empathetic.prompts import judge_messages
from empathybench.instruments.empathetic.testing import FakeJudge, length_rating, rated_reply
from empathybench.instruments.empathetic.validate import _family_of, stratified_cases
from empathybench.testing.fake_openai import FakeOpenAIServer

LIMIT = 60
JUDGE_MODEL = "gpt-fake-judge"  # a GPT name: the judge counts as the family of the released chatgpt replies
SOURCES = ("human", "chatgpt_empathy", "llama_empathy", "gemini_empathy", "mixtral_empathy")
LONG_REPLY = (
    "That sounds like a lot to carry, and it makes sense that you feel this way about it. I am really glad you "
    "told me. What part of it weighs on you the most right now, and is there anything that would help?"
)


def rule(reply: str) -> int:
    """The fake judge's rule, written out again: Bad under 20 words, Okay under 35, else Good."""
    words = len(reply.split())
    return 1 if words < 20 else (2 if words < 35 else 3)


def kappa(first: Sequence[int], second: Sequence[int], power: int) -> float:
    """Cohen's weighted kappa from agreement weights 1 - (|i - j| / 2) ** power (categories 1, 2, 3)."""
    n = len(first)
    weight = {(i, j): 1 - (abs(i - j) / 2) ** power for i in (1, 2, 3) for j in (1, 2, 3)}
    observed = sum(weight[a, b] for a, b in zip(first, second, strict=True)) / n
    share_a, share_b = Counter(first), Counter(second)
    expected = sum(weight[i, j] * share_a[i] * share_b[j] for i in (1, 2, 3) for j in (1, 2, 3)) / n**2
    return (observed - expected) / (1 - expected)


def cli_env(cache_dir: Path, mirror: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(cache_dir), EMPATHYBENCH_MIRROR=str(mirror), OPENAI_API_KEY="sk-test")
    return env


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return cli_in_process(args, env)


def validate_args(base_url: str, *extra: str) -> list[str]:
    return ["judge", "validate", "--judge", f"openai/{JUDGE_MODEL}", "--base-url", base_url, *extra]


@pytest.fixture
def judge() -> FakeJudge:
    return FakeJudge(unreadable_first_every=4, never_readable_every=9)


@pytest.fixture
def server(judge: FakeJudge) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(answer=judge, models=(JUDGE_MODEL,)) as fake:
        yield fake


@pytest.fixture(scope="module")
def prompts() -> list[Prompt]:
    return load_released()[0]


def test_rated_reply_is_found_in_the_judge_prompt() -> None:
    [message] = judge_messages("sad", "My dog died.", "I miss him.", "Oh no.\n\nSo sorry.")
    assert rated_reply({"messages": [{"role": "user", "content": message.content}]}) == "Oh no.\n\nSo sorry."
    assert rated_reply({"messages": [{"role": "user", "content": "Respond in an empathetic manner"}]}) is None
    assert length_rating("word " * 19) == 1 and length_rating("word " * 20) == 2 and length_rating("w " * 35) == 3


def test_small_limits_spread_over_every_source_and_emotion(prompts: list[Prompt]) -> None:
    for limit in (5, 10, 32, LIMIT, 200):
        pairs = stratified_cases(prompts, limit)
        assert len(pairs) == limit
        per_source = Counter(source for _, source in pairs)
        assert set(per_source) == set(SOURCES[: min(limit, 5)])
        assert max(per_source.values()) - min(per_source.values()) <= 1
        assert len({p.emotion for p, _ in pairs}) == min(limit, 32)
        assert len({(p.dialog_id, s) for p, s in pairs}) == limit  # no reply twice


def test_judge_family_comes_from_the_model_name_not_the_provider() -> None:
    assert _family_of({"provider": "openai", "model": "meta-llama/Llama-3.1-70B-Instruct"}) == "llama"
    assert _family_of({"provider": "openai", "model": "qwen2.5-7b-instruct"}) is None
    assert _family_of({"provider": "llamacpp", "model": "smollm2-135m-instruct"}) is None
    assert _family_of({"provider": "openai", "model": "o3-mini"}) == "openai"
    assert _family_of({"provider": "openai", "model": "mixtral-8x7b"}) == "mistral"


def test_judge_validate_figures_match_the_fake_judges_rule(
    server: FakeOpenAIServer, judge: FakeJudge, prompts: list[Prompt], tmp_path: Path, mirror: Path
) -> None:
    env = cli_env(tmp_path / "cache", mirror)
    out = tmp_path / "reports" / "validation.json"
    result = cli(validate_args(server.base_url, "--limit", str(LIMIT), "--json", "--out", str(out)), env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert json.loads(out.read_text("utf-8")) == report

    # The judge was asked about exactly the stratified replies, once each, under the judge's model name.
    pairs = stratified_cases(prompts, LIMIT)
    replies = [prompt.replies[source] for prompt, source in pairs]
    assert Counter(r.reply for r in judge.first_asks()) == Counter(replies)
    assert judge.judge_models() == {JUDGE_MODEL}
    assert judge.generation_models == []

    expected = [None if judge.never_readable(r) else rule(r) for r in replies]
    reasked = sum(1 for r, e in zip(replies, expected, strict=True) if e is not None and judge.unreadable_first(r))
    never = expected.count(None)
    assert reasked > 0 and never > 0  # both re-ask paths were exercised
    assert server.requests_total == LIMIT + reasked + 2 * never  # 3 asks for a reply never answered readably
    assert report["usage"]["calls"] == server.requests_total

    rated = [
        (source, prompt.ratings[source], rating, len(prompt.replies[source].split()))
        for (prompt, source), rating in zip(pairs, expected, strict=True)
        if rating is not None
    ]
    human = [h for _, h, _, _ in rated]
    judged = [j for _, _, j, _ in rated]
    n = len(rated)
    assert (report["n_cases"], report["n_rated"], report["n_unparseable"]) == (LIMIT, n, never)
    assert (report["n_reasked"], report["n_failed_calls"]) == (reasked, 0)
    assert report["accuracy"] == pytest.approx(sum(h == j for h, j in zip(human, judged, strict=True)) / n)
    assert report["weighted_kappa_linear"] == pytest.approx(kappa(human, judged, 1))
    assert report["weighted_kappa_quadratic"] == pytest.approx(kappa(human, judged, 2))
    assert report["human_human_kappa_reference"] == pytest.approx(0.28, abs=0.005)
    counts = report["confusion_matrix"]["counts"]
    assert counts == [
        [sum(1 for h, j in zip(human, judged, strict=True) if (h, j) == (a, b)) for b in (1, 2, 3)] for a in (1, 2, 3)
    ]
    assert sum(map(sum, counts)) == n
    assert report["judge_label_counts"] == {"Bad": judged.count(1), "Okay": judged.count(2), "Good": judged.count(3)}

    for source in SOURCES:
        mine = [(h, j) for s, h, j, _ in rated if s == source]
        entry = report["by_source"][source]
        assert entry["n"] == len(mine)
        assert entry["good_pct_judge"] == pytest.approx(100 * sum(j == 3 for _, j in mine) / len(mine), abs=0.005)
        assert entry["good_pct_human"] == pytest.approx(100 * sum(h == 3 for h, _ in mine) / len(mine), abs=0.005)
    human_order = sorted(SOURCES, key=lambda s: -report["by_source"][s]["good_pct_human"])
    assert report["ranking"]["human"] == human_order

    # The rule is monotone in length, so the judge's length bias is strong; scipy on the same pairs agrees.
    words = [w for _, _, _, w in rated]
    rho = report["length_bias"]["spearman_words_vs_judge"]
    assert rho == pytest.approx(spearmanr(words, judged).statistic) and rho > 0.7
    assert report["length_bias"]["spearman_words_vs_human"] == pytest.approx(spearmanr(words, human).statistic)

    preference = report["self_preference"]
    assert (preference["judge_family"], preference["own_sources"]) == ("openai", ["chatgpt_empathy"])
    own = [(h, j) for s, h, j, _ in rated if s == "chatgpt_empathy"]
    gap = 100 * sum((j == 3) - (h == 3) for h, j in own) / len(own)
    assert preference["good_gap_pp_own"] == pytest.approx(gap, abs=0.005)
    # Valence pattern: the relative Good increase over the human replies, on Good shares (n differ by source).
    for valence in ("positive", "negative"):
        good = {}
        for source in SOURCES:
            mine = [j for (p, s), j in zip(pairs, expected, strict=True) if s == source and p.valence == valence and j]
            good[source] = sum(j == 3 for j in mine) / len(mine)
        for source in SOURCES[1:]:
            increase = report["valence"]["judge"][valence][source]["good_increase_pct"]
            if good["human"]:
                assert increase == pytest.approx(100 * (good[source] - good["human"]) / good["human"], abs=0.005)
            else:  # no human reply of this valence rated Good: the increase is undefined
                assert increase is None
    assert report["valence"]["judge"]["negative"]["chatgpt_empathy"]["good_increase_pct"] is not None
    assert report["raw_unparseable"][0] == ["It is hard to say without more context."] * 3
    assert report["judge"]["model"] == JUDGE_MODEL and report["data_file"]["verified"] is True

    # The default output: tables with the judge's kappa beside the human-human reference, all from the cache.
    asked = server.requests_total
    tables = cli(validate_args(server.base_url, "--limit", str(LIMIT)), env)
    assert tables.returncode == 0, tables.stderr
    assert server.requests_total == asked
    text = tables.stdout
    assert f"{report['weighted_kappa_linear']:.3f}" in text and "0.28 human vs human" in text
    assert f"{LIMIT} released replies, {n} rated, {never} unparseable" in " ".join(text.split())


def test_failed_judge_calls_are_counted_and_the_exit_code_says_so(
    server: FakeOpenAIServer, tmp_path: Path, mirror: Path
) -> None:
    server.script_faults("400")  # the first judge call is rejected; 400s are not retried
    result = cli(validate_args(server.base_url, "--limit", "5", "--json"), cli_env(tmp_path / "cache", mirror))
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["n_failed_calls"] == 1 and report["n_cases"] == 5
    assert report["n_rated"] + report["n_unparseable"] + report["n_failed_calls"] == 5
    assert "400" in report["call_errors"][0]
    assert "1 judge calls failed" in result.stderr and "Traceback" not in result.stderr


def test_unreachable_judge_is_one_line(tmp_path: Path, mirror: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = cli(validate_args(f"http://127.0.0.1:{port}/v1", "--limit", "3"), cli_env(tmp_path / "cache", mirror))
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: cannot reach http://127.0.0.1"), result.stderr


def test_judged_run_sends_judge_calls_to_the_judge_model(tmp_path: Path, mirror: Path, prompts: list[Prompt]) -> None:
    judge = FakeJudge(unreadable_first_every=3, never_readable_every=11, generated_reply=LONG_REPLY)
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(answer=judge) as server:
        args = ["run", "--model", "openai/gen-model", "--judge", "openai/judge-model", "--base-url", server.base_url]
        args += ["--judge-base-url", server.base_url]
        args += ["--bench", "empathetic", "--preset", "quick", "--out", str(run_dir), "--quiet"]
        result = cli(args, cli_env(tmp_path / "cache", mirror))
    assert result.returncode == 0, result.stderr

    quick = one_per_emotion(prompts)
    human_replies = [p.replies[HUMAN] for p in quick]
    assert judge.generation_models == ["gen-model"] * 32
    assert judge.judge_models() == {"judge-model"}
    first_asks = Counter(r.reply for r in judge.first_asks())
    assert first_asks == Counter(human_replies + [LONG_REPLY] * 32)  # the model's 32 replies and the 32 human ones

    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))["benchmarks"]["empathetic"]
    assert summary["status"] == "complete" and summary["n_rated"] == 32
    assert summary["judge"]["self_judging"] is False and "warning" not in summary["judge"]
    assert summary["judge"]["identity"]["model"] == "judge-model"
    human_expected = [judge.expected_rating(r) for r in human_replies]
    assert summary["judge"]["unparseable"] == {"human": human_expected.count(None), "model": 0}
    human_rated = [r for r in human_expected if r is not None]
    judged = summary["judged"]["sources"]
    assert judged["human"]["n"] == len(human_rated)
    assert judged["human"]["pct_good"] == pytest.approx(100 * human_rated.count(3) / len(human_rated), abs=0.005)
    assert judged["human"]["bad"] == human_rated.count(1)
    assert rule(LONG_REPLY) == 3 and judged["model"]["good"] == 32 and summary["score"] == 100.0

    run_info = json.loads((run_dir / "run.json").read_text("utf-8"))
    assert run_info["judge"]["spec"] == "openai/judge-model"
    records = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines()]
    roles: Counter[Any] = Counter(call.get("role") for record in records for call in record["calls"])
    assert roles[None] == 32
    assert roles["judge"] == len(judge.judge_requests)
