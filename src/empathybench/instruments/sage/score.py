"""SAGE's figures (pure): the Sentient score, success and failure counts, and the published leaderboard.

README.md (SAGE/, "Sentient leaderboard"): Score is the mean final emotion over the 100 people (one decimal),
Success the people who end in Emotion-S, Failure those who end in Emotion-F. The README's table, simulator
DeepSeek-V3 (facts copied from SAGE/README.md at the pinned commit 6dcfa78): (model, score, success, failure).
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any

from empathybench.instruments.comparability import Unstated
from empathybench.models.identity import identity_table

PUBLISHED_SIMULATOR = "DeepSeek-V3"
# SAGE/README.md, "Sentient leaderboard using DeepSeek-V3 as the sentient agent" (name, Score, Success, Failure)
PUBLISHED_LEADERBOARD: tuple[tuple[str, float, int, int], ...] = (
    ("GPT-4o-Latest", 79.9, 51, 4),
    ("GPT-4.1", 68.2, 35, 13),
    ("Gemini2.5-Flash-Think", 65.9, 35, 19),
    ("Gemini2.5-Pro", 62.9, 34, 25),
    ("o3", 62.7, 32, 14),
    ("GPT-4.5-Preview", 62.7, 23, 15),
    ("Gemini2.0-Flash-Think", 62.3, 23, 23),
    ("Claude3.7-Think", 61.3, 23, 19),
    ("Claude3.7", 54.8, 19, 24),
    ("DeepSeek-V3-0324", 54.4, 19, 23),
    ("DeepSeek-R1", 53.7, 31, 28),
    ("DeepSeek-V3", 37.6, 5, 39),
    ("o4-mini", 35.9, 10, 48),
    ("Llama3.3-70B", 33.3, 7, 47),
    ("Gemini2.0-Flash", 32.9, 8, 45),
    ("GPT-4o", 31.8, 7, 51),
    ("o1", 29.0, 5, 51),
    ("Qwen2.5-72B", 19.1, 4, 70),
)
# The simulator of the published leaderboard: DeepSeek-V3 of 2024-12-27 (the result files' folder
# deepseek-v3-2024-1227_based_simulator), the identity table's checkpoint deepseek-v3-2024-12-26 (the name the atlas
# gives it): every name the table gives it is accepted (deepseek-v3, deepseek-ai/DeepSeek-V3, deepseek-v3-1227,
# deepseek-v3-2024-1227...); "deepseek-chat" is not one (DeepSeek's API alias has served later versions since March
# 2025).
PUBLISHED_SIMULATOR_ID = "deepseek-v3-2024-12-26"
# The leaderboard's rows that thought, by the checkpoint a run names: a run that sends that model a thinking setting
# stands beside the "-Think" row, whose setting upstream never stated (README.md and the released files name none);
# a run that sends none stands beside the row without thinking.
THINKING_ROWS = {"claude-3-7-sonnet-20250219": "Claude3.7-Think"}

SUCCESS_STATE = "Emotion-S"
FAILURE_STATE = "Emotion-F"
STATES = ("Emotion-S", "Emotion-A", "Emotion-B", "Emotion-C", "Emotion-F")


def published_score(mean: Fraction | float) -> float:
    """The README's rounding: one decimal, halves up (68.15 -> 68.2)."""
    exact = Decimal(mean.numerator) / Decimal(mean.denominator) if isinstance(mean, Fraction) else Decimal(str(mean))
    return float(exact.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def figures(final_emotions: Sequence[int | float], final_states: Sequence[str]) -> dict[str, Any]:
    """Score (the README's rounding and exact), success, failure and the count of each state."""
    total = sum((Fraction(value) for value in final_emotions), Fraction(0))
    return figures_of_totals(total, len(final_emotions), Counter(final_states))


def figures_of_totals(total: Fraction, n_people: int, counts: Counter[str]) -> dict[str, Any]:
    """`figures` from the sum of the final emotions (exact), the number of people and the count of each state."""
    if not n_people:
        return {"score": None, "score_exact": None, "success": 0, "failure": 0, "states": {}, "n_people": 0}
    mean = total / n_people
    return {
        "score": published_score(mean),
        "score_exact": round(float(mean), 6),
        "success": counts.get(SUCCESS_STATE, 0),
        "failure": counts.get(FAILURE_STATE, 0),
        "states": {state: counts.get(state, 0) for state in sorted(counts, key=_state_order)},
        "n_people": n_people,
    }


def _state_order(state: str) -> tuple[int, str]:
    return (STATES.index(state), state) if state in STATES else (len(STATES), state)


def checkpoint(model: str) -> str | None:
    """The identity table's checkpoint of a model name, or None."""
    match = identity_table().match(model)
    return match.id if match is not None else None


def is_published_simulator(model: str) -> bool:
    return checkpoint(model) == PUBLISHED_SIMULATOR_ID


# What the published runs sent each model besides the messages, as far as it can be stated: nothing (the released
# `call_llm` of SAGE/simulator_response.py and npc_response.py is a stub that sets no sampling), so the providers'
# defaults: temperature 1 at OpenAI, Anthropic and DeepSeek, no top_p, no reasoning settings, the provider's budget.
PROVIDER_DEFAULTS = {"temperature": 1.0}


def published_call_body(role: str, model: str, sampling: Mapping[str, Any]) -> dict[str, Any]:
    """What the published runs sent any model of any role besides the messages: nothing; for a model under test
    whose row thought, a thinking budget that was not published (named so when a run sends one)."""
    row = THINKING_ROWS.get(checkpoint(model) or "") if role == "model" else None
    if row is None:
        return {}
    unstated = Unstated(f"not published: the thinking setting of the {row} row is not stated", only_if_sent=True)
    return {"reasoning": {"max_tokens": unstated}}


def simulator_differences(simulator: str, *, self_simulated: bool) -> list[str]:
    """The simulated person's model against the published one."""
    if self_simulated:
        return ["self-simulated: the model under test played the person"]
    if not simulator or not all(is_published_simulator(name.strip()) for name in simulator.split(",")):
        return [f"the simulator is not the published {PUBLISHED_SIMULATOR} (2024-12-27)"]  # the label names it
    return []


def tally(values: Sequence[str]) -> dict[str, int]:
    return dict(Counter(values).most_common())
