"""The human crowd analysis reproduces spec §8.3 (paired t-test), and alignment is computed per factor."""

import csv
from pathlib import Path

import pytest

from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.emotionbench.crowd import alignment, human_table, load_crowd
from empathybench.instruments.emotionbench.questionnaires import load_questionnaires
from empathybench.instruments.emotionbench.rescore import rescore_file

PINS = "empathybench.instruments.emotionbench"  # the package whose pins.json holds the files these tests read

DERIVED = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "emotionbench" / "derived"


@pytest.fixture(scope="module")
def human_rows() -> list[dict]:
    return human_table(load_crowd())


def test_crowd_matches_derived_summary(mirror: Path, human_rows: list[dict]) -> None:
    with (DERIVED / "human_panas_summary.csv").open(newline="") as handle:
        expected = list(csv.DictReader(handle))
    got = {(r["level"], r["emotion"] or "", r["factor"] or ""): r for r in human_rows}
    assert len(human_rows) == len(expected) == 45
    for want in expected:
        row = got[(want["level"], want["emotion"], want["factor_key"])]
        assert row["n"] == int(want["n"])
        for affect in ("PA", "NA"):
            assert row[f"default_{affect}_mean"] == pytest.approx(float(want[f"default_{affect}_mean"]), abs=0.01)
            assert row[f"default_{affect}_sd"] == pytest.approx(float(want[f"default_{affect}_sd"]), abs=0.01)
            assert row[f"{affect}_mean"] == pytest.approx(float(want[f"evoked_{affect}_mean"]), abs=0.01)
            assert row[f"{affect}_sd"] == pytest.approx(float(want[f"evoked_{affect}_sd"]), abs=0.01)
            assert row[f"{affect}_delta"] == pytest.approx(float(want[f"{affect}_delta"]), abs=0.01)
            marker = want[f"{affect}_paired_marker_a0.01"]
            assert row[f"{affect}_marker"] == ("none" if marker == "-" else marker)


def test_crowd_overall_row_of_spec_8_3(mirror: Path, human_rows: list[dict]) -> None:
    overall = human_rows[-1]
    assert overall["n"] == 1266
    assert (round(overall["default_PA_mean"], 2), round(overall["default_PA_sd"], 2)) == (28.02, 8.88)
    assert (round(overall["default_NA_mean"], 2), round(overall["default_NA_sd"], 2)) == (13.62, 5.50)
    assert (round(overall["PA_delta"], 2), overall["PA_marker"]) == (-5.13, "down")
    assert (round(overall["NA_delta"], 2), overall["NA_marker"]) == (10.44, "up")


def test_alignment_with_people(mirror: Path, human_rows: list[dict]) -> None:
    model_rows = rescore_file(
        fetch_pinned(PINS, "emotionbench/results/panas/gpt-4-PANAS-testing.csv").path,
        load_questionnaires(),
        challenging=False,
    )["rows"]
    result = alignment(model_rows, human_rows, resamples=300)
    assert result["n_factors"] == 36
    assert result["NA"]["sign_agreement"] == 1.0  # GPT-4's NA rises for every factor, as people's does
    low, high = result["PA"]["pearson_r_ci95"]
    assert low <= result["PA"]["pearson_r"] <= high
