"""TactfulToM end to end: through the CLI with scripted models (the calls the protocol makes, the two-pass chain of
thought, an oracle that knows every key scores 100, a model that never answers scores 0 and is counted unread) and
over the wire against the loopback fake OpenAI server answering with the instrument's canned answers."""

import json
import os
from pathlib import Path

import pytest

from canned_server import MODEL, CannedServer
from conftest import cli_in_process, run_instrument
from empathybench.instruments.tactfultom.data import Question, load_questions
from empathybench.instruments.tactfultom.prompts import COT_CUE, COT_FINAL, user_prompt
from empathybench.instruments.tactfultom.score import CATEGORIES
from empathybench.models.base import ChatRequest
from empathybench.models.scripted import register_script

_BY_PROMPT: dict[str, Question] = {}


def _oracle(request: ChatRequest) -> str:
    """The key in the asked format, the question found by its prompt (context, information and question)."""
    system, user = request.messages[0].content, request.messages[-1].content
    if user.endswith(COT_CUE):
        return "Thinking it through."
    user = user.split(COT_CUE)[0].split("# Options:\n")[0]
    question = _BY_PROMPT[user]
    if "option number" in system:
        lines = request.messages[-1].content.split("# Options:\n")[1].splitlines()
        return next(line.split(". ", 1)[0] for line in lines if line.split(". ", 1)[1] == question.gold)
    if "commas" in system:
        return ", ".join(question.gold)
    return str(question.gold)


register_script("tactfultom-oracle", _oracle)


def _oracle_in_prose(request: ChatRequest) -> str:
    """The oracle, its lists written as a sentence ("Mica, Kuba and Lee."): upstream's parser reads none of them, the
    lenient reading every one."""
    answer = _oracle(request)
    if "commas" not in request.messages[0].content:
        return answer
    *first, last = answer.split(", ")
    return (f"{', '.join(first)} and {last}" if first else last) + "."


register_script("tactfultom-oracle-prose", _oracle_in_prose)
register_script("tactfultom-silent", lambda request: "I cannot tell.")


def test_a_paper_run_asks_every_format_without_and_with_two_pass_cot(tmp_path: Path, mirror: Path) -> None:
    summary, records, out = run_instrument(
        tmp_path, "tactfultom", "scripted/plausible", "--preset", "paper", "--limit", "11"
    )
    assert len(records) == 11
    # the limit spreads over categories (the first of each set and category comes first)
    assert len({r["category"] for r in records}) >= 3
    for record in records:
        formats = 2 if record["category"] in ("comprehensionQA", "fact_reasonQA", "fact_truthQA", "beliefQAs") else 1
        formats = 2 if record["category"] == "lieabilityQAs" else formats  # upstream's `cat == "lieability"` bug
        assert len(record["calls"]) == formats * 3  # one call without CoT, two with
        for call in record["calls"]:
            assert [m["role"] for m in call["messages"]] == ["system", "user"]
            assert call["sampling"]["temperature"] == 0.2 and call["sampling"]["max_tokens"] == 8192
            assert call["sampling"]["top_p"] is None
        cot_calls = [c for c in record["calls"] if "Think step by step" in c["messages"][0]["content"]]
        for first, second in zip(cot_calls[::2], cot_calls[1::2], strict=True):
            user = first["messages"][1]["content"]
            assert user.endswith(COT_CUE) and second["messages"][0] == first["messages"][0]
            assert second["messages"][1]["content"] == user + first["reply"] + COT_FINAL
        assert set(record["conditions"]) == {"direct", "cot"}
        scored = record["conditions"]["direct"][record["scored_format"]]
        assert record["correct"] == scored["correct"]
    assert set(summary["metrics"]) == {
        *("overall_macro", "overall_micro", "overall_macro_chart"),
        *("overall_macro_cot", "overall_micro_cot", "overall_macro_chart_cot"),
    }
    assert summary["score"] == summary["metrics"]["overall_macro"]["value"]
    assert summary["n_freeform_recorded"] == 2 * sum(1 for r in records if "freeform" in r["conditions"]["direct"])
    page = (out / "report.html").read_text("utf-8")
    assert 'id="bench-tactfultom"' in page and "accuracy per question category" in page
    assert "with chain of thought" in page


def _load_oracle() -> None:
    for question in load_questions()[0]:
        _BY_PROMPT.setdefault(user_prompt(question.context, dict(question.fields), None, False), question)


def test_an_oracle_scores_100_in_every_category(tmp_path: Path, mirror: Path) -> None:
    _load_oracle()
    summary, records, _ = run_instrument(
        tmp_path, "tactfultom", "scripted/tactfultom-oracle", "--limit", "55", "--option", "tactfultom.cot=both"
    )
    assert len(records) == 55 and {r["category"] for r in records} == set(CATEGORIES)
    assert summary["score"] == 100.0 and summary["metrics"]["overall_micro_cot"]["value"] == 100.0
    assert all(f["value"] == 100.0 for f in summary["conditions"]["direct"]["categories"].values())
    assert summary["n_parsed"] == 55


def test_a_model_that_never_answers_scores_0_and_is_counted_unread(tmp_path: Path, mirror: Path) -> None:
    summary, records, _ = run_instrument(tmp_path, "tactfultom", "scripted/tactfultom-silent", "--limit", "22")
    assert summary["score"] == 0.0 and not any(r["correct"] for r in records)
    unread = [r for r in records if r["scored_format"] in ("binary", "mcq")]
    assert summary["n_parsed"] == len(records) - len(unread) and all(r["parse_error"] for r in unread)
    assert summary["conditions"]["direct"]["n_unread"] == len(unread)


def test_options_choose_sets_categories_and_formats(tmp_path: Path, mirror: Path) -> None:
    _, records, _ = run_instrument(
        tmp_path,
        "tactfultom",
        "scripted/plausible",
        "--option",
        "tactfultom.sets=1,3",
        "--option",
        "tactfultom.categories=beliefQAs",
        "--option",
        "tactfultom.freeform=true",
        "--option",
        "tactfultom.temperature=0",
    )
    assert len(records) == 4 and {r["set"] for r in records} == {"1", "3"}
    assert all(len(r["calls"]) == 2 and r["calls"][0]["sampling"]["temperature"] == 0.0 for r in records)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("tactfultom.cot=maybe", "tactfultom.cot must be false, true, both, not 'maybe'"),
        ("tactfultom.sets=5", "unknown tactfultom.sets 5; choose all or from 0, 1, 2, 3, 4"),
        ("tactfultom.categories=justificationQA", "unknown tactfultom.categories justificationQA"),
        ("tactfultom.max_tokens=0", "tactfultom.max_tokens must be between 1 and 131072, not '0'"),
        ("tactfultom.colour=red", "unknown tactfultom option 'colour'"),
    ],
)
def test_a_bad_option_is_one_line_before_any_call(option: str, message: str) -> None:
    result = cli_in_process(["run", "-m", "scripted/plausible", "--bench", "tactfultom", "--option", option])
    assert result.returncode != 0
    assert message in result.stderr and len([line for line in result.stderr.splitlines() if line.strip()]) == 1


def test_over_the_wire_against_the_fake_openai_server(tmp_path: Path, mirror: Path) -> None:
    out = tmp_path / "wire"
    with CannedServer("tactfultom") as server:
        env = {"OPENAI_API_KEY": "sk-tactfultom-test"}
        result = cli_in_process(
            [
                "run",
                "-m",
                f"openai/{MODEL}",
                "--base-url",
                server.base_url,
                "--bench",
                "tactfultom",
                "--preset",
                "paper",
                "--limit",
                "4",
                "--out",
                str(out),
                "--no-cache",
            ],
            env={**os.environ, **env},
        )
        asked = [json.loads(line) for line in server.asked]
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))["benchmarks"]["tactfultom"]
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]
    assert len(asked) == sum(len(r["calls"]) for r in records) and len(records) == 4
    assert all(a["temperature"] == 0.2 and a["max_tokens"] == 8192 and "top_p" not in a for a in asked)
    assert summary["validity"]["status"] == "valid" and summary["n_items"] == 4
    sent = {json.dumps(c["messages"], sort_keys=True) for r in records for c in r["calls"]}
    assert sent == {json.dumps(a["messages"], sort_keys=True) for a in asked}


def test_a_comparison_draws_the_runs_categories_side_by_side(tmp_path: Path, mirror: Path) -> None:
    runs = [
        str(run_instrument(tmp_path, "tactfultom", m, "--limit", "22")[2])
        for m in ("scripted/plausible-2", "scripted/plausible-3")
    ]
    done = cli_in_process(["report", *runs, "--out", str(tmp_path / "cmp")])
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "cmp.html").read_text("utf-8")
    assert html.count("TactfulToM: accuracy per question category, the runs side by side") >= 1
    assert "scripted/plausible-3" in html and "Lie detectability (list)" in html


def test_lists_in_prose_are_wrong_for_upstream_and_right_when_read_leniently(tmp_path: Path, mirror: Path) -> None:
    _load_oracle()
    summary, _, out = run_instrument(
        tmp_path,
        "tactfultom",
        "scripted/tactfultom-oracle-prose",
        "--limit",
        "12",
        "--option",
        "tactfultom.categories=infoAccessibilityQA_list,answerabilityQA_list,liedetectabilityQAs_list,beliefQAs",
    )
    figures = summary["conditions"]["direct"]
    assert set(figures["lenient_lists"]) == {
        "infoAccessibilityQA_list",
        "answerabilityQA_list",
        "liedetectabilityQAs_list",
    }
    for category, lenient in figures["lenient_lists"].items():
        assert lenient["value"] == 100.0 and figures["categories"][category]["value"] == 0.0
    assert figures["categories"]["beliefQAs"]["value"] == 100.0
    assert "list answers read as upstream reads them and leniently" in (out / "report.html").read_text("utf-8")
