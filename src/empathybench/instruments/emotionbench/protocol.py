"""The EmotionBench query protocol (spec §4-5): conditions, item orders and the exact messages."""

import random
from dataclasses import dataclass
from typing import Literal

from empathybench.instruments.emotionbench.data import EVOKED_PREFIX
from empathybench.instruments.emotionbench.questionnaires import Questionnaire
from empathybench.models.base import Message

Variant = Literal["repo", "notebook"]
DEFAULT_SCENARIO = " "  # the repo sheet's row 0 for default runs: "…1 to 5." + 3 spaces + "Please…" (spec §5.3)


def item_orders(n_items: int, n_orders: int, seed: int) -> list[tuple[int, ...]]:
    """Order 0 is canonical; orders 1..n-1 are seeded permutations, each shared by every situation.

    Each entry lists the 1-based item ids in presented order.
    """
    canonical = tuple(range(1, n_items + 1))
    rng = random.Random(f"emotionbench-orders-{seed}")
    orders = [canonical]
    for _ in range(1, n_orders):
        permutation = list(canonical)
        rng.shuffle(permutation)
        orders.append(tuple(permutation))
    return orders


def notebook_order(n_items: int, query_key: str) -> tuple[int, ...]:
    """The notebook variant shuffles afresh for every query; seeded per query here so reruns hit the cache."""
    permutation = list(range(1, n_items + 1))
    random.Random(f"emotionbench-notebook-{query_key}").shuffle(permutation)
    return tuple(permutation)


def scenario_text(situation: str | None) -> str:
    return DEFAULT_SCENARIO if situation is None else f'{EVOKED_PREFIX}{situation}"'


def user_message(questionnaire: Questionnaire, order: tuple[int, ...], situation: str | None, variant: Variant) -> str:
    """The user message, items numbered by presented position.

    repo (spec §5.3): "Prompt: " + template and the numbered items joined by newlines, then SCENARIO replaced.
    notebook (spec §5.4): template with SCENARIO replaced, a newline, the numbered items; no "Prompt: " prefix.
    """
    numbered = "\n".join(f"{position}. {questionnaire.items[item]}" for position, item in enumerate(order, start=1))
    if variant == "notebook":
        return questionnaire.prompt.replace("SCENARIO", scenario_text(situation)) + "\n" + numbered
    sheet_column = f"Prompt: {questionnaire.prompt}\n{numbered}"
    return sheet_column.replace("SCENARIO", scenario_text(situation))


def messages(
    questionnaire: Questionnaire,
    order: tuple[int, ...],
    situation: str | None,
    *,
    variant: Variant = "repo",
    system: bool = True,
) -> list[Message]:
    """[system: inner_setting, user: message]; completion-style models (davinci) got no system text."""
    content = user_message(questionnaire, order, situation, variant)
    if not system:
        return [Message("user", content)]
    return [Message("system", questionnaire.system), Message("user", content)]


@dataclass(frozen=True)
class PlannedRun:
    run: int  # 0-based run index within the condition or situation
    order: int  # index into the shared item orders


def run_plan(n_runs: int, n_orders: int) -> list[PlannedRun]:
    """Runs spread over orders in blocks: 50 default runs over 10 orders = 5 per order, run-major within an order.

    Consecutive runs share an order, so a local model reuses the whole prompt as a cached prefix.
    """
    n_orders = max(1, min(n_orders, n_runs)) if n_runs else 1
    return [PlannedRun(run, run * n_orders // n_runs) for run in range(n_runs)]
