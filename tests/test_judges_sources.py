"""The judge evidence sources besides MentalAlign-70k: the atlas's boards that changed their judge (EQ-Bench 3's two
eqbench.com boards, Claude Sonnet 3.7 and Claude Opus 4.6 as judge; the figures of the spec, atlas-current.md) for
both judge models, in a run's report lookup and on the site's list; and a user's `judge compare` result read,
bounded and refused in one line when it is not one (the real command's file: tests/test_spiral_judge_compare.py)."""

import json
import os
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from conftest import cli_in_process
from empathybench.errors import UserError
from empathybench.judges.evidence import evidence_table

SONNET, OPUS = "claude-3-7-sonnet-20250219", "claude-opus-4-6"


def test_the_boards_judge_change_holds_each_judge_to_the_other_over_46_models() -> None:
    from empathybench.judges.boards import BoardJudgeChangeSource
    from empathybench.judges.known import evidence_for

    rows = BoardJudgeChangeSource().evidence()
    assert {row.judge for row in rows} == {SONNET, OPUS}
    for judge, other, sign in ((OPUS, SONNET, 1), (SONNET, OPUS, -1)):
        mine = [row for row in rows if row.judge == judge]
        assert all(row.n == 46 and row.unit == "model" and row.note.startswith(f"against {other};") for row in mine)
        rho = {row.aspect: row for row in mine if row.statistic == "Spearman's rho"}
        elo = next(row for aspect, row in rho.items() if "Elo" in aspect)
        rubric = next(row for aspect, row in rho.items() if "rubric" in aspect)
        # atlas-current.md: Spearman 0.94 on the rubric; the Elo order holds at 0.98
        assert rubric.value == pytest.approx(0.94, abs=0.01) and elo.value == pytest.approx(0.98, abs=0.01)
        assert elo.headline and not rubric.headline and elo.ci95 is not None and elo.ci95[0] < 0.98 < elo.ci95[1]
        (shift,) = [row for row in mine if row.statistic.startswith("mean change")]
        # -22.05 rubric points on average when Opus 4.6 replaced Sonnet 3.7 (spec); Sonnet's side is its mirror
        assert shift.value == pytest.approx(sign * -22.05, abs=0.005)
        assert shift.ci95 is not None and shift.ci95[0] < shift.value < shift.ci95[1] and 0 not in shift.ci95
    # A run judged by either gets these rows in its report (matched through the identity table); another gets none.
    assert {row.judge for row in evidence_for("anthropic/claude-opus-4-6")} == {OPUS}
    assert all(row.source != BoardJudgeChangeSource.name for row in evidence_for("openai/gpt-5"))


def _comparison(**changes: object) -> dict[str, object]:
    """A `judge compare` result of the documented envelope (docs/instruments/spiral.md), its evidence by hand."""
    figure = {"against": "published judge p", "aspect": "a criterion", "statistic": "Spearman's rho", "value": 0.5}
    result = {
        "format": 1,
        "kind": "judge_comparison",
        "instrument": "someinstrument",
        "judge": {"spec": "openai/j", "provider": "openai", "model": "j"},
        "scope": "2 conversations",
        "verdict": "inconclusive",
        "margin": {"value": 3.0, "source": "s"},
        "evidence": [
            figure | {"ci95": [0.2, 0.7], "n": 30, "unit": "chunk"},
            figure
            | {"statistic": "mean difference", "value": 1.5, "ci95": [-2, 5], "n": 2, "unit": "conversation"}
            | {"headline": True},
        ],
    }
    return result | changes


def test_a_hostile_comparison_is_text_and_a_malformed_one_one_line(tmp_path: Path) -> None:
    from empathybench.judges.user_files import user_sources
    from empathybench.judges.views import render_evidence, write_html

    hostile = _comparison(judge={"model": "<script>alert(1)</script>\x1b[2J"}, instrument="=HYPERLINK(1)")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "judge-comparison.json").write_text(json.dumps(hostile), "utf-8")
    (source,) = user_sources([tmp_path / "mine"])
    document = evidence_table([source])
    (headline,) = document["headline"]
    assert (headline["value"], headline["ci95"], headline["n"], headline["unit"]) == (1.5, [-2, 5], 2, "conversation")
    assert "verdict inconclusive (margin ±3.00)" in headline["note"] and "\x1b" not in headline["judge"]
    out = StringIO()
    render_evidence(document, Console(file=out, width=250))
    assert "\x1b[2J" not in out.getvalue() and "0.50 [0.20, 0.70]" in out.getvalue()
    page, table = write_html(document, tmp_path / "site")
    assert "<script>alert" not in page.read_text("utf-8") and "&lt;script&gt;" in page.read_text("utf-8")
    assert ",=HYPERLINK" not in table.read_text("utf-8")
    for bad, said in (
        ("{", "is not a JSON"),
        (json.dumps(_comparison(format=2)), "judge comparison format 2"),
        (json.dumps(_comparison(verdict="fine")), "the verdict is not one of"),
        (json.dumps(_comparison(judge="j")), "names its instrument and its judge"),
        (json.dumps({"kind": "other"}), "neither a `judge validate --out` report"),
    ):
        (tmp_path / "bad.json").write_text(bad, "utf-8")
        with pytest.raises(UserError) as caught:
            user_sources([tmp_path / "bad.json"])
        assert said in str(caught.value) and "\n" not in str(caught.value)
    # The command refuses it in one line before anything is computed; an entry out of shape is left empty.
    done = cli_in_process(["judges", str(tmp_path / "bad.json")], {**os.environ, "COLUMNS": "300"})
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    (tmp_path / "odd.json").write_text(json.dumps(_comparison(evidence=[{"value": "x", "unit": "?", "n": -1}])))
    (row,) = user_sources([tmp_path / "odd.json"])[0].evidence()
    assert (row.value, row.unit, row.n) == (None, "item", 0)
    (tmp_path / "old.json").write_text(json.dumps(_comparison(evidence=None)))
    (old,) = user_sources([tmp_path / "old.json"])
    assert not old.evidence() and "run the same `judge compare` again" in old.detail()["notes"][0]
