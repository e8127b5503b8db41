"""The instruments of questionnaires.json: PANAS and the 8 challenging scales, with their scoring rules."""

import json
import statistics
from dataclasses import dataclass
from typing import Literal

from empathybench.data.fetch import fetch_pinned

QUESTIONNAIRES_KEY = "emotionbench/questionnaires.json"
CHALLENGING_BY_EMOTION: dict[str, str] = {
    "Anger": "AGQ",
    "Anxiety": "DASS-21",
    "Depression": "BDI",
    "Frustration": "FDS",
    "Jealousy": "MJS",
    "Guilt": "GASP",
    "Fear": "FSS",
    "Embarrassment": "BFNE",
}
ALL_ITEMS = "ALL_ITEMS"  # the paper's challenging score: the plain sum of every item
Scoring = Literal["paper", "corrected"]


@dataclass(frozen=True)
class Category:
    name: str
    item_ids: tuple[int, ...]


@dataclass(frozen=True)
class Questionnaire:
    name: str
    items: dict[int, str]  # 1-based id -> item text, canonical order
    prompt: str  # user-message template with the SCENARIO placeholder
    system: str  # inner_setting
    reverse_base: int  # reverse score = reverse_base - answer
    reverse: frozenset[int]
    compute_mode: str  # SUM, SUM*2, anything else = mean
    categories: tuple[Category, ...]

    @property
    def answer_range(self) -> tuple[int, int]:
        # 0-3 scales have reverse base 3; 1-5 and 1-7 scales have base 6 and 8.
        return (0, 3) if self.reverse_base == 3 else (1, self.reverse_base - 1)

    def category(self, name: str) -> Category:
        if name == ALL_ITEMS:
            return Category(ALL_ITEMS, tuple(self.items))
        for category in self.categories:
            if category.name == name:
                return category
        raise KeyError(name)

    def category_names(self, scoring: Scoring) -> list[str]:
        return [c.name for c in self.categories] + [ALL_ITEMS]

    def score(self, answers: dict[int, float], category: str, scoring: Scoring) -> float:
        """One response's score on a category.

        "paper": plain sum, no reverse items, no doubling (what the paper's Table 5/13 used).
        "corrected": reverse items as `base - x`, then the instrument's compute mode.
        """
        ids = self.category(category).item_ids
        if scoring == "paper":
            return float(sum(answers[i] for i in ids))
        values = [self.reverse_base - answers[i] if i in self.reverse else answers[i] for i in ids]
        if self.compute_mode == "SUM":
            return float(sum(values))
        if self.compute_mode == "SUM*2":
            return 2.0 * sum(values)
        return statistics.fmean(values)


def parse_questionnaires(data: list[dict]) -> dict[str, Questionnaire]:
    result: dict[str, Questionnaire] = {}
    for entry in data:
        result[entry["name"]] = Questionnaire(
            name=entry["name"],
            items={int(k): v for k, v in sorted(entry["questions"].items(), key=lambda kv: int(kv[0]))},
            prompt=entry["prompt"],
            system=entry["inner_setting"],
            reverse_base=int(entry["scale"]),
            reverse=frozenset(int(i) for i in entry["reverse"]),
            compute_mode=entry["compute_mode"],
            categories=tuple(
                Category(c["cat_name"], tuple(int(i) for i in c["cat_questions"])) for c in entry["categories"]
            ),
        )
    return result


def load_questionnaires(*, allow_unverified: bool = False) -> dict[str, Questionnaire]:
    fetched = fetch_pinned(__package__, QUESTIONNAIRES_KEY, allow_unverified=allow_unverified)
    return parse_questionnaires(json.loads(fetched.path.read_text("utf-8")))


def panas_affect(panas: Questionnaire, answers: dict[int, float]) -> tuple[float, float]:
    """(PA, NA): sums of the 10 positive and 10 negative PANAS items."""
    return (
        panas.score(answers, "Positive Affect", "corrected"),
        panas.score(answers, "Negative Affect", "corrected"),
    )
