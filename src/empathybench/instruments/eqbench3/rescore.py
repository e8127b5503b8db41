"""Rescoring upstream EQ-Bench 3 files (specs/eqbench3.md §6).

(a) An Elo results file (`{model: {elo, elo_norm, sigma, ...}, "__metadata__": {global_pairwise_comparisons}}`):
    every win margin re-derived from its stored judge verdict, the normalised Elo from the raw Elo and the two
    anchors, and the ratings re-solved from the comparisons.
(b) A run file (`eqbench3_runs.json`, keyed by run key): the rubric headline, per-type split, ability columns and
    style traits from the stored rubric scores.
"""

import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scipy.stats import spearmanr

from empathybench.instruments.eqbench3.pairwise import (
    BIN_SIZE,
    DEFAULT_ANCHORS,
    ORDER_TEST_FIRST,
    ORDER_TEST_SECOND,
    Judgement,
    MarginRules,
    group_judgements,
    judgement_from_verdict,
    normalisation,
    solve_trueskill,
    within_window,
)
from empathybench.instruments.eqbench3.rubric import ScoredTask, summarise_rubric

METADATA_KEY = "__metadata__"
FRACTION_TOLERANCE = 1e-12


def read_json_file(path: Path) -> Any:
    """A JSON file, gunzipped when it starts with the gzip magic bytes."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def is_elo_file(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get(METADATA_KEY), dict)


def stored_ratings(data: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    return {model: entry for model, entry in data.items() if model != METADATA_KEY and isinstance(entry, dict)}


def valid_comparisons(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    records = data[METADATA_KEY].get("global_pairwise_comparisons", [])
    return [
        r for r in records if isinstance(r, dict) and "error" not in r and isinstance(r.get("judge_response"), dict)
    ]


def judgement_of_record(record: Mapping[str, Any], rules: MarginRules) -> Judgement:
    order = record["order"]
    if order not in (ORDER_TEST_FIRST, ORDER_TEST_SECOND):
        raise ValueError(f"unknown order {order!r}")
    pair = record["pair"]
    return judgement_from_verdict(
        record["judge_response"],
        scenario_id=str(record["scenario_id"]),
        iteration=str(pair["iteration_index"]),
        test_model=pair["test_model"],
        other_model=pair["neighbor_model"],
        test_first=order == ORDER_TEST_FIRST,
        rules=rules,
    )


def check_margins(records: Sequence[Mapping[str, Any]], rules: MarginRules) -> dict[str, Any]:
    """Re-derive outcome, pluses and fraction of every valid record; count the matches."""
    mismatches: list[dict[str, Any]] = []
    for record in records:
        j = judgement_of_record(record, rules)
        same = (
            j.outcome_for_test == record["outcome_for_test_model"]
            and j.plus_for_test == record["plus_for_test"]
            and j.plus_for_other == record["plus_for_other"]
            and abs(j.fraction_for_test - record["fraction_for_test"]) <= FRACTION_TOLERANCE
        )
        if not same:
            mismatches.append(
                {
                    "scenario_id": record["scenario_id"],
                    "pair": record["pair"],
                    "stored": [record["outcome_for_test_model"], record["plus_for_test"], record["plus_for_other"]],
                    "derived": [j.outcome_for_test, j.plus_for_test, j.plus_for_other],
                }
            )
    return {"checked": len(records), "matching": len(records) - len(mismatches), "mismatches": mismatches[:20]}


def check_normalisation(
    ratings: Mapping[str, Mapping[str, float]],
    anchors: tuple[tuple[str, float], tuple[str, float]] = DEFAULT_ANCHORS,
) -> dict[str, Any]:
    """Apply the anchors' affine map to each stored raw Elo and compare with the stored normalised Elo."""
    raw = {model: float(entry["elo"]) for model, entry in ratings.items() if "elo" in entry}
    norm = normalisation(raw, anchors)
    errors = {
        model: abs(norm.apply(raw[model]) - float(entry["elo_norm"]))
        for model, entry in ratings.items()
        if "elo" in entry and "elo_norm" in entry
    }
    ci_errors = {
        model: max(
            abs(float(entry["elo"]) - 1.96 * float(entry["sigma"]) - float(entry["ci_low"])),
            abs(float(entry["elo"]) + 1.96 * float(entry["sigma"]) - float(entry["ci_high"])),
        )
        for model, entry in ratings.items()
        if {"elo", "sigma", "ci_low", "ci_high"} <= entry.keys()
    }
    return {
        "anchored": norm.anchored,
        "scale": norm.scale,
        "shift": norm.shift,
        "models": len(errors),
        "max_abs_error_elo_norm": max(errors.values(), default=None),
        "max_abs_error_ci": max(ci_errors.values(), default=None),
    }


def resolve_ratings(
    records: Sequence[Mapping[str, Any]],
    models: Sequence[str],
    *,
    rules: MarginRules,
    window: int,
    ladder: Mapping[str, float] | None = None,
    bin_size: int = BIN_SIZE,
    ci_bin_size: int | None = None,
) -> dict[str, tuple[float, float]]:
    """Re-solve the ratings: a window on `ladder` (or on a first full solve with B = 20), then mu with `bin_size`
    and sigma from a second solve with `ci_bin_size` (None: the same solve)."""
    groups = group_judgements(judgement_of_record(r, rules) for r in records)
    if ladder is None:
        rough = solve_trueskill(groups, models, bin_size=BIN_SIZE, rules=rules)
        ladder = {model: mu for model, (mu, _) in rough.items()}
    kept = within_window(groups, ladder, window)
    solved = solve_trueskill(kept, models, bin_size=bin_size, rules=rules)
    if ci_bin_size is None or ci_bin_size == bin_size:
        return solved
    for_ci = solve_trueskill(kept, models, bin_size=ci_bin_size, rules=rules)
    return {model: (solved[model][0], for_ci[model][1]) for model in solved}


def compare_ratings(
    solved: Mapping[str, tuple[float, float]], ratings: Mapping[str, Mapping[str, float]]
) -> dict[str, Any]:
    raw = {model: mu for model, (mu, _) in solved.items()}
    norm = normalisation(raw)
    models = [m for m in ratings if m in solved]
    d_elo = [abs(raw[m] - float(ratings[m]["elo"])) for m in models]
    d_norm = [abs(norm.apply(raw[m]) - float(ratings[m]["elo_norm"])) for m in models]
    d_sigma = [abs(solved[m][1] - float(ratings[m]["sigma"])) for m in models]
    rho = spearmanr([raw[m] for m in models], [float(ratings[m]["elo"]) for m in models]).statistic
    return {
        "models": len(models),
        "max_abs_diff_elo": max(d_elo),
        "max_abs_diff_elo_norm": max(d_norm),
        "max_abs_diff_sigma": max(d_sigma),
        "spearman_rho": float(rho),
        "ratings": {m: {"elo": raw[m], "elo_norm": norm.apply(raw[m]), "sigma": solved[m][1]} for m in models},
    }


def position_bias(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Share of non-tied judgements won by the respondent shown first, overall and by task kind."""
    counts = {"all": [0, 0, 0], "roleplay": [0, 0, 0], "analysis": [0, 0, 0]}  # first wins, second wins, ties
    for record in records:
        j = judgement_of_record(record, "8c3a125")
        first_outcome = j.outcome_for_test if j.test_first else 1.0 - j.outcome_for_test
        slot = 0 if first_outcome == 1.0 else 1 if first_outcome == 0.0 else 2
        kind = "analysis" if int(j.scenario_id) >= 400 else "roleplay"
        counts["all"][slot] += 1
        counts[kind][slot] += 1
    return {
        kind: {"first_wins": c[0], "second_wins": c[1], "ties": c[2], "first_share": c[0] / (c[0] + c[1])}
        for kind, c in counts.items()
        if c[0] + c[1]
    }


def rescore_elo_file(data: Mapping[str, Any], *, resolve: bool = True) -> dict[str, Any]:
    """Spec §6.1: margins with the 8c3a125 rules, the normalisation, and (optionally) the re-solved ratings."""
    ratings = stored_ratings(data)
    records = valid_comparisons(data)
    result: dict[str, Any] = {
        "kind": "elo_results",
        "last_updated": data[METADATA_KEY].get("last_updated"),
        "models": len(ratings),
        "comparison_records": len(data[METADATA_KEY].get("global_pairwise_comparisons", [])),
        "valid_comparisons": len(records),
        "margins_8c3a125": check_margins(records, "8c3a125"),
        "normalisation": check_normalisation(ratings),
        "position_bias": position_bias(records),
    }
    if resolve:
        models = list(ratings)
        # The 8c3a125 merge recipe: a B = 20 solve on everything for the ladder, a +-8 window on it, then B = 1.
        solved = resolve_ratings(records, models, rules="8c3a125", window=8, bin_size=1)
        result["resolved_8c3a125"] = compare_ratings(solved, ratings)
        # For reference, the pinned commit's rules on the same judgements (spec §6.1 item 5): +-16 window on the
        # stored ratings, B = 20 for mu, B = 5 for sigma. Rule changes alone move the ratings.
        ladder = {model: float(entry["elo"]) for model, entry in ratings.items()}
        pinned = resolve_ratings(records, models, rules="3c21bcc", window=16, ladder=ladder, ci_bin_size=5)
        result["resolved_3c21bcc_rules"] = compare_ratings(pinned, ratings)
    return result


def _tasks_of_run(run: Mapping[str, Any]) -> list[ScoredTask]:
    tasks: list[ScoredTask] = []
    iterations = run.get("scenario_tasks")
    if not isinstance(iterations, dict):
        raise ValueError("the run has no 'scenario_tasks' mapping")
    for iteration, by_scenario in iterations.items():
        if not isinstance(by_scenario, dict):
            continue
        for scenario_id, task in by_scenario.items():
            if isinstance(task, dict):
                scores = task.get("rubric_scores")
                tasks.append(
                    ScoredTask(
                        str(iteration),
                        str(scenario_id),
                        str(task.get("status")),
                        scores if isinstance(scores, dict) else None,
                    )
                )
    return tasks


def rescore_runs_file(data: Mapping[str, Any], *, seed: int = 0) -> dict[str, Any]:
    """Spec §3/§4: every run of an `eqbench3_runs.json`, rubric numbers recomputed from the stored scores."""
    runs: dict[str, Any] = {}
    for run_key, run in data.items():
        if not isinstance(run, dict) or "scenario_tasks" not in run:
            continue
        summary = summarise_rubric(_tasks_of_run(run), seed=seed)
        stored = run.get("results") if isinstance(run.get("results"), dict) else {}
        runs[run_key] = {
            "model_name": run.get("model_name", run.get("test_model")),
            "judge_model": run.get("judge_model"),
            "stored_average_rubric_score_0_20": stored.get("average_rubric_score"),
            **summary,
        }
    if not runs:
        raise ValueError("no run with 'scenario_tasks' found")
    return {"kind": "runs", "runs": runs}


def rescore_file(path: Path) -> dict[str, Any]:
    """`empathybench rescore eqbench3 FILE`: an Elo results file or a runs file, told apart by their shape."""
    data = read_json_file(path)
    if is_elo_file(data):
        return rescore_elo_file(data)
    if isinstance(data, dict):
        return rescore_runs_file(data)
    raise ValueError("neither an Elo results file nor an eqbench3_runs.json file")
