"""Rescoring upstream EQ-Bench 3 files (spec §6).

(a) The April-2025 Elo file, read from the mirror through the fetch code: margins exact (6,362 of 6,362), the
normalisation exact to the stored rounding, the re-solve within the spec's tolerance, and the spec's own
3c21bcc-rules recomputation (§6.1 item 5) to the printed digits.
(b) No upstream run file is mirrored (spec §11), so a small synthetic `eqbench3_runs.json` is built here and its
numbers checked against the formulas computed independently in the test.
"""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process
from empathybench.instruments.eqbench3 import data, rescore
from empathybench.instruments.eqbench3 import pairwise as pw


@pytest.fixture(scope="module")
def elo_file() -> dict[str, Any]:
    mirror_root = Path(os.environ.get("EMPATHYBENCH_MIRROR", ""))
    if not (mirror_root / "EQ-bench" / "eqbench3").is_dir():
        pytest.skip("the offline mirror has no EQ-Bench 3 files")
    return rescore.read_json_file(data.fetch_path(data.ELO_RESULTS_FILE))


def test_file_shape(elo_file: dict[str, Any]) -> None:
    records = elo_file[rescore.METADATA_KEY]["global_pairwise_comparisons"]
    assert len(records) == 6452
    valid = rescore.valid_comparisons(elo_file)
    assert len(valid) == 6362
    assert len(rescore.stored_ratings(elo_file)) == 27
    groups = pw.group_judgements(rescore.judgement_of_record(r, "8c3a125") for r in valid)
    assert len(groups) == 3225
    assert len({r["scenario_id"] for r in valid}) == 45 and "409" not in {r["scenario_id"] for r in valid}


def test_every_margin_is_rederived_exactly(elo_file: dict[str, Any]) -> None:
    check = rescore.check_margins(rescore.valid_comparisons(elo_file), "8c3a125")
    assert check == {"checked": 6362, "matching": 6362, "mismatches": []}
    # the pinned commit's rules give different margins on the same verdicts (analysis clamp, no blend)
    assert rescore.check_margins(rescore.valid_comparisons(elo_file), "3c21bcc")["matching"] < 6362


def test_normalisation_from_raw_elo_and_anchors(elo_file: dict[str, Any]) -> None:
    check = rescore.check_normalisation(rescore.stored_ratings(elo_file))
    assert check["anchored"] and check["models"] == 27
    assert check["scale"] == pytest.approx(1300 / (1527.20 - 974.87), abs=1e-12)
    assert check["scale"] == pytest.approx(2.353665, abs=1e-6) and check["shift"] == pytest.approx(-2094.518, abs=1e-3)
    assert check["max_abs_error_elo_norm"] <= 0.0146  # the stored values are rounded to 2 dp (spec: 0.0145)
    assert check["max_abs_error_ci"] <= 0.016


def test_position_bias_as_measured_in_the_spec(elo_file: dict[str, Any]) -> None:
    bias = rescore.position_bias(rescore.valid_comparisons(elo_file))
    assert (bias["all"]["first_wins"], bias["all"]["second_wins"], bias["all"]["ties"]) == (3487, 2811, 64)
    assert round(100 * bias["roleplay"]["first_share"], 2) == 70.62
    assert round(100 * bias["analysis"]["first_share"], 2) == 35.75


@pytest.mark.slow
def test_resolving_the_8c3a125_recipe_stays_within_the_spec_tolerance(elo_file: dict[str, Any]) -> None:
    ratings = rescore.stored_ratings(elo_file)
    solved = rescore.resolve_ratings(
        rescore.valid_comparisons(elo_file), list(ratings), rules="8c3a125", window=8, bin_size=1
    )
    compared = rescore.compare_ratings(solved, ratings)
    assert compared["max_abs_diff_elo_norm"] <= 5
    assert compared["spearman_rho"] >= 0.99
    assert compared["max_abs_diff_sigma"] <= 0.05


@pytest.mark.slow
def test_3c21bcc_rules_on_the_same_judgements_match_the_spec_reference(elo_file: dict[str, Any]) -> None:
    """Spec §6.1 item 5: identity blend + analysis clamp, +-16 window on the stored ratings, B=20 mu, B=5 sigma."""
    ratings = rescore.stored_ratings(elo_file)
    records = rescore.valid_comparisons(elo_file)
    ladder = {model: entry["elo"] for model, entry in ratings.items()}
    groups = pw.group_judgements(rescore.judgement_of_record(r, "3c21bcc") for r in records)
    kept = pw.within_window(groups, ladder, 16)
    assert len(kept) == 3123
    assert sum(1 for g in kept if int(g.scenario_id) >= 400 and g.plus_1 == g.plus_2) == 453
    solved = rescore.resolve_ratings(records, list(ratings), rules="3c21bcc", window=16, ladder=ladder, ci_bin_size=5)
    norm = pw.normalisation({model: mu for model, (mu, _) in solved.items()})
    assert round(solved["o3"][0], 2) == 1581.90
    assert round(solved["meta-llama/llama-3.2-1b-instruct"][0], 2) == 940.02
    assert round(solved["meta-llama/llama-3.2-1b-instruct"][1], 2) == 10.24
    assert round(solved["anthropic/claude-3.7-sonnet"][1], 2) == 3.90
    expected_norm = {
        "openai/chatgpt-4o-latest": 1436.02,
        "anthropic/claude-3.7-sonnet": 1138.34,
        "google/gemma-3-4b-it": 884.65,
        "google/gemma-2-9b-it": 399.23,
    }
    for model, value in expected_norm.items():
        assert round(norm.apply(solved[model][0]), 2) == value, model
    assert round(norm.scale, 6) == 2.025303


def _task(status: str, scores: dict[str, Any] | None, sid: str) -> dict[str, Any]:
    return {"scenario_id": sid, "status": status, "rubric_scores": scores, "conversation_history": []}


def _runs_file() -> dict[str, Any]:
    roleplay = {
        "chain_of_thought_reasoning": "…",
        "demonstrated_empathy": 12,
        "pragmatic_ei": 11,
        "depth_of_insight": 10,
        "social_dexterity": 9,
        "emotional_reasoning": 8,
        "message_tailoring": 7,
        "warmth": 15,
        "validating": 13,
        "conversational": 6,
        "humanlike": 4,
        "moralising": 3,
    }
    analysis = {"depth_of_insight": 14, "emotional_reasoning": 13, "theory_of_mind": 12, "subtext_identification": 11,
                "intellectual_grounding": 10, "correctness": 9}  # fmt: skip
    return {
        "abc123_some_model": {
            "model_name": "some/model",
            "judge_model": "anthropic/claude-3.7-sonnet",
            "results": {"average_rubric_score": 10.19},
            "scenario_tasks": {
                "1": {
                    "1": _task("rubric_scored", roleplay, "1"),
                    "208": _task("rubric_scored", {**roleplay, "demonstrated_empathy": 18}, "208"),
                    "401": _task("rubric_scored", analysis, "401"),
                    "11": _task("error", None, "11"),
                }
            },
        }
    }


def test_runs_file_rubric_numbers() -> None:
    result = rescore.rescore_runs_file(_runs_file())
    run = result["runs"]["abc123_some_model"]
    roleplay_task = (12 + 11 + 10 + 9 + 8 + 7) / 6
    drafting_task = (18 + 11 + 10 + 9 + 8 + 7) / 6
    analysis_task = (14 + 13 + 12 + 11 + 10 + 9) / 6
    mean = (roleplay_task + drafting_task + analysis_task) / 3
    assert run["counts"]["rubric_scored"] == 3 and run["counts"]["error"] == 1
    assert run["score_0_100"] == pytest.approx(5 * mean, abs=1e-12)
    assert run["score_0_100_cli"] == pytest.approx(5 * round(mean, 2), abs=1e-12)
    assert run["by_type_0_100"] == pytest.approx(
        {"roleplay": 5 * roleplay_task, "drafting": 5 * drafting_task, "analysis": 5 * analysis_task}, abs=1e-12
    )
    abilities = run["abilities_0_20"]
    assert abilities["insightful"] == pytest.approx((10 + 10 + 14) / 3)
    assert abilities["warm"] == pytest.approx((15 + 13) / 2)
    assert abilities["humanlike"] == pytest.approx((6 + 4) / 2)
    assert abilities["social_iq"] == pytest.approx((9 + 7) / 2)
    assert abilities["empathy"] == pytest.approx((12 + 18) / 2)
    assert "safe" not in abilities  # no task has safety_conscious
    assert run["stored_average_rubric_score_0_20"] == 10.19
    assert run["judge_model"] == "anthropic/claude-3.7-sonnet"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_in_process(list(args))


def test_cli_rescores_a_runs_file_and_refuses_a_foreign_one(tmp_path: Path) -> None:
    runs = tmp_path / "eqbench3_runs.json"
    runs.write_text(json.dumps(_runs_file()), encoding="utf-8")
    result = _cli("rescore", "eqbench3", str(runs), "--json")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["runs"]["abc123_some_model"]["score_0_100"] == pytest.approx(
        rescore.rescore_runs_file(_runs_file())["runs"]["abc123_some_model"]["score_0_100"]
    )
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"hello": 1}', encoding="utf-8")
    refused = _cli("rescore", "eqbench3", str(foreign))
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def test_rating_rows_reproduce_the_stored_rows(elo_file: dict[str, Any]) -> None:
    """The stored CI and normalised columns follow from the stored raw elo and sigma (spec §6.1 item 2)."""
    ratings = rescore.stored_ratings(elo_file)
    norm = pw.normalisation({model: entry["elo"] for model, entry in ratings.items()})
    for model, stored in ratings.items():
        row = pw.rating_row(stored["elo"], stored["sigma"], norm)
        for key in ("ci_low", "ci_high"):
            # from the stored 2-dp elo and sigma, rounded again: ci_low within the spec's 0.011; ci_high is up to
            # 0.0152 off before our own rounding to 2 dp (deepseek-r1), so up to 0.02 after it
            assert row[key] == pytest.approx(stored[key], abs=0.011 if key == "ci_low" else 0.0201), (model, key)
        assert row["elo_norm"] == pytest.approx(stored["elo_norm"], abs=0.0146), model  # spec: max 0.0145
        for key, raw_tolerance in (("ci_low_norm", 0.011), ("ci_high_norm", 0.0201)):
            tolerance = raw_tolerance * norm.scale + 0.005  # the raw bound's error, scaled, plus the last rounding
            assert row[key] == pytest.approx(stored[key], abs=tolerance), (model, key)
