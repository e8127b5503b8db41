"""TactfulToM's run summary from question records (pure): per condition (without / with chain of thought) upstream's
accuracy per question category, and ours: overall micro (every scored question) and macro (the mean of the
categories), each with its item-bootstrap 95% interval. The headline is the macro accuracy without CoT (ours): every
category counts once, where the micro figure is half belief questions (1,704 of 3,544 in upstream's set).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.instruments.support import mean_metric
from empathybench.instruments.tactfultom import published
from empathybench.instruments.tactfultom.score import (
    CATEGORIES,
    CHART_CATEGORIES,
    SHORT_NAMES,
    Verdict,
    category_counts,
    table_row,
)

HUMAN_REFERENCE_NOTE = (
    "No human reference in numbers: the paper's human and random baselines are drawn in its figure only."
)
FREEFORM_NOTE = (
    "free-form answers are recorded, not scored: upstream computes only token F1 and cosine similarity to each option "
    "(all-MiniLM-L6-v2), with no threshold and no published figure (tactfultom.freeform_check=true computes the "
    "similarity)"
)
FREEFORM_CHECKED_NOTE = (
    "free-form answers: the share whose most similar option (cosine, all-MiniLM-L6-v2, run locally) is the gold one "
    "is ours; upstream stores the similarities with no threshold and no published figure"
)
HEADLINE_NOTE = "overall_macro (ours): the mean of the per-category accuracies; upstream reports categories only"
CHART_NOTE = (
    "overall_macro_chart (ours): the mean over the paper chart's categories a run asks (6 of its 7: comprehension, "
    "belief, information accessibility, answerability and lie detectability as lists, lie-ability; justification is "
    "not asked)"
)


def condition_name(cot: bool) -> str:
    return "cot" if cot else "direct"


def _verdict(record: Mapping[str, Any], condition: str) -> bool | None:
    answers = (record.get("conditions") or {}).get(condition) or {}
    answer = answers.get(record.get("scored_format")) or {}
    return answer.get("correct") if "correct" in answer else None


def macro_item_values(correct: Mapping[str, tuple[str, float]]) -> dict[str, float]:
    """Each question's share of the macro accuracy (question id -> (category, 0/1) in, question id -> value out), so
    that the macro is the mean over questions: a question of category c weighs N / (K * n_c) (N questions, K
    categories, n_c of them in c), every category counts once; a bootstrap resamples questions with the weights
    fixed."""
    sizes: dict[str, int] = {}
    for category, _ in correct.values():
        sizes[category] = sizes.get(category, 0) + 1
    return {q: v * len(correct) / (len(sizes) * sizes[c]) for q, (c, v) in correct.items()}


def condition_figures(records: Sequence[Mapping[str, Any]], condition: str, *, seed: int) -> dict[str, Any]:
    """Every figure of one condition: per category and overall (micro and macro), with intervals."""
    label = f"TactfulToM ({condition})"
    correct = {
        r["question_id"]: (r["category"], float(v)) for r in records if (v := _verdict(r, condition)) is not None
    }
    by_category: dict[str, dict[str, float]] = {}
    for question_id, (category, value) in correct.items():
        by_category.setdefault(category, {})[question_id] = value
    categories = {
        c: {
            **mean_metric(f"{label} {c}", by_category[c], scale=100.0, unit="%", paired_test="mcnemar", seed=seed),
            "items": None,
            "title": SHORT_NAMES[c],
        }
        for c in CATEGORIES
        if c in by_category
    }
    if not correct:
        return {"categories": {}, "n_scored": 0}
    micro = mean_metric(
        f"{label} overall accuracy, micro (ours)",
        {q: v for q, (_, v) in correct.items()},
        scale=100.0,
        unit="%",
        paired_test="mcnemar",
        seed=seed,
    )
    macro = mean_metric(
        f"{label} overall accuracy, macro over categories (ours)",
        macro_item_values(correct),
        scale=100.0,
        unit="%",
        paired_test="paired_t",
        seed=seed,
    )
    chart = {q: (c, v) for q, (c, v) in correct.items() if c in CHART_CATEGORIES}
    macro_chart = mean_metric(
        f"{label} accuracy, macro over the paper chart's categories asked (ours)",
        macro_item_values(chart),
        scale=100.0,
        unit="%",
        paired_test="paired_t",
        seed=seed,
    )
    counts = category_counts(Verdict(c, bool(v)) for c, v in correct.values())
    unread = sum(1 for r in records if _read(r, condition) == "NAN")
    checked = freeform_figures(records, condition, seed=seed)
    lenient = lenient_list_figures(records, condition, seed=seed)
    return {
        **({"lenient_lists": lenient} if lenient else {}),
        "overall_macro": macro,
        "overall_micro": micro,
        **({"overall_macro_chart": macro_chart} if chart else {}),
        "categories": categories,
        **({"freeform_check": checked} if checked else {}),
        "table": {k: (round(v, 2) if isinstance(v, float) else v) for k, v in table_row(counts).items()},
        "n_scored": len(correct),
        "n_unread": unread,
    }


def freeform_figures(records: Sequence[Mapping[str, Any]], condition: str, *, seed: int) -> dict[str, Any] | None:
    """Ours, where the free-form check ran: the share of free-form answers whose closest option (cosine similarity,
    all-MiniLM-L6-v2) is the gold one, overall and per category, with intervals (None: no answer was checked)."""
    closest: dict[str, tuple[str, float]] = {}
    for record in records:
        answer = (((record.get("conditions") or {}).get(condition) or {}).get("freeform")) or {}
        if "gold_closest" in answer:
            closest[record["question_id"]] = (record["category"], float(answer["gold_closest"]))
    if not closest:
        return None
    label = f"TactfulToM ({condition}) free-form answers closest to the gold option (ours)"
    by_category: dict[str, dict[str, float]] = {}
    for question_id, (category, value) in closest.items():
        by_category.setdefault(category, {})[question_id] = value
    return {
        "overall": mean_metric(label, {q: v for q, (_, v) in closest.items()}, scale=100.0, unit="%", seed=seed),
        "categories": {
            c: {**mean_metric(f"{label}: {c}", by_category[c], scale=100.0, unit="%", seed=seed), "items": None}
            for c in CATEGORIES
            if c in by_category
        },
        "note": "ours: upstream stores each answer's similarity to every option, with no threshold and no aggregate",
    }


def lenient_list_figures(records: Sequence[Mapping[str, Any]], condition: str, *, seed: int) -> dict[str, Any] | None:
    """Ours, beside upstream's list accuracy: the list questions read leniently (names split at commas and "and",
    periods and case ignored), per category with intervals (None: no list question)."""
    by_category: dict[str, dict[str, float]] = {}
    for record in records:
        answer = (((record.get("conditions") or {}).get(condition) or {}).get("list")) or {}
        if "correct_lenient" in answer:
            by_category.setdefault(record["category"], {})[record["question_id"]] = float(answer["correct_lenient"])
    label = f"TactfulToM ({condition}) list answers read leniently (ours)"
    return {
        c: {**mean_metric(f"{label}: {c}", by_category[c], scale=100.0, unit="%", seed=seed), "items": None}
        for c in CATEGORIES
        if c in by_category
    } or None


def _read(record: Mapping[str, Any], condition: str) -> Any:
    answers = (record.get("conditions") or {}).get(condition) or {}
    return (answers.get(record.get("scored_format")) or {}).get("read")


def summarize_records(
    cot: Sequence[bool],
    records: list[dict[str, Any]],
    *,
    seed: int = 0,
    n_items: int | None = None,
    n_final_set: int | None = None,
) -> dict[str, Any]:
    """Per condition every figure; the headline: overall_macro of the first condition. `records`: every question's
    (failed ones too, named in the label's coverage); `n_items`: the questions the run asks (a shortfall stays in
    it), `n_final_set`: the final set's (the label's coverage)."""
    first = condition_name(cot[0])
    asked = len(records) if n_items is None else n_items
    comparable, label_line, covered = published.comparability(
        records, n_items=asked, n_final_set=asked if n_final_set is None else n_final_set
    )
    records = [r for r in records if r.get("status", "ok") == "ok"]
    base = {
        "headline_condition": first,
        "human_reference": {"value": None, "note": HUMAN_REFERENCE_NOTE},
        "n_items": asked,
        "n_answered": len(records),
        "comparable_with_published": comparable,
        "comparability": label_line,
        "coverage": covered.as_dict(),
    }
    if not records:
        return {**base, "score": None, "n_parsed": 0, "headline_note": f"no question was answered; {label_line}"}
    conditions = {condition_name(c): condition_figures(records, condition_name(c), seed=seed) for c in cot}
    metrics: dict[str, Any] = {}
    for name, figures in conditions.items():
        suffix = "" if name == first else f"_{name}"
        for key in ("overall_macro", "overall_micro", "overall_macro_chart"):
            if key in figures:
                metrics[f"{key}{suffix}"] = figures.pop(key)
    headline = metrics.get("overall_macro") or {}
    n_unread = sum(1 for r in records if r.get("parse_error"))
    n_freeform = sum(1 for r in records for answers in (r.get("conditions") or {}).values() if "freeform" in answers)
    return {
        **base,
        "conditions": conditions,
        "headline_metric": "overall_macro",
        "headline_label": HEADLINE_NOTE,
        "headline_note": label_line,
        "chart_note": CHART_NOTE,
        "metrics": metrics,
        "score": headline.get("value"),
        "score_ci95": headline.get("ci95"),
        "n_parsed": len(records) - n_unread,
        "n_parsed_note": "questions whose scored reply (headline condition) held a readable answer",
        "n_freeform_recorded": n_freeform,
        "freeform_note": FREEFORM_NOTE
        if not any("freeform_check" in figures for figures in conditions.values())
        else FREEFORM_CHECKED_NOTE,
    }
