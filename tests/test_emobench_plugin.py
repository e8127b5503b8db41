"""EmoBench as a registered instrument: listed, run end to end on scripted models (quick and paper presets, offline
from the mirror), drawn in report.html/report.md, in the EI profile and in `empathybench report A B`, with canned
answers each protocol's own parser reads. The items come from the mirror through the fetch code."""

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from conftest import words_joined
from empathybench.cli import app
from empathybench.instruments import registry
from empathybench.instruments.emobench.canned import plausible_answer
from empathybench.instruments.emobench.parse import json_exact, legacy_letter
from empathybench.instruments.emobench.prompts import letter_list_lower, letter_list_upper
from empathybench.models.base import ChatRequest, Draw, Message, Sampling
from empathybench.report.profile import build_profile

OPTIONS = ("Joy", "Anger & Fear", "Sadness", "Surprise")


def _run(out: Path, model: str, preset: str, *extra: str) -> dict[str, Any]:
    outcome = CliRunner().invoke(
        app,
        [
            "run",
            "--model",
            model,
            "--bench",
            "emobench",
            "--preset",
            preset,
            "--out",
            str(out),
            "--no-cache",
            "-q",
            *extra,
        ],
    )
    assert outcome.exit_code == 0, outcome.output
    return json.loads((out / "summary.json").read_text("utf-8"))


def _request(system: str, user: str) -> ChatRequest:
    return ChatRequest.of(
        [Message("system", system), Message("user", user)], Sampling(temperature=0.0, max_tokens=50), "emobench"
    )


def test_it_is_registered_listed_and_left_out_of_a_run_without_bench() -> None:
    assert "emobench" in registry.names()
    assert "emobench" not in [instrument.name for instrument in registry.resolve_benchmarks(None)]
    listed = CliRunner().invoke(app, ["list"])
    assert listed.exit_code == 0 and "emobench" in listed.output
    rescore_help = CliRunner().invoke(app, ["rescore", "--help"])
    assert "emobench" in rescore_help.output  # discovered from its RescoreCommand


def test_paper2024_canned_answers_are_letters_the_upstream_finder_reads() -> None:
    user = "Which emotion?\n" + letter_list_lower(OPTIONS)
    picks = set()
    for variant in range(12):
        reply = plausible_answer(_request("You are an expert.", user), Draw(variant))
        assert reply is not None
        parsed = legacy_letter(reply, OPTIONS, letters=6, language="en")
        assert parsed.index is not None and parsed.index < len(OPTIONS), reply
        picks.add(parsed.index)
    assert len(picks) > 1  # seeded variants answer differently


def test_repo2025_canned_answers_are_the_json_the_exact_reader_reads() -> None:
    system = 'Answer in JSON:\n```json\n    {\n    "answer_q1": "", "answer_q2": ""\n    }\n``` \n    '
    user = "Emotion?\n" + letter_list_upper(OPTIONS) + "\nCause?\n" + letter_list_upper(OPTIONS[:3])
    reply = plausible_answer(_request(system, user), Draw(3))
    assert reply is not None
    assert json_exact(reply, "answer_q1", options=4).index is not None
    assert json_exact(reply, "answer_q2", options=3).index is not None
    single = plausible_answer(_request(system, "Best action?\n" + letter_list_upper(OPTIONS)), Draw(3))
    assert single is not None and json_exact(single, "answer", options=4).index is not None
    assert plausible_answer(_request("hi", "no options here"), Draw(0)) is None


def test_quick_run_end_to_end_with_section_profile_and_markdown(tmp_path: Path, mirror: Path) -> None:
    summary = _run(tmp_path / "run", "scripted/plausible", "quick")
    result = summary["benchmarks"]["emobench"]
    assert result["headline_metric"] == "eu_joint_accuracy_en"
    headline = result["metrics"]["eu_joint_accuracy_en"]
    assert headline["n"] == 20 and 0 <= headline["value"] <= 100
    assert len(headline["items"]) == 20  # per-item values: what `report A B` pairs
    assert {"eu_joint_accuracy_zh", "ea_accuracy_en", "ea_accuracy_zh"} <= set(result["metrics"])
    assert result["invalid_rate"] == 0.0  # every canned answer parsed
    assert result["score"] == headline["value"]
    row = next(r for r in summary["profile"] if r["benchmark"] == "emobench")
    assert row["metric"] == "eu_joint_accuracy_en" and row["value"] == headline["value"]
    html = words_joined((tmp_path / "run" / "report.html").read_text("utf-8"))
    assert "EU-en accuracy per category" in html and "always-A %" in html and "invalid answers %" in html
    assert "## EmoBench\n" in (tmp_path / "run" / "report.md").read_text("utf-8")  # its section, under its title


def test_paper_preset_asks_four_orders_and_shows_their_spread(tmp_path: Path, mirror: Path) -> None:
    summary = _run(tmp_path / "run", "scripted/plausible", "paper", "--limit", "2")
    condition = summary["benchmarks"]["emobench"]["conditions"]["paper2024"]
    assert set(condition) == {"EU-en", "EU-zh", "EA-en", "EA-zh"}
    for figures in condition.values():
        assert len(figures["per_order_accuracy"]) == 4 and figures["samples"] == 5
        assert figures["order_spread"] is not None
    assert "accuracy % per order" in (tmp_path / "run" / "report.html").read_text("utf-8")


def test_two_scripted_runs_compare_on_shared_items(tmp_path: Path, mirror: Path) -> None:
    _run(tmp_path / "a", "scripted/plausible", "quick")
    _run(tmp_path / "b", "scripted/plausible-2", "quick")
    outcome = CliRunner().invoke(
        app, ["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "c")]
    )
    assert outcome.exit_code == 0, outcome.output
    comparison = json.loads((tmp_path / "c.json").read_text("utf-8"))
    text = json.dumps(comparison)
    assert "emobench" in text and "eu_joint_accuracy_en" in text
    assert '"n_shared": 20' in text


def test_profile_row_has_its_own_title_and_question_after_the_first_five() -> None:
    names = ["emobench", "empathetic", "eqbench3", "giebench", "emotionbench", "seceu", "eqbench"]
    rows = build_profile({name: {"status": "ok"} for name in names})
    assert [row["benchmark"] for row in rows][5:] == ["emobench", "eqbench3"]
    emobench = rows[5]
    assert emobench["title"] == "EmoBench"  # not the bare name
    assert "causes" in emobench["question"] and "responses" in emobench["question"]
    assert rows[6]["title"] == "EQ-Bench 3" and rows[6]["question"].endswith("as judged?")
