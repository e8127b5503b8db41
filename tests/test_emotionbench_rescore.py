"""Rescoring the upstream EmotionBench answer sheets reproduces the paper and our recomputation (spec §7, §9)."""

import csv
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process
from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.emotionbench.data import load_tested_situations
from empathybench.instruments.emotionbench.questionnaires import load_questionnaires
from empathybench.instruments.emotionbench.rescore import rescore_file

PINS = "empathybench.instruments.emotionbench"  # the package whose pins.json holds the files these tests read

DERIVED = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "emotionbench" / "derived"
MODELS = ("gpt-3.5-turbo", "gpt-4", "llama2-7b", "llama3.1-8b")
EMOTION_ORDER = ("Anger", "Anxiety", "Depression", "Frustration", "Jealousy", "Guilt", "Fear", "Embarrassment")
# Paper Tables 2 and 3 (spec §9.1): per-emotion and overall (PA delta, NA delta) with markers, then the default.
PAPER_EMOTION_TABLE: dict[str, list[tuple[str, float, str, float]]] = {
    "gpt-3.5-turbo": [
        ("down", -15.2, "down", -2.5),
        ("down", -11.3, "none", -0.9),
        ("down", -20.1, "up", 3.1),
        ("down", -16.4, "down", -3.2),
        ("down", -15.3, "down", -3.2),
        ("down", -15.8, "up", 2.9),
        ("down", -14.3, "up", 2.6),
        ("down", -13.0, "none", 0.6),
        ("down", -15.4, "none", 0.2),
    ],
    "gpt-4": [
        ("down", -28.3, "up", 21.2),
        ("down", -21.9, "up", 20.0),
        ("down", -32.4, "up", 23.2),
        ("down", -29.4, "up", 20.3),
        ("down", -26.0, "up", 16.0),
        ("down", -29.0, "up", 27.0),
        ("down", -25.7, "up", 24.2),
        ("down", -25.2, "up", 23.2),
        ("down", -27.6, "up", 22.2),
    ],
    "llama2-7b": [
        ("down", -5.1, "up", 3.6),
        ("down", -3.8, "up", 2.7),
        ("down", -5.0, "up", 4.4),
        ("down", -4.2, "up", 3.1),
        ("down", -3.1, "none", -0.4),
        ("down", -3.9, "up", 4.4),
        ("down", -3.4, "up", 3.7),
        ("down", -3.9, "up", 3.1),
        ("down", -4.1, "up", 3.3),
    ],
    "llama3.1-8b": [
        ("down", -23.6, "up", 2.3),
        ("down", -21.4, "none", 0.3),
        ("down", -29.8, "up", 6.7),
        ("down", -25.6, "up", 3.1),
        ("down", -20.3, "none", 0.4),
        ("down", -26.4, "up", 7.0),
        ("down", -24.6, "up", 3.0),
        ("down", -22.7, "up", 4.0),
        ("down", -24.7, "up", 3.5),
    ],
}
PAPER_DEFAULTS = {
    "gpt-3.5-turbo": (39.2, 2.3, 26.3, 2.0),
    "gpt-4": (49.8, 0.8, 10.0, 0.0),
    "llama2-7b": (43.0, 4.2, 34.2, 4.0),
    "llama3.1-8b": (48.2, 1.4, 33.0, 4.5),
}


@cache
def _rescored(model: str) -> dict[str, Any]:
    path = fetch_pinned(PINS, f"emotionbench/results/panas/{model}-PANAS-testing.csv").path
    return rescore_file(path, load_questionnaires(), challenging=False)


def _marker(value: str) -> str:
    return "none" if value == "-" else value


@pytest.mark.parametrize("model", MODELS)
def test_rescore_matches_derived_recomputation(mirror: Path, model: str) -> None:
    rows = _rescored(model)["rows"]
    with (DERIVED / "llm_panas_recomputed.csv").open(newline="") as handle:
        expected = [r for r in csv.DictReader(handle) if r["model"] == model]
    assert len(rows) == len(expected) == 46
    for got, want in zip(rows, expected, strict=True):
        assert (got["level"], got["emotion"] or "", got["factor"] or "") == (
            want["level"],
            want["emotion"],
            want["factor_key"],
        )
        assert got["n"] == int(want["n"])
        for affect in ("PA", "NA"):
            for stat in ("mean", "sd"):
                assert got[f"{affect}_{stat}"] == pytest.approx(float(want[f"{affect}_{stat}"]), abs=0.01)
            if got["level"] != "default":
                assert got[f"{affect}_delta"] == pytest.approx(float(want[f"{affect}_delta"]), abs=0.01)
                assert got[f"{affect}_marker"] == _marker(want[f"{affect}_marker_a0.01"])
                assert got[f"{affect}_test"] == want[f"{affect}_ttest"]


@pytest.mark.parametrize("model", MODELS)
def test_rescore_reproduces_paper_emotion_table(mirror: Path, model: str) -> None:
    rows = _rescored(model)["rows"]
    default = rows[0]
    pa_mean, pa_sd, na_mean, na_sd = PAPER_DEFAULTS[model]
    assert (round(default["PA_mean"], 1), round(default["PA_sd"], 1)) == (pa_mean, pa_sd)
    assert (round(default["NA_mean"], 1), round(default["NA_sd"], 1)) == (na_mean, na_sd)
    summary_rows = [r for r in rows if r["level"] in ("emotion", "overall")]
    assert [r["emotion"] for r in summary_rows] == [*EMOTION_ORDER, None]
    for row, (pa_marker, pa_delta, na_marker, na_delta) in zip(summary_rows, PAPER_EMOTION_TABLE[model], strict=True):
        assert (row["PA_marker"], row["NA_marker"]) == (pa_marker, na_marker), row
        assert row["PA_delta"] == pytest.approx(pa_delta, abs=0.051)
        assert row["NA_delta"] == pytest.approx(na_delta, abs=0.051)


def test_dropped_runs_are_counted_as_the_paper_did(mirror: Path) -> None:
    assert _rescored("llama3.1-8b")["skipped_runs"] == 60
    overall = _rescored("llama3.1-8b")["rows"][-1]
    assert overall["n"] == 1690


def test_tested_situations_come_from_the_answer_sheet(mirror: Path) -> None:
    situations = load_tested_situations()
    with (DERIVED / "tested_situations.csv").open(newline="") as handle:
        expected = list(csv.DictReader(handle))
    assert len(situations) == 175
    assert [(s.key, s.text, s.factor_name) for s in situations] == [
        (r["situation_key"], r["text"], r["factor_name"]) for r in expected
    ]


def test_cli_rescore_prints_json_rows(mirror: Path) -> None:
    path = fetch_pinned(PINS, "emotionbench/results/panas/gpt-4-PANAS-testing.csv").path
    completed = cli_in_process(["rescore", "emotionbench", str(path), "--json"])
    assert completed.returncode == 0, completed.stderr
    rows = json.loads(completed.stdout)["rows"]
    assert [r["level"] for r in rows].count("factor") == 36
    overall = rows[-1]
    assert overall["level"] == "overall" and overall["n"] == 1750
    assert overall["PA_marker"] == "down" and round(overall["PA_delta"], 1) == -27.6
    keys = {"level", "emotion", "factor", "n", "PA_mean", "PA_sd", "NA_mean", "NA_sd", "PA_delta", "NA_delta"}
    assert keys | {"PA_marker", "NA_marker"} <= set(rows[1])


def test_cli_rescore_rejects_a_non_sheet(tmp_path: Path) -> None:
    bogus = tmp_path / "x.csv"
    bogus.write_text("a,b\n1,2\n")
    completed = cli_in_process(["rescore", "emotionbench", str(bogus), "--json"])
    assert completed.returncode != 0
    assert "not an upstream EmotionBench answer sheet" in completed.stderr + completed.stdout
