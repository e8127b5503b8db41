"""Re-score the author's raw EQ-Bench v2 result files from their stored parsed answers (specs/eqbench.md §5.1).

An upstream file holds per-question parsed answers (`respondent_answers`), raw completions (`raw_inference`)
and the published `benchmark_score`. The published number is reproduced by the pipeline aggregate with the
"lt5" sigmoid rule; the released code ("le5") and the lm-eval style aggregate are reported beside it.
The stored `individual_scores` come from a pre-release scorer and are ignored (SOURCE.md).
"""

import ast
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from empathybench.instruments.eqbench.parse import parse_answer
from empathybench.instruments.eqbench.score import (
    IterationAggregate,
    SigmoidRule,
    aggregate_lm_eval,
    aggregate_pipeline_iterations,
    score_v2,
)

# Raw completions of runs that used the revise-style prompt contain this heading (§2.1).
_REVISED_HEADING = "Revised scores:"


def load_json(path: Path) -> Any:
    """Read a JSON file (an upstream result file or a question set)."""
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def parse_stored_answers(value: object) -> dict[str, Any] | None:
    """One `respondent_answers[qid]` entry as a dict {'first_pass': {...}, 'revised': {...}}, or None.

    Upstream wrote it either as a dict or as a Python-repr string; the string is read with
    ast.literal_eval (a literal parser; never eval). Anything else is treated as no answer.
    """
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def _answer_map(value: object) -> dict[str, Any]:
    """A stored pass ({label: value}) or {} when missing, None or malformed."""
    if not isinstance(value, dict):
        return {}
    return {str(label): answer for label, answer in value.items()}


def _run_record(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The run dict: the file itself, or the single run inside a `raw_results.json`-style {run_key: run}."""
    if "raw_results" in data or "iterations" in data:
        return data
    runs = [
        value
        for value in data.values()
        if isinstance(value, dict) and ("raw_results" in value or "iterations" in value)
    ]
    if len(runs) == 1:
        return runs[0]
    raise ValueError("not an EQ-Bench result: no 'raw_results' (or 'iterations') found, or several runs")


def _iterations(run: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    raw = run.get("raw_results", run.get("iterations"))
    if not isinstance(raw, dict):
        raise ValueError("the run's 'raw_results' is not a mapping of iterations")
    entries = [(str(key), value) for key, value in raw.items() if isinstance(value, dict)]

    def order(item: tuple[str, Mapping[str, Any]]) -> tuple[int, str]:
        key = item[0]
        return (int(key), key) if key.isdigit() else (10**9, key)

    return sorted(entries, key=order)


def _uses_revise_prompt(iterations: list[tuple[str, Mapping[str, Any]]]) -> bool:
    """Whether the run used the revise-style prompt: some answer has a revised pass, or some completion has
    the revised heading."""
    for _, iteration in iterations:
        for value in (iteration.get("respondent_answers") or {}).values():
            stored = parse_stored_answers(value)
            if stored and _answer_map(stored.get("revised")):
                return True
        for text in (iteration.get("raw_inference") or {}).values():
            if isinstance(text, str) and _REVISED_HEADING in text:
                return True
    return False


def _stored_scores(
    iteration: Mapping[str, Any], references: Mapping[str, Mapping[str, Any]], rule: SigmoidRule
) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """Per-question first-pass and revised scores from the stored parsed answers of one iteration."""
    first: dict[str, float | None] = {}
    revised: dict[str, float | None] = {}
    for qid, value in (iteration.get("respondent_answers") or {}).items():
        reference = references.get(str(qid))
        if reference is None:
            continue  # an id the question set does not have; reported as unknown
        stored = parse_stored_answers(value) or {}
        first[str(qid)] = score_v2(_answer_map(stored.get("first_pass")), reference, rule)
        revised[str(qid)] = score_v2(_answer_map(stored.get("revised")), reference, rule)
    return first, revised


def _reparsed_scores(
    iteration: Mapping[str, Any], references: Mapping[str, Mapping[str, Any]], *, revise: bool, rule: SigmoidRule
) -> tuple[dict[str, float | None], dict[str, float | None], int]:
    """Per-question scores from re-parsing `raw_inference` with the strict parser, and how many questions'
    first-pass maps differ from the stored ones."""
    stored_answers = iteration.get("respondent_answers") or {}
    first: dict[str, float | None] = {}
    revised: dict[str, float | None] = {}
    n_differ = 0
    for qid, text in (iteration.get("raw_inference") or {}).items():
        reference = references.get(str(qid))
        if reference is None or not isinstance(text, str):
            continue
        parsed = parse_answer(text, reference, mode="strict_v23", language="en", revise=revise)
        first[str(qid)] = score_v2(parsed.first_pass_pairs, reference, rule)
        revised[str(qid)] = score_v2(parsed.revised_pairs, reference, rule) if revise else None
        stored = parse_stored_answers(stored_answers.get(qid)) or {}
        stored_first = {label: str(value) for label, value in _answer_map(stored.get("first_pass")).items()}
        if stored_first != parsed.first_pass_pairs:
            n_differ += 1
    return first, revised, n_differ


def _answered(
    iterations: list[tuple[Any, Mapping[str, Any]]], references: Mapping[str, Any]
) -> tuple[float, list[str]]:
    """The mean number of questions with a stored entry per iteration (the rest failed every attempt; the v2.0
    files report it as `n_questions_parseable` even when the selected pass parsed fewer), and the stored question
    ids the question set does not know."""
    stored = [[str(qid) for qid in (iteration.get("respondent_answers") or {})] for _, iteration in iterations]
    n_answered = sum(sum(1 for qid in ids if qid in references) for ids in stored) / len(iterations)
    return n_answered, sorted({qid for ids in stored for qid in ids if qid not in references})


def _selected_item_scores(
    per_iteration: list[tuple[dict[str, float | None], dict[str, float | None] | None]],
    aggregates: Sequence[IterationAggregate],
) -> dict[str, float]:
    """Each parsed question's score (0-10) in the pass the pipeline selected, averaged over the iterations that parsed
    it: the items behind `score` (with one iteration, as in every official run, `score` = 10 x their mean)."""
    collected: dict[str, list[float]] = {}
    for (first, revised), aggregate in zip(per_iteration, aggregates, strict=True):
        selected = revised if aggregate.selected_pass == "revised" and revised is not None else first
        for qid, value in selected.items():
            if value is not None:
                collected.setdefault(qid, []).append(value)
    return {qid: round(sum(values) / len(values), 6) for qid, values in collected.items()}


def rescore_upstream_results(data: Mapping[str, Any], questions: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Recompute an upstream EQ-Bench v2 result file from its stored parsed answers.

    `data` is the parsed result JSON; `questions` the v2 question set (qid -> item). Returns a JSON-able dict:
    `score` (pipeline aggregate, "lt5" rule: what the leaderboard published) with `item_scores` (each parsed
    question's score in the selected pass, by question id), `released_code_score` ("le5"),
    `lm_eval_style_score` (first pass, "le5", unparseable = 0 over all questions), their parse counts, the
    selected pass, the file's own published numbers and whether `score` matches them, and a re-parse of the
    raw completions with the strict parser (extra; the scores above come from the stored answers).
    """
    run = _run_record(data)
    version = run.get("eqbench_version", "v2")
    if version != "v2":
        raise ValueError(f"only EQ-Bench v2 result files can be re-scored, this one is {version!r}")
    references = {str(qid): item["reference_answer_fullscale"] for qid, item in questions.items()}
    n_questions = len(references)
    iterations = _iterations(run)
    if not iterations:
        raise ValueError("the result file has no iterations")
    revise = _uses_revise_prompt(iterations)

    def pipeline(rule: SigmoidRule) -> dict[str, Any]:
        per_iteration = []
        for _, iteration in iterations:
            first, revised = _stored_scores(iteration, references, rule)
            per_iteration.append((first, revised if revise else None))
        aggregate = aggregate_pipeline_iterations(per_iteration, n_questions=n_questions)
        return {
            "item_scores": _selected_item_scores(per_iteration, aggregate.iterations),
            "score": aggregate.score,
            "score_unrounded": aggregate.score_unrounded,
            "n_parseable": aggregate.n_parseable,
            "valid": aggregate.valid,
            "selected_pass": aggregate.selected_pass,
            "first_pass_scores": [round(it.first_pass.score, 6) for it in aggregate.iterations],
            "revised_scores": [round(it.revised.score, 6) if it.revised else None for it in aggregate.iterations],
            "n_first_pass_parseable": [it.first_pass.n_parseable for it in aggregate.iterations],
            "n_revised_parseable": [it.revised.n_parseable if it.revised else None for it in aggregate.iterations],
        }

    published = pipeline("lt5")
    released = pipeline("le5")

    # lm-eval style: first pass, released rule, every question counted (missing = 0); mean over iterations.
    lm_eval = []
    for _, iteration in iterations:
        first, _revised = _stored_scores(iteration, references, "le5")
        lm_eval.append(aggregate_lm_eval([first.get(qid) for qid in references]))
    lm_eval_score = sum(a.eqbench for a in lm_eval) / len(lm_eval)
    percent_parseable = sum(a.percent_parseable for a in lm_eval) / len(lm_eval)

    reparsed = []
    n_reparse_differ = 0
    for _, iteration in iterations:
        first, revised, n_differ = _reparsed_scores(iteration, references, revise=revise, rule="lt5")
        reparsed.append((first, revised if revise else None))
        n_reparse_differ += n_differ
    reparsed_aggregate = aggregate_pipeline_iterations(reparsed, n_questions=n_questions)

    n_answered, unknown_ids = _answered(iterations, references)
    published_score = run.get("benchmark_score")
    published_score = float(published_score) if isinstance(published_score, int | float) else None
    published_parseable = run.get("n_questions_parseable")
    return {
        "model_path": run.get("model_path"),
        "score": published["score"],
        "score_unrounded": published["score_unrounded"],
        "n_parseable": published["n_parseable"],
        "valid": published["valid"],
        "selected_pass": published["selected_pass"],
        "first_pass_scores": published["first_pass_scores"],
        "revised_scores": published["revised_scores"],
        "n_first_pass_parseable": published["n_first_pass_parseable"],
        "n_revised_parseable": published["n_revised_parseable"],
        "item_scores": published["item_scores"],
        "published_score": published_score,
        "published_n_parseable": float(published_parseable) if isinstance(published_parseable, int | float) else None,
        "matches_published": None if published_score is None else abs(published["score"] - published_score) < 1e-9,
        "n_answered": n_answered,
        "released_code_score": released["score"],
        "released_code_score_unrounded": released["score_unrounded"],
        "released_code_selected_pass": released["selected_pass"],
        "lm_eval_style_score": lm_eval_score,
        "percent_parseable": percent_parseable,
        "n_questions": n_questions,
        "n_iterations": len(iterations),
        "revise_prompt_used": revise,
        "unknown_question_ids": unknown_ids,
        "strict_reparse_score": reparsed_aggregate.score,
        "strict_reparse_n_parseable": reparsed_aggregate.n_parseable,
        "strict_reparse_n_first_pass_differ": n_reparse_differ,
        "errors": run.get("errors") or None,
    }
