"""Pairwise mode: the judge prompt, plus-margin verdicts, win margins and the TrueSkill solve (spec §5).

Respondent A0493 is always shown first. Each logical pair is judged in both orders; records are kept from the
test model's side. Margin rules come in two versions: "3c21bcc" (the pinned commit: identity blend, analysis
judgements clamped to a minimal margin) and "8c3a125" (the April-2025 Elo file: saturating blend, no clamp).
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from empathybench.instruments.eqbench3.data import Protocol, Scenario, TaskType

MarginRules = Literal["3c21bcc", "8c3a125"]

CODE_FIRST = "A0493"  # always shown first
CODE_SECOND = "A0488"
COT_KEY = "chain_of_thought_reasoning"
MAX_POSSIBLE_DIFF = 30
TRUNCATION_MARK = "... [truncated]"
SECTION_CHAR_LIMITS: dict[TaskType, dict[str, int]] = {
    TaskType.ROLEPLAY: {"thinking_feeling": 2200, "their_thinking_feeling": 1600, "response": 1600},
    TaskType.DRAFTING: {"perspective_taking": 2200, "draft_brainstorming": 1600, "draft": 1600},
}
DEBRIEF_CHAR_LIMIT = 4000
ANALYSIS_CHAR_LIMIT = 6000
NO_DEBRIEF = "[No Debrief Provided]"
ORDER_TEST_FIRST = "A0493:test / A0488:other"
ORDER_TEST_SECOND = "A0493:other / A0488:test"

# TrueSkill environment of the pinned commit (spec §5).
TS_MU = 1200.0
TS_SIGMA = 350.0 / 3
TS_BETA = 350.0 / 6
TS_TAU = 0.0
TS_DRAW_PROBABILITY = 0.0
BIN_SIZE = 20  # margin bins for mu
BIN_SIZE_FOR_CI = 5  # margin bins of the second solve that gives sigma
DEFAULT_ANCHORS: tuple[tuple[str, float], tuple[str, float]] = (
    ("o3", 1500.0),
    ("meta-llama/llama-3.2-1b-instruct", 200.0),
)


def _strip_marks(text: str) -> str:
    return text.replace("*", "").replace("#", "")


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + TRUNCATION_MARK


def format_sections_for_pairwise(kind: TaskType, parsed: Mapping[str, str]) -> str:
    """A role-play/drafting turn rebuilt from its truncated sections, joined with blank lines, ending in `--`."""
    limits = SECTION_CHAR_LIMITS[kind]
    headings = (
        ("# I'm thinking & feeling", "# They're thinking & feeling", "# My response")
        if kind is TaskType.ROLEPLAY
        else ("# Perspective-taking", "# Draft brainstorming", "# Draft")
    )
    blocks: list[str] = []
    for heading, (key, limit) in zip(headings, limits.items(), strict=True):
        content = parsed.get(key) or ""
        blocks.extend([heading, _truncate(content, limit) if content else ""])
    blocks.append("--")
    return "\n\n".join(blocks)


def format_history_for_pairwise(
    protocol: Protocol, scenario: Scenario, replies: Sequence[str], parsed: Sequence[Mapping[str, str]]
) -> str:
    """`{conversation_history_X}`: "User:\\n...\\n---" / "Assistant:\\n...\\n---" entries joined with newlines.

    Upstream's word budget (9,999,999) never bites and is left out.
    """
    from empathybench.instruments.eqbench3.conversation import wrap_turn

    entries: list[str] = []
    for index in range(len(replies)):  # assistant turns are rebuilt from their parsed sections
        user = _strip_marks(wrap_turn(protocol, scenario, index))
        entries.append(f"User:\n{user}\n---")
        assistant = format_sections_for_pairwise(scenario.type, parsed[index])
        entries.append(f"Assistant:\n{_strip_marks(assistant)}\n---")
    return "\n".join(entries)


def format_debrief_for_pairwise(debrief: str | None) -> str:
    if not debrief:
        return NO_DEBRIEF
    return _truncate(_strip_marks(debrief), DEBRIEF_CHAR_LIMIT)


@dataclass(frozen=True)
class Respondent:
    """One side of a matchup: its replies (as the model saw them), parsed sections and debrief."""

    replies: Sequence[str]
    parsed: Sequence[Mapping[str, str]]
    debrief: str | None


def pairwise_prompt(
    protocol: Protocol, scenario: Scenario, first: Respondent, second: Respondent, *, use_notes: bool = True
) -> str:
    """The pairwise judge's one user message; `first` is shown as A0493. Filled by literal replacement."""
    note = protocol.note(scenario.scenario_id) if use_notes else "[No scenario notes available]"
    if scenario.type is TaskType.ANALYSIS:
        prompt = protocol.pairwise_prompt_analysis.replace("{scenario_notes}", note)
        response_a = _truncate(_strip_marks(first.replies[0] if first.replies else ""), ANALYSIS_CHAR_LIMIT)
        response_b = _truncate(_strip_marks(second.replies[0] if second.replies else ""), ANALYSIS_CHAR_LIMIT)
        prompt = prompt.replace("{transcript_being_analysed}", scenario.turns[0].strip())
        return prompt.replace("{response_A}", response_a).replace("{response_B}", response_b)
    prompt = protocol.pairwise_prompt.replace("{scenario_notes}", note)
    prompt = prompt.replace(
        "{conversation_history_A}", format_history_for_pairwise(protocol, scenario, first.replies, first.parsed)
    )
    prompt = prompt.replace(
        "{conversation_history_B}", format_history_for_pairwise(protocol, scenario, second.replies, second.parsed)
    )
    prompt = prompt.replace("{debrief_A}", format_debrief_for_pairwise(first.debrief))
    return prompt.replace("{debrief_B}", format_debrief_for_pairwise(second.debrief))


def tally(verdict: Mapping[str, Any]) -> tuple[float, int, int]:
    """(outcome for A0493, pluses for A0493, pluses for A0488) from one verdict, as upstream counts them.

    Every '+' of a string value counts; a value naming A0493 credits A0493 even when it also names A0488.
    Extra keys count too; non-string values are ignored.
    """
    plus_a = plus_b = 0
    for key, value in verdict.items():
        if key == COT_KEY or not isinstance(value, str):
            continue
        count = value.count("+")
        if CODE_FIRST in value:
            plus_a += count
        elif CODE_SECOND in value:
            plus_b += count
    outcome = 1.0 if plus_a > plus_b else 0.0 if plus_b > plus_a else 0.5
    return outcome, plus_a, plus_b


def blend_8c3a125(x: float) -> float:
    """The April-2025 margin curve: 5x blended by smoothstep over [0, 0.11] into a saturating curve."""
    x = max(0.0, min(1.0, x))
    linear = 5 * x
    saturating = 0.0 if x == 0 else (1.0 - math.exp(-3 * (x**0.75))) / (1.0 - math.exp(-3))
    if x <= 0.0:
        weight = 0.0
    elif x >= 0.11:
        weight = 1.0
    else:
        t = x / 0.11
        weight = t * t * (3 - 2 * t)
    return (1.0 - weight) * linear + weight * saturating


@dataclass(frozen=True)
class Margin:
    fraction: float  # for the side whose tallies came first
    diff: int
    diff_normalized: float
    diff_blended: float


def margin(outcome: float, plus_self: int, plus_other: int, rules: MarginRules = "3c21bcc") -> Margin:
    diff = abs(plus_self - plus_other)
    normalized = min(diff / MAX_POSSIBLE_DIFF, 1.0)
    blended = blend_8c3a125(normalized) if rules == "8c3a125" else normalized
    m = blended / 2.0 + 0.5
    fraction = 0.5 if outcome == 0.5 else m if outcome == 1.0 else 1.0 - m
    return Margin(max(0.0, min(1.0, fraction)), diff, normalized, blended)


def is_analysis_id(scenario_id: str) -> bool:
    try:
        return int(scenario_id) >= 400
    except ValueError:
        return False


@dataclass(frozen=True)
class Judgement:
    """One judge verdict seen from the test model's side (the shape of an upstream comparison record)."""

    scenario_id: str
    iteration: str
    test_model: str
    other_model: str
    test_first: bool
    outcome_for_test: float
    plus_for_test: int
    plus_for_other: int
    fraction_for_test: float


def judgement_from_verdict(
    verdict: Mapping[str, Any],
    *,
    scenario_id: str,
    iteration: str,
    test_model: str,
    other_model: str,
    test_first: bool,
    rules: MarginRules = "3c21bcc",
) -> Judgement:
    outcome_a, plus_a, plus_b = tally(verdict)
    if test_first:
        outcome, plus_test, plus_other = outcome_a, plus_a, plus_b
    else:
        outcome, plus_test, plus_other = 1.0 - outcome_a, plus_b, plus_a
    if rules == "3c21bcc" and is_analysis_id(scenario_id):
        # Each analysis judgement carries the minimum margin: 1-0, 0-1 or 0-0 by its outcome.
        plus_test, plus_other = {1.0: (1, 0), 0.0: (0, 1)}.get(outcome, (0, 0))
    fraction = margin(outcome, plus_test, plus_other, rules).fraction
    return Judgement(
        scenario_id, iteration, test_model, other_model, test_first, outcome, plus_test, plus_other, fraction
    )


def pseudo_wins(fraction: float, bin_size: int) -> int:
    """How many sequential wins a group's margin becomes (IEEE doubles, as upstream computes it)."""
    return min(bin_size, max(1, math.ceil(abs(fraction - 0.5) / (0.5 / bin_size))))


@dataclass(frozen=True)
class Group:
    """All judgements of one (model pair, scenario, iteration), tallies summed per model."""

    model_1: str
    model_2: str
    scenario_id: str
    iteration: str
    plus_1: int
    plus_2: int


def group_judgements(judgements: Iterable[Judgement]) -> list[Group]:
    """Groups keyed by (sorted pair, scenario, iteration), in order of first appearance."""
    sums: dict[tuple[str, str, str, str], list[int]] = {}
    for j in judgements:
        model_1, model_2 = sorted((j.test_model, j.other_model))
        key = (model_1, model_2, j.scenario_id, j.iteration)
        totals = sums.setdefault(key, [0, 0])
        if j.test_model == model_1:
            totals[0] += j.plus_for_test
            totals[1] += j.plus_for_other
        else:
            totals[0] += j.plus_for_other
            totals[1] += j.plus_for_test
    return [Group(m1, m2, sid, it, p1, p2) for (m1, m2, sid, it), (p1, p2) in sums.items()]


def solve_trueskill(
    groups: Iterable[Group],
    models: Iterable[str],
    *,
    bin_size: int = BIN_SIZE,
    rules: MarginRules = "3c21bcc",
) -> dict[str, tuple[float, float]]:
    """Sequential TrueSkill over the groups in order: k pseudo-wins for the winner, or one draw (spec §5).

    Every model starts at (1200, 350/3); the result is order-dependent, as upstream's.
    """
    import trueskill

    env = trueskill.TrueSkill(mu=TS_MU, sigma=TS_SIGMA, beta=TS_BETA, tau=TS_TAU, draw_probability=TS_DRAW_PROBABILITY)
    ratings = {model: env.create_rating() for model in models}
    for group in groups:
        for model in (group.model_1, group.model_2):
            ratings.setdefault(model, env.create_rating())
        outcome = 1.0 if group.plus_1 > group.plus_2 else 0.0 if group.plus_2 > group.plus_1 else 0.5
        fraction = margin(outcome, group.plus_1, group.plus_2, rules).fraction
        if fraction == 0.5:
            ratings[group.model_1], ratings[group.model_2] = trueskill.rate_1vs1(
                ratings[group.model_1], ratings[group.model_2], drawn=True, env=env
            )
            continue
        winner, loser = (group.model_1, group.model_2) if fraction > 0.5 else (group.model_2, group.model_1)
        for _ in range(pseudo_wins(fraction, bin_size)):
            ratings[winner], ratings[loser] = trueskill.rate_1vs1(ratings[winner], ratings[loser], env=env)
    return {model: (rating.mu, rating.sigma) for model, rating in ratings.items()}


def within_window(groups: Iterable[Group], ladder: Mapping[str, float], window: int) -> list[Group]:
    """The groups whose two models are at most `window` positions apart on the ladder (ratings ascending)."""
    order = sorted(ladder, key=lambda model: ladder[model])
    rank = {model: index for index, model in enumerate(order)}
    return [
        g
        for g in groups
        if g.model_1 in rank and g.model_2 in rank and abs(rank[g.model_1] - rank[g.model_2]) <= window
    ]


@dataclass(frozen=True)
class Normalisation:
    scale: float
    shift: float
    anchored: bool  # False: an anchor is missing and normalised = raw

    def apply(self, value: float) -> float:
        return value * self.scale + self.shift


def normalisation(
    raw: Mapping[str, float],
    anchors: tuple[tuple[str, float], tuple[str, float]] = DEFAULT_ANCHORS,
) -> Normalisation:
    """The affine map sending the two anchor models (matched by exact name) to their fixed values."""
    (high_model, high_value), (low_model, low_value) = anchors
    if high_model not in raw or low_model not in raw or raw[high_model] == raw[low_model]:
        return Normalisation(1.0, 0.0, False)
    scale = (high_value - low_value) / (raw[high_model] - raw[low_model])
    return Normalisation(scale, high_value - scale * raw[high_model], True)


@dataclass(frozen=True)
class PairwiseVerdict:
    verdict: dict[str, Any] | None  # None: an error comparison, which the solver ignores
    error: str | None
    repairs: tuple[str, ...]  # e.g. ("trailing_comma",): read only thanks to a repair upstream does not make


def parse_pairwise_reply(text: str, *, tolerate_trailing_comma: bool = True) -> PairwiseVerdict:
    """The judge's verdict object (same tolerant loader as the rubric); a trailing comma is tolerated and named."""
    from empathybench.instruments.eqbench3.conversation import strip_reasoning
    from empathybench.instruments.eqbench3.judging import load_judge_json

    try:
        loaded = load_judge_json(strip_reasoning(text))
    except ValueError as exc:
        return PairwiseVerdict(None, str(exc), ())
    if "trailing_comma" in loaded.repairs and not tolerate_trailing_comma:
        return PairwiseVerdict(None, "trailing comma in the judge's JSON", tuple(loaded.repairs))
    if not isinstance(loaded.value, dict) or not loaded.value:
        return PairwiseVerdict(None, "no valid JSON object in the judge reply", tuple(loaded.repairs))
    return PairwiseVerdict(loaded.value, None, tuple(loaded.repairs))


CI_Z = 1.96  # upstream's "95% CI" from the TrueSkill sigma: a heuristic, not a calibrated interval (spec §8 item 7)
RANK_WINDOW = 16


def rating_row(mu: float, sigma: float, norm: Normalisation) -> dict[str, float]:
    """One model's row as the Elo file stores it (2 dp); the normalised CI bounds map the rounded raw bounds."""
    ci_low, ci_high = round(mu - CI_Z * sigma, 2), round(mu + CI_Z * sigma, 2)
    return {
        "elo": round(mu, 2),
        "elo_norm": round(norm.apply(mu), 2),
        "sigma": round(sigma, 2),
        "ci_low": ci_low,
        "ci_high": ci_high,
        "ci_low_norm": round(norm.apply(ci_low), 2),
        "ci_high_norm": round(norm.apply(ci_high), 2),
    }


def elo_table(
    judgements: Sequence[Judgement],
    models: Iterable[str],
    *,
    anchors: tuple[tuple[str, float], tuple[str, float]] = DEFAULT_ANCHORS,
    rules: MarginRules = "3c21bcc",
    window: int = RANK_WINDOW,
) -> dict[str, dict[str, float]]:
    """Ratings of the pinned commit's final solve: a B = 20 solve gives the ladder, comparisons within `window`
    ladder positions count, mu from B = 20 and sigma from B = 5, normalised to the anchors (raw if one is absent).
    """
    names = list(dict.fromkeys(models))
    groups = group_judgements(judgements)
    ladder = {model: mu for model, (mu, _) in solve_trueskill(groups, names, rules=rules).items()}
    kept = within_window(groups, ladder, window)
    solved = solve_trueskill(kept, names, bin_size=BIN_SIZE, rules=rules)
    for_ci = solve_trueskill(kept, names, bin_size=BIN_SIZE_FOR_CI, rules=rules)
    norm = normalisation({model: mu for model, (mu, _) in solved.items()}, anchors)
    return {model: rating_row(solved[model][0], for_ci[model][1], norm) for model in solved}
