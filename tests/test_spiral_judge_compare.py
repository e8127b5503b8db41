"""`empathybench judge compare --bench spiral` over the wire, against the loopback fake OpenAI server.

The fake judges answer from the released result files themselves (read here with json, not with the instrument's
code): the one answers every chunk with the published judge's own reply for that chunk and every final judgement with
the published one, so it must agree with the published judge throughout (`consistent`); the other adds two strong
incidences of delusion reinforcement to every chunk and rates every conversation off the rails, so its headlines must
fall far outside the margin (`differs`). Kept fast with --limit (2 conversations of each of the 4 models at most).
"""

import json
import os
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR, cli_in_process
from empathybench.testing.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"the offline mirror is not at {MIRROR}")
RELEASED = sorted(MIRROR.glob("sam-paech/spiral-bench/*/res_v0.2/*.json"))
OPENINGS = next(MIRROR.glob("sam-paech/spiral-bench/*/prompts/eval_prompts_v0.2.json"), None)
ASSISTANT = re.compile(r"^# Assistant \(turn \d+\)\n", re.MULTILINE)
PROBE = 300  # characters of an assistant reply that identify it


@cache
def _released() -> dict[str, Any]:
    """Each released file's data by its model (the file's name), read once."""
    return {path.stem: json.loads(path.read_text("utf-8")) for path in RELEASED}


def _conversations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for model, data in _released().items():
        for bucket in data.values():
            for file_key, prompts in bucket.items():
                if file_key in ("__meta__", "scoring_summary", "final_judgement_summary"):
                    continue
                for prompt_id, conversations in prompts.items():
                    for convo in conversations:
                        yield model, prompt_id, convo


class ReleasedJudge:
    """Answers a chunk judge's request with the released reply for the chunk it shows, a final judge's with the
    released final judgement of the conversation it shows; `altered` makes both harsher; records what it was asked."""

    def __init__(self, altered: bool = False) -> None:
        self.altered = altered
        self.chunks: dict[str, tuple[str, str, str, str | None]] = {}  # reply probe -> model, prompt, chunk, raw
        self.finals: dict[str, tuple[str, str, Any]] = {}  # first reply probe -> model, prompt, final judgement
        self.asked: list[tuple[str, str, str]] = []
        for model, prompt_id, convo in _conversations():
            transcript = convo["transcript"]
            self.finals[transcript[1]["content"].strip()[:PROBE]] = (model, prompt_id, convo["final_judgement"])
            for name, chunk in convo["judgements"].items():
                turn = int(name.removeprefix("chunk")) + 1  # the chunk's assistant turn (the first is never judged)
                reply = transcript[2 * turn + 1]["content"].strip()[:PROBE]
                self.chunks[reply] = (model, prompt_id, name, chunk.get("raw_text"))

    def __call__(self, request: dict[str, Any]) -> str:
        prompt = request["messages"][-1]["content"]
        found = ASSISTANT.search(prompt)
        if found is not None:
            reply = prompt[found.end() :].split("\n[/TRANSCRIPT]", 1)[0]
            model, prompt_id, name, raw = self.chunks[reply.strip()[:PROBE]]
            self.asked.append((model, prompt_id, name))
            if raw is None:  # a released error stub: no rating now either
                return "I cannot rate this."
            if not self.altered:
                return raw
            verdict = json.loads(raw[raw.index("{") : raw.rindex("}") + 1])
            verdict["delusion reinforcement"] = [["it is real", 3], ["you are right", 3]]
            verdict["pushback"] = []
            return json.dumps(verdict)
        model, prompt_id, final = next(v for k, v in self.finals.items() if k and k in prompt)
        self.asked.append((model, prompt_id, "final"))
        if self.altered:
            final = {"off_rails": 10, "safety": 0, "social_dexterity": 0}
        return json.dumps(final)


def _stratified() -> list[str]:
    """The openings in --limit's order: the first of each category (categories in file order), then the second..."""
    assert OPENINGS is not None
    entries = json.loads(OPENINGS.read_text("utf-8"))
    taken: dict[str, list[str]] = {}
    for entry in entries:
        taken.setdefault(entry["category"], []).append(entry["prompt_id"])
    return [ids[rank] for rank in range(max(map(len, taken.values()))) for ids in taken.values() if rank < len(ids)]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env["OPENAI_API_KEY"] = "sk-test"
    return env


def _compare(server: FakeOpenAIServer, model: str, out: Path, *extra: str) -> Any:
    args = ["judge", "compare", "--bench", "spiral", "--judge", f"openai/{model}", "--judge-base-url"]
    return cli_in_process([*args, server.base_url, "--out", str(out), "-q", *extra], _env())


@pytest.fixture(scope="module")
def released_judge() -> ReleasedJudge:
    return ReleasedJudge()


def _served(answer: Callable[[dict[str, Any]], str], model: str) -> FakeOpenAIServer:
    return FakeOpenAIServer(answer=answer, models=(model,))


def test_a_judge_answering_the_released_verdicts_is_consistent(released_judge: ReleasedJudge, tmp_path: Path) -> None:
    from empathybench.instruments.spiral.rescore import rescore_data

    released_judge.asked.clear()
    with _served(released_judge, "same-judge") as server:
        done = _compare(server, "same-judge", tmp_path / "same", "--limit", "2", "--json")
        asked = server.requests_total
        server.reset_counters()
        # The terminal, from the judgements file: the verdict, every model's whole name on a narrow terminal.
        args = ["judge", "compare", "--judge", "openai/same-judge", "--base-url", server.base_url, "--limit", "2"]
        shown = cli_in_process([*args, "--out", str(tmp_path / "same"), "-q"], _env() | {"COLUMNS": "40"})
        assert server.requests_total == 0  # every verdict from the judgements file
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert json.loads((tmp_path / "same" / "judge-comparison.json").read_text("utf-8"))["verdict"] == "consistent"
    assert result["format"] == 1 and result["kind"] == "judge_comparison" and result["instrument"] == "spiral"
    assert result["judge"]["model"] == "same-judge" and result["published_judge"] == "gpt-5-2025-08-07"

    # The judge saw exactly 2 conversations of each model (the first opening of the first two categories), each
    # chunk once (a released error stub asked 7 times, as a run asks), and each final judgement once.
    conversations = {(m, p) for m, p, _ in released_judge.asked}
    assert conversations == {(path.stem, pid) for path in RELEASED for pid in _stratified()[:2]}
    errors = {(m, p, n) for m, p, c in _conversations() for n, ch in c["judgements"].items() if "error" in ch}
    expected_asks = sum(7 if (m, p, n) in errors else 1 for m, p, n in set(released_judge.asked))
    assert asked == expected_asks == len(released_judge.asked)
    assert result["counts"]["chunks_compared"] + result["counts"]["published_chunk_errors"] == 8 * 19
    assert result["counts"]["final_compared"] == 8 and result["counts"]["conversations_complete"] == 8

    # Agreement ~1 on every criterion either judge ever rated; the same headlines.
    rated = [row for row in result["agreement"] if row["pearson"]["value"] is not None]
    assert len(rated) >= 6
    for row in rated:
        assert row["pearson"]["value"] == pytest.approx(1.0) and row["spearman"]["value"] == pytest.approx(1.0)
        assert row["mean_difference"] == {"value": 0.0, "ci95": [0.0, 0.0]}
    assert all(row["incidence_agreement"]["value"] == 1.0 for row in result["agreement"] if row["n"])
    by_model = {m["model"]: m for m in result["models"]}
    for path in RELEASED:
        model = by_model[path.stem]
        assert model["published_judge"] == model["judge"] and model["difference"] == 0.0
        assert model["ci95"] == [0.0, 0.0] and model["verdict"] == "consistent" and model["n_conversations"] == 2
        # The published judge's headline on these two conversations is the rescore command's of them alone.
        data = _released()[path.stem]
        kept = {
            run: {
                key: {pid: convs for pid, convs in prompts.items() if (path.stem, pid) in conversations}
                for key, prompts in bucket.items()
                if key not in ("__meta__", "scoring_summary")
            }
            for run, bucket in data.items()
        }
        assert model["published_judge"] == pytest.approx(rescore_data(kept, path.stem)["score_0_100"], abs=0.05)
        assert model["published_recomputed"] == pytest.approx(model["published"]["value"], abs=0.05)
    assert result["overall"]["difference"] == 0.0 and result["margin"]["value"] == 3.0
    assert shown.returncode == 0, shown.stderr
    assert "verdict: consistent" in shown.stdout
    assert all(f"  {path.stem}: published judge" in shown.stdout for path in RELEASED)


def test_a_judge_with_altered_verdicts_differs(tmp_path: Path) -> None:
    altered = ReleasedJudge(altered=True)
    with _served(altered, "harsh-judge") as server:
        done = _compare(server, "harsh-judge", tmp_path / "harsh", "--limit", "2", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "differs" and result["overall"]["ci95"][1] < -3.0
    for model in result["models"]:
        assert model["verdict"] == "differs" and model["judge"] < model["published_judge"] - 3.0
    rows = {(row["judge"], row["criterion"]): row for row in result["agreement"]}
    delusion = rows["chunk", "delusion_reinforcement"]
    assert delusion["mean_other"] == 5.0 and delusion["mean_difference"]["value"] > 0  # 3 + 3, capped at 5
    assert rows["chunk", "pushback"]["mean_other"] == 0.0 and rows["chunk", "pushback"]["pearson"]["value"] is None
    assert rows["final", "off_rails"]["mean_other"] == 10.0
    _shown_as_evidence(tmp_path / "harsh", result)


def _shown_as_evidence(out: Path, result: dict[str, Any]) -> None:
    """`empathybench judges OUT` reads the written result as a source of evidence (the command's parts, without
    MentalAlign's): its headline is the verdict's figure, a row per criterion and statistic, each with its unit."""
    from io import StringIO

    from rich.console import Console

    from empathybench.judges.evidence import evidence_table
    from empathybench.judges.user_files import user_sources
    from empathybench.judges.views import render_evidence, write_html

    (source,) = user_sources([out])
    document = evidence_table([source])
    (headline,) = document["headline"]
    overall = result["overall"]
    assert (headline["judge"], headline["value"], headline["ci95"]) == (
        "harsh-judge",
        overall["difference"],
        overall["ci95"],
    )
    assert (headline["n"], headline["unit"]) == (8, "conversation") and "verdict differs (margin ±3.00)" in headline[
        "note"
    ]
    rows = {(row["aspect"], row["statistic"]): row for row in document["evidence"]}
    assert len(rows) == 1 + 2 * len(result["agreement"])
    delusion = rows["delusion reinforcement", "mean difference (this judge - published)"]
    reference = next(r for r in result["agreement"] if r["criterion"] == "delusion_reinforcement")
    assert (delusion["value"], delusion["n"], delusion["unit"]) == (
        reference["mean_difference"]["value"],
        reference["n"],
        "chunk",
    )
    assert rows["final judgement: off rails", "Spearman's rho"]["unit"] == "conversation"
    shown = StringIO()
    render_evidence(document, Console(file=shown, width=250))
    assert "harsh-judge" in shown.getvalue() and "verdict differs" in shown.getvalue()
    page, _ = write_html(document, out / "page")
    assert "final judgement: off rails" in page.read_text("utf-8")


def test_dry_run_makes_no_call_and_prints_the_estimate(released_judge: ReleasedJudge, tmp_path: Path) -> None:
    with _served(released_judge, "dry-judge") as server:
        price = ["--judge-price", "input=1,output=2"]
        shown = _compare(server, "dry-judge", tmp_path / "dry", "--limit", "1", "--dry-run", *price)
        estimate = _compare(server, "dry-judge", tmp_path / "dry", "--limit", "1", "--dry-run", "--json", *price)
        assert server.requests_total == 0
    assert shown.returncode == 0 and estimate.returncode == 0, shown.stderr + estimate.stderr
    assert "no model was called" in shown.stdout and "76 chunks and 4 final judgements" in shown.stdout
    figures = json.loads(estimate.stdout)
    judge = figures["total"]["judge"]
    assert figures["tasks"] == 80 and judge["requests"] == 80  # 4 models x (19 chunks + 1 final)
    assert judge["cost_usd"] == pytest.approx((judge["input_tokens"] + 2 * judge["output_tokens"]) / 1e6)
    assert not (tmp_path / "dry").exists()  # nothing written


def test_max_cost_stops_within_the_budget_and_the_same_command_continues(
    released_judge: ReleasedJudge, tmp_path: Path
) -> None:
    out = tmp_path / "budget"
    price = ["--judge-price", "input=1,output=1", "--max-concurrency", "2", "--limit", "1"]
    with _served(released_judge, "budget-judge") as server:
        stopped = _compare(server, "budget-judge", out, "--max-cost", "0.05", *price)
        first = server.requests_total
        assert stopped.returncode == 3, stopped.stderr
        assert "stopped at the cost budget" in stopped.stderr
        assert 0 < first < 80
        kept = (out / "spiral-judgements.jsonl").read_text("utf-8").splitlines()
        assert len(kept) == first  # every answered verdict kept (none of these is a released error stub)
        # What was spent (the fake's own token counts at $1 per million) stays within the budget.
        spent = re.search(r"spent \$([0-9.]+) of --max-cost 0.05", " ".join(stopped.stderr.split()))
        assert spent is not None and 0 < float(spent.group(1)) <= 0.05
        assert not (out / "judge-comparison.json").exists()
        server.reset_counters()
        done = _compare(server, "budget-judge", out, "--max-cost", "5", "--json", *price)
        assert done.returncode == 0, done.stderr
        assert server.requests_total == 80 - first  # only what the judgements file does not hold
    result = json.loads(done.stdout)
    assert result["tasks"] == {"total": 80, "asked_now": 80 - first, "from_judgements_file": first, "failed": 0}
    assert result["cost"]["judge"]["cost_usd"] <= 5


def test_limit_bounds_the_conversations_per_model() -> None:
    from empathybench.instruments.spiral.judge_compare import prepare

    identity = {"provider": "openai", "model": "x"}
    one = prepare(limit=1, judge="openai/x", judge_identity=identity)
    three = prepare(limit=3, judge="openai/x", judge_identity=identity)
    assert len(one.tasks) == 4 * 20 and len(three.tasks) == 4 * 3 * 20
    assert {t.prompt_id for t in one.tasks} == set(_stratified()[:1])
    assert {t.prompt_id for t in three.tasks} == set(_stratified()[:3])  # a category at a time
    assert {t.model for t in three.tasks} == {path.stem for path in RELEASED}
    assert len({t.key for t in three.tasks}) == len(three.tasks)  # one key per prompt
    # Another judge, or the same one with other model arguments (--judge-arg), asks again: other keys.
    for other in ({"provider": "openai", "model": "y"}, {**identity, "model_args": {"reasoning_effort": "high"}}):
        again = prepare(limit=1, judge="openai/x", judge_identity=other)
        assert not {t.key for t in again.tasks} & {t.key for t in one.tasks}


def test_an_instrument_without_a_judge_comparison_is_one_line(tmp_path: Path) -> None:
    args = ["judge", "compare", "--bench", "eqbench", "--judge", "openai/x", "--dry-run", "--out", str(tmp_path)]
    done = cli_in_process(args, _env())
    assert done.returncode == 2  # a UserError
    assert "eqbench has no judge comparison; --bench takes one of: spiral" in " ".join(done.stderr.split())
