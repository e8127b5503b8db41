"""Re-scoring the author's raw v2 result files (specs/eqbench.md §5.1; SOURCE.md results_v2_raw/).

The upstream files are read through the fetch code. The only oracle is each file's own `benchmark_score`,
plus (when present beside the repository) our derived summary CSV.
"""

import csv
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from empathybench.data.fetch import fetch_pinned
from empathybench.data.registry import load_pins
from empathybench.instruments.eqbench.rescore import (
    load_json,
    parse_stored_answers,
    rescore_upstream_results,
)

PINS = "empathybench.instruments.eqbench"  # the package whose pins.json holds the files these tests read

RESULT_KEYS = sorted(key for key in load_pins(PINS) if key.startswith("eqbench/results_v2_raw/"))
QUESTIONS_KEY = "eqbench/v2/eq_bench_v2_questions_171.json"
DERIVED_CSV = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "datasets"
    / "eqbench"
    / "derived"
    / "results_v2_recomputed_summary.csv"
)


@cache
def _questions() -> dict[str, Any]:
    return load_json(fetch_pinned(PINS, QUESTIONS_KEY).path)


@cache
def _rescored(key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    data = load_json(fetch_pinned(PINS, key).path)
    return data, rescore_upstream_results(data, _questions())


def test_there_are_twenty_upstream_files() -> None:
    assert len(RESULT_KEYS) == 20


@pytest.mark.parametrize("key", RESULT_KEYS)
def test_rescore_reproduces_the_published_score(mirror: Path, key: str) -> None:
    data, result = _rescored(key)
    assert result["published_score"] == data["benchmark_score"]
    assert result["matches_published"] is True
    assert result["score"] == data["benchmark_score"]
    assert result["n_questions"] == 171
    assert result["valid"] is True and data["benchmark_success"] is True
    # The released rule (d = 5 on the sigmoid) can only give a smaller total difference, so a higher score.
    assert result["released_code_score_unrounded"] >= result["score_unrounded"]
    assert result["released_code_score"] - result["score"] <= 0.02 + 1e-9
    # lm-eval style counts missing and unparseable items as 0 over all 171.
    assert result["percent_parseable"] == pytest.approx(100 * result["n_first_pass_parseable"][0] / 171)
    # The published parse count is the number of answered questions.
    assert result["n_answered"] == data["n_questions_parseable"]
    json.dumps(result)  # JSON-able


@pytest.mark.parametrize("key", RESULT_KEYS)
def test_strict_reparse_of_raw_completions_agrees_with_stored_answers(mirror: Path, key: str) -> None:
    _, result = _rescored(key)
    assert result["strict_reparse_n_first_pass_differ"] == 0
    assert result["strict_reparse_score"] == result["score"]


def test_rescore_matches_the_derived_summary(mirror: Path) -> None:
    if not DERIVED_CSV.is_file():
        pytest.skip(f"derived summary not found at {DERIVED_CSV}")
    with DERIVED_CSV.open(encoding="utf-8", newline="") as handle:
        rows = {row["results_file"]: row for row in csv.DictReader(handle)}
    for key in RESULT_KEYS:
        _, result = _rescored(key)
        row = rows[key.rsplit("/", 1)[-1]]
        assert result["released_code_score_unrounded"] == pytest.approx(float(row["recomputed_final_le5"]), abs=1e-4)
        assert result["score_unrounded"] == pytest.approx(float(row["recomputed_final_strict_lt5"]), abs=1e-4)
        assert result["lm_eval_style_score"] == pytest.approx(
            float(row["first_pass_unparseable_as_zero_over_171_le5"]), abs=1e-3
        )
        assert result["revise_prompt_used"] == (row["raw_output_contains_revision"] == "True")
        le5_matches = round(result["released_code_score_unrounded"], 2) == result["published_score"]
        assert le5_matches == (row["le5_rounded_matches_published"] == "True")


def test_parse_stored_answers_reads_repr_strings_without_eval() -> None:
    stored = "{'first_pass': {'Calm': '3', 'Glad': 7}, 'revised': {}}"
    assert parse_stored_answers(stored) == {"first_pass": {"Calm": "3", "Glad": 7}, "revised": {}}
    assert parse_stored_answers({"first_pass": {}}) == {"first_pass": {}}
    assert parse_stored_answers(None) is None
    assert parse_stored_answers("not a literal") is None
    assert parse_stored_answers("__import__('os').getcwd()") is None
    assert parse_stored_answers("[1, 2]") is None


LABELS = ["Calm", "Tense", "Bored", "Glad"]


def _question(scores: list[int]) -> dict[str, Any]:
    reference: dict[str, Any] = {}
    for index, (label, score) in enumerate(zip(LABELS, scores, strict=True), start=1):
        reference[f"emotion{index}"] = label
        reference[f"emotion{index}_score"] = str(score)
    return {"prompt": "(synthetic)", "reference_answer": reference, "reference_answer_fullscale": reference}


SYNTHETIC_QUESTIONS = {"1": _question([0, 6, 0, 7]), "2": _question([5, 5, 0, 0]), "3": _question([1, 2, 3, 4])}
PERFECT = {"1": [0, 6, 0, 7], "2": [5, 5, 0, 0], "3": [1, 2, 3, 4]}


def _stored(values: list[int] | None, revised: list[int] | None = None, *, as_repr: bool = False) -> Any:
    entry = {
        "first_pass": dict(zip(LABELS, map(str, values), strict=True)) if values else {},
        "revised": dict(zip(LABELS, map(str, revised), strict=True)) if revised else {},
    }
    return repr(entry) if as_repr else entry


def test_synthetic_run_shapes() -> None:
    """A raw_results.json-style run ({run_key: run} with 'iterations'), repr strings, None entries, a missing
    question, an unknown id, two iterations and no published score."""
    iteration_one = {
        "respondent_answers": {
            "1": _stored(PERFECT["1"], as_repr=True),
            "2": None,
            "99": _stored(PERFECT["1"]),
        },
        "raw_inference": {"1": "Calm: 0\nTense: 6\nBored: 0\nGlad: 7", "2": None},
    }
    iteration_two = {"respondent_answers": {"1": _stored(PERFECT["1"]), "3": _stored(PERFECT["3"])}}
    data = {"my-run--v2--en": {"run_metadata": {}, "iterations": {"2": iteration_two, "1": iteration_one}}}
    result = rescore_upstream_results(data, SYNTHETIC_QUESTIONS)
    # Iteration 1: one parseable item scoring 10 -> 100; iteration 2: two items scoring 10 -> 100.
    assert result["score"] == 100.0
    assert result["n_parseable"] == 1.5
    assert result["valid"] is False  # 1.5 / 3 < 0.8333
    assert result["n_iterations"] == 2
    assert result["unknown_question_ids"] == ["99"]
    assert result["published_score"] is None and result["matches_published"] is None
    assert result["revise_prompt_used"] is False
    assert result["revised_scores"] == [None, None]
    # lm-eval style: (10*10 + 0 + 0) / 3 and (10*10 + 0 + 10*10) / 3, averaged over the two iterations.
    assert result["lm_eval_style_score"] == pytest.approx((100 / 3 + 200 / 3) / 2)
    json.dumps(result)


def test_synthetic_revise_run_selects_the_better_pass() -> None:
    worse_first = [3, 6, 0, 7]  # d = 3 on one emotion
    data = {
        "benchmark_score": 100.0,
        "raw_results": {
            "1": {
                "respondent_answers": {
                    "1": _stored(worse_first, PERFECT["1"]),
                    "2": _stored(PERFECT["2"], PERFECT["2"]),
                    "3": _stored(PERFECT["3"], PERFECT["3"]),
                }
            }
        },
    }
    result = rescore_upstream_results(data, SYNTHETIC_QUESTIONS)
    assert result["revise_prompt_used"] is True
    assert result["selected_pass"] == "revised"
    assert result["score"] == 100.0 and result["matches_published"] is True
    assert result["first_pass_scores"][0] < 100.0


def test_d_equal_5_separates_the_two_rules() -> None:
    data = {"raw_results": {"1": {"respondent_answers": {"2": _stored([0, 5, 0, 0])}}}}
    result = rescore_upstream_results(data, {"2": SYNTHETIC_QUESTIONS["2"]})
    assert result["score"] == round(10 * (10 - 0.7477 * 5.0), 2)
    assert result["released_code_score"] == round(10 * (10 - 0.7477 * 4.995411092743614), 2)


def test_non_results_and_v1_files_are_rejected() -> None:
    with pytest.raises(ValueError, match="not an EQ-Bench result"):
        rescore_upstream_results({"something": 1}, SYNTHETIC_QUESTIONS)
    with pytest.raises(ValueError, match="only EQ-Bench v2"):
        rescore_upstream_results({"eqbench_version": "v1", "raw_results": {}}, SYNTHETIC_QUESTIONS)
    with pytest.raises(ValueError, match="no iterations"):
        rescore_upstream_results({"raw_results": {}}, SYNTHETIC_QUESTIONS)
