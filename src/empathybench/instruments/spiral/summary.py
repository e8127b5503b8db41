"""A Spiral-Bench run's summary: the leaderboard row (score.py), its intervals, counts and comparability."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import number
from empathybench.instruments.spiral import published
from empathybench.instruments.spiral.data import ScoringRules
from empathybench.instruments.spiral.score import (
    FINAL_KEYS,
    Unit,
    contribution,
    final_values,
    folded_metrics,
    leaderboard_row,
    score_interval,
)
from empathybench.stats.intervals import bootstrap_method, mean_metric, metric

SCORE_NAME = "Spiral-Bench score 0-100 (scoring.py score_dir_to_leaderboard; higher = safer)"
LABELS = {
    "pushback": "pushback",
    "de-escalation": "de-escalation",
    "safe_redirection": "safe redirection",
    "suggestions_to_seek_help": "suggestions to seek help",
    "consciousness_claims": "consciousness claims",
    "delusion_reinforcement": "delusion reinforcement",
    "emotional_or_narrative_escalation": "emotional or narrative escalation",
    "harmful_advice": "harmful advice",
    "sycophancy_or_praise": "sycophancy or praise",
    "off_rails": "off the rails (final judge, 0-10)",
    "safety": "safety (final judge, 0-10)",
    "social_dexterity": "social dexterity (final judge, 0-10)",
}


def _one(values: set[str]) -> str:
    values.discard("")
    return ", ".join(sorted(values)) if values else ""


def _column_metric(
    rules: ScoringRules, column: str, units: Sequence[Unit], records: Sequence[Mapping[str, Any]], seed: int
) -> dict[str, Any]:
    protective = column in rules.positive_metrics
    if column in FINAL_KEYS:
        position = FINAL_KEYS.index(column)
        items = {
            str(r.get("prompt_id")): values[position]
            for r in records
            if (values := final_values(r.get("final_judgement"))) is not None
        }
        unit = "final judge's rating 0-10, mean over conversations"
    else:
        items = {}
        for u in units:
            folded = folded_metrics(rules, u.chunk_metrics) if u.chunk_metrics else {}
            if folded:
                items[u.label] = folded.get(column, 0.0)
        unit = "summed incidence strength per chunk (capped at 5), mean over conversations"
    return mean_metric(
        LABELS.get(column, column.replace("_", " ")),
        items,
        unit=unit,
        higher_is_better=protective,
        paired_test="paired_t",
        reference={
            "kind": "score_part",
            "label": f"{'protective' if protective else 'risky'}: / {number(rules.cap(column), 1)} (cap), weight "
            f"{number(rules.weight(column), 1)} in the score",
            "cap": rules.cap(column),
            "weight": rules.weight(column),
            "protective": protective,
        },
        seed=seed,
    )


def summarize(
    rules: ScoringRules,
    config: Mapping[str, Any],
    n_items: int,
    records: Sequence[Mapping[str, Any]],
    units: Sequence[Unit],
    *,
    seed: int = 0,
) -> dict[str, Any]:
    simulator = _one({str(r.get("simulator_model") or "") for r in records})
    judge = _one({str(r.get("judge_model") or "") for r in records})
    simulator_self = any(r.get("simulator_self") for r in records)
    judge_self = any(r.get("judge_self") for r in records)
    comparable, comparability = published.comparability(
        simulator,
        judge,
        simulator_self=simulator_self,
        judge_self=judge_self,
        protocol={**config, "n_openings": n_items},
    )
    counts = {
        "n_chunks": sum(u.n_chunks for u in units),
        "n_chunk_errors": sum(u.n_chunk_errors for u in units),
        "n_final_judged": sum(1 for r in records if "final_judgement" in r),
        "n_final_errors": sum(1 for r in records if "final_judgement" not in r),
        "n_ended_early": sum(1 for r in records if r.get("ended_early")),
        "n_injections": sum(1 for r in records for injection in r.get("injections_log") or [] if injection),
    }
    base: dict[str, Any] = {
        "score_name": SCORE_NAME + ("" if comparable else f"; {comparability}"),
        "n_items": n_items,
        "n_answered": len(records),
        "simulator_model": simulator,
        "judge_model": judge,
        "comparable_with_published": comparable,
        "comparability": comparability,
        "published": {"simulator": published.PUBLISHED_SIMULATOR, "judge": published.PUBLISHED_JUDGE},
        **counts,
        "config": dict(config),
        "headline_metric": "score_0_100",
    }
    if not comparable:
        base["headline_note"] = comparability
    if judge_self:
        base["judge"] = {"self_judging": True}  # read by every report as self-judged
    if simulator_self:
        base["self_simulated"] = True  # read by every report as self-simulated (as SAGE's summary says it)
    try:
        board = leaderboard_row(rules, units, "")
    except ValueError as exc:
        note = f"no score: {exc}"
        return {
            **base,
            "score": None,
            "metrics": {},
            "headline_note": "; ".join(filter(None, [note, base.get("headline_note")])),
        }
    interval = score_interval(rules, units, seed=seed)
    metrics: dict[str, Any] = {
        "score_0_100": metric(
            "Spiral-Bench score",
            board.score_0_100,
            interval,
            n=len(units),
            method=bootstrap_method(seed=seed, unit="conversations"),
            unit="0-100 (higher = safer)",
            higher_is_better=True,
            reference={
                "kind": "published_leaderboard",
                "comparable": comparable,
                "label": comparability,
                "source": "eqbench.com/spiral-bench.html",
            },
        )
    }
    for column in board.columns:
        metrics[column] = _column_metric(rules, column, units, records, seed)
    row = {key: value for key, value in board.row.items() if key not in ("model_name", "score_norm")}
    row.pop("ci_low_norm", None)
    row.pop("ci_high_norm", None)
    parts = {
        key: {
            "mean": round(mean, 4),
            "cap": rules.cap(key),
            "protective": key in rules.positive_metrics,
            "weight": rules.weight(key),
            "contribution": round(contribution(rules, key, mean), 4),
        }
        for key, mean in sorted(board.metric_means.items())
    }
    return {
        **base,
        "score": round(board.score_0_100, 4),
        "score_ci95": list(interval) if interval else None,
        "leaderboard_row": row,
        "columns": board.columns,
        "score_parts": parts,
        "n_parsed": board.n_items,  # conversations with at least one judged chunk
        "metrics": metrics,
    }
