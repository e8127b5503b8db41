"""EQ-Bench scoring: per-question scores (v2 full scale, v1 normalised) and run aggregates (specs/eqbench.md §5, §6).

Answers are maps label -> intensity as the model wrote them (values may be digit strings, as in the upstream
result files). A map is valid only if it has exactly 4 entries and all 4 reference labels are among them
(§4, "Validity of a parsed map"); otherwise the question is unparseable and its score is None.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from empathybench.instruments.eqbench.prompts import emotion_labels, reference_scores

SigmoidRule = Literal["le5", "lt5"]
PassName = Literal["first_pass", "revised"]

# §5.1: "chosen such that answering randomly produces a score of zero" (upstream's words).
V2_ADJUST_CONSTANT = 0.7477
# §3 / §5.3: a run fails when parseable / n_questions < 0.8333 (143/171 passes, 142/171 fails).
MIN_PARSEABLE_FRACTION = 0.8333
# §5.3: the revised pass is used only if it parsed on at least 95% as many questions as the first pass.
REVISED_MIN_PARSEABLE_RATIO = 0.95

AnswerValue = float | int | str


def scaled_difference(d: float, rule: SigmoidRule = "le5") -> float:
    """f(d) of §5.1: small differences shrink on a sigmoid, large ones count 1:1.

    rule "le5" is the released code and lm-eval (sigmoid for 0 < d <= 5); "lt5" (sigmoid for 0 < d < 5)
    reproduces the published scores of the official Jan-Feb 2024 runs.
    """
    if rule not in ("le5", "lt5"):
        raise ValueError(f"unknown sigmoid rule {rule!r}; expected 'le5' or 'lt5'")
    if d == 0:
        return 0.0
    in_sigmoid = d <= 5 if rule == "le5" else d < 5
    if in_sigmoid:
        return 6.5 / (1 + math.exp(-1.2 * (d - 4)))
    return float(d)


def match_to_reference(
    answer_labels: Iterable[str], reference_labels: Sequence[str], *, case_insensitive: bool = False
) -> dict[str, str] | None:
    """Reference label -> answer label, or None if the map is invalid (not 4 entries, or not all 4 matched).

    Matching is exact (v2.0-v2.3, lm-eval) or on lower-cased strings (v2.4).
    """
    labels = list(answer_labels)
    if len(labels) != 4:
        return None

    def key(label: str) -> str:
        return label.lower() if case_insensitive else label

    reference_by_key = {key(label): label for label in reference_labels}
    matched: dict[str, str] = {}
    for label in labels:
        reference_label = reference_by_key.get(key(label))
        if reference_label is not None:
            matched[reference_label] = label
    return matched if len(matched) == 4 else None


def _as_float(value: AnswerValue) -> float | None:
    """Upstream casts with float(); a value it cannot cast (e.g. German "7,5") fails the attempt."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def score_v2(
    answers: Mapping[str, AnswerValue],
    reference: Mapping[str, Any],
    rule: SigmoidRule = "le5",
    *,
    case_insensitive: bool = False,
) -> float | None:
    """Per-question v2 score s = 10 - 0.7477 * sum f(|u_i - r_i|) (§5.1); None if unparseable.

    `reference` is the item's `reference_answer_fullscale`. Answers outside 0-10 are not rejected (as upstream).
    """
    labels = emotion_labels(reference)
    matched = match_to_reference(answers.keys(), labels, case_insensitive=case_insensitive)
    if matched is None:
        return None
    reference_values = reference_scores(reference)
    total = 0.0
    for label in labels:
        value = _as_float(answers[matched[label]])
        if value is None:
            return None
        total += scaled_difference(abs(value - reference_values[label]), rule)
    return 10 - V2_ADJUST_CONSTANT * total


def score_v1(
    answers: Mapping[str, AnswerValue],
    reference: Mapping[str, Any],
    *,
    case_insensitive_validity: bool = False,
) -> float | None:
    """Per-question v1 score s = 10 - sum |u_i * 10 / sum(u) - r_i| (§5.2); None if unparseable or sum(u) <= 0.

    `reference` is the item's `reference_answer`. With `case_insensitive_validity` (v2.4) the validity check
    lower-cases but the tally still compares exactly, so a label differing only in case adds nothing: the
    v2.4 bug noted in §4, reproduced on purpose.
    """
    labels = emotion_labels(reference)
    matched = match_to_reference(answers.keys(), labels, case_insensitive=case_insensitive_validity)
    if matched is None:
        return None
    values: dict[str, float] = {}
    for label, value in answers.items():
        number = _as_float(value)
        if number is None:
            return None
        values[label] = number
    answer_sum = sum(values.values())
    if answer_sum <= 0:
        return None
    reference_values = reference_scores(reference)
    tally = 0.0
    for label in labels:
        if matched[label] != label:
            continue  # v2.4 bug: the tally compares labels case-sensitively
        tally += abs(10 * values[label] / answer_sum - reference_values[label])
    return 10 - tally


@dataclass(frozen=True)
class PassAggregate:
    """One pass of one iteration: S = 10 * mean(s) over the P parseable questions; S = 0 if P = 0 (§5.3)."""

    score: float
    n_parseable: int


@dataclass(frozen=True)
class IterationAggregate:
    first_pass: PassAggregate
    revised: PassAggregate | None  # None when the run did not use the revise prompt
    selected_pass: PassName

    @property
    def selected(self) -> PassAggregate:
        if self.selected_pass == "revised" and self.revised is not None:
            return self.revised
        return self.first_pass


@dataclass(frozen=True)
class PipelineAggregate:
    """The original pipeline's run result (§5.3, §3).

    `score` and `n_parseable` are the iteration means of the selected pass, rounded to 2 dp as upstream;
    `valid` is False when n_parseable / n_questions < 0.8333 (the run would be marked FAILED).
    """

    score: float
    score_unrounded: float
    n_parseable: float
    n_questions: int
    valid: bool
    selected_pass: PassName  # of the first iteration; see `iterations` for each one
    iterations: tuple[IterationAggregate, ...]

    @property
    def parseable_fraction(self) -> float:
        return self.n_parseable / self.n_questions if self.n_questions else 0.0


def aggregate_pass(per_item: Mapping[str, float | None] | Iterable[float | None]) -> PassAggregate:
    scores = list(per_item.values()) if isinstance(per_item, Mapping) else list(per_item)
    parseable = [s for s in scores if s is not None]
    if not parseable:
        return PassAggregate(score=0.0, n_parseable=0)
    return PassAggregate(score=100 * (sum(parseable) / len(parseable)) / 10, n_parseable=len(parseable))


def aggregate_iteration(
    per_item_first: Mapping[str, float | None], per_item_revised: Mapping[str, float | None] | None = None
) -> IterationAggregate:
    """First-pass and revised aggregates, and the §5.3 selection: revised if S_rev >= S_first and
    P_rev >= 0.95 * P_first, else first pass."""
    first = aggregate_pass(per_item_first)
    if per_item_revised is None:
        return IterationAggregate(first_pass=first, revised=None, selected_pass="first_pass")
    revised = aggregate_pass(per_item_revised)
    use_revised = (
        revised.score >= first.score and revised.n_parseable >= REVISED_MIN_PARSEABLE_RATIO * first.n_parseable
    )
    return IterationAggregate(
        first_pass=first, revised=revised, selected_pass="revised" if use_revised else "first_pass"
    )


def aggregate_pipeline_iterations(
    iterations: Sequence[tuple[Mapping[str, float | None], Mapping[str, float | None] | None]],
    *,
    n_questions: int,
    total_iterations: int | None = None,
) -> PipelineAggregate:
    """Mean over iterations of the selected pass (§5.3).

    v2.3 semantics (default): divide by the number of iterations given. v2.4: pass `total_iterations` to use
    only the first that many and divide by it.
    """
    if total_iterations is not None:
        iterations = iterations[:total_iterations]
    per_iteration = tuple(aggregate_iteration(first, revised) for first, revised in iterations)
    divisor = total_iterations if total_iterations is not None else len(per_iteration)
    if divisor <= 0:
        raise ValueError("no iterations to aggregate")
    mean_score = sum(it.selected.score for it in per_iteration) / divisor
    n_parseable = round(sum(it.selected.n_parseable for it in per_iteration) / divisor, 2)
    return PipelineAggregate(
        score=round(mean_score, 2),
        score_unrounded=mean_score,
        n_parseable=n_parseable,
        n_questions=n_questions,
        valid=not (n_questions <= 0 or n_parseable / n_questions < MIN_PARSEABLE_FRACTION),
        selected_pass=per_iteration[0].selected_pass if per_iteration else "first_pass",
        iterations=per_iteration,
    )


def aggregate_pipeline(
    per_item_first: Mapping[str, float | None],
    per_item_revised: Mapping[str, float | None] | None = None,
    *,
    n_questions: int | None = None,
) -> PipelineAggregate:
    """One-iteration pipeline score (the official runs used 1 iteration).

    `n_questions` is the size of the question set (171 for v2), which the validity rule divides by; questions
    that failed every attempt are simply absent upstream. It defaults to the number of ids given.
    """
    if n_questions is None:
        n_questions = len(set(per_item_first) | set(per_item_revised or {}))
    return aggregate_pipeline_iterations([(per_item_first, per_item_revised)], n_questions=n_questions)


@dataclass(frozen=True)
class LmEvalAggregate:
    """lm-evaluation-harness `eq_bench` (§6): unparseable items score 0, mean over all items."""

    eqbench: float
    percent_parseable: float
    n_items: int
    n_parseable: int


def aggregate_lm_eval(per_item: Sequence[float | None]) -> LmEvalAggregate:
    """`per_item` must hold one entry per question of the set (None for unparseable or missing ones)."""
    if not per_item:
        raise ValueError("lm-eval aggregate needs at least one item")
    n_parseable = sum(1 for s in per_item if s is not None)
    eqbench = sum(10 * s for s in per_item if s is not None) / len(per_item)
    return LmEvalAggregate(
        eqbench=eqbench,
        percent_parseable=100 * n_parseable / len(per_item),
        n_items=len(per_item),
        n_parseable=n_parseable,
    )
