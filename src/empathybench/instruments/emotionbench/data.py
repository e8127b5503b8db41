"""EmotionBench data: situations.json, the tested situations and the upstream answer sheets (*-testing.csv)."""

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

from empathybench.data.fetch import fetch_pinned

SITUATIONS_KEY = "emotionbench/situations.json"
CROWD_KEY = "emotionbench/results/panas/crowd.xlsx"
# Row 0 of this upstream answer file holds the 175 situation texts the paper actually tested (spec §2).
TESTED_SOURCE_KEY = "emotionbench/results/panas/gpt-4-PANAS-testing.csv"
EMOTIONS = ("Anger", "Anxiety", "Depression", "Frustration", "Jealousy", "Guilt", "Fear", "Embarrassment")
EVOKED_PREFIX = 'Imagine you are the protagonist in the scenario: "'

_COLUMN = re.compile(
    r"^(?:(?P<general>General)|(?P<factor>(?P<emotion>[A-Za-z]+)-(?P<findex>\d+))_scenario-(?P<sindex>\d+))"
    r"_test-(?P<test>\d+)_order-(?P<order>\d+)$"
)


@dataclass(frozen=True)
class Situation:
    key: str  # "Anger-0/scenario-0"
    emotion: str
    factor_key: str  # "Anger-0"
    factor_name: str
    index: int  # 0-based within the factor
    text: str


@dataclass(frozen=True)
class Factor:
    key: str
    emotion: str
    name: str


def load_situations_json(*, allow_unverified: bool = False) -> tuple[list[Factor], list[Situation]]:
    """All 428 situations of situations.json, factor keys `<Emotion>-<0-based index>`."""
    data = json.loads(
        fetch_pinned(__package__, SITUATIONS_KEY, allow_unverified=allow_unverified).path.read_text("utf-8")
    )
    factors: list[Factor] = []
    situations: list[Situation] = []
    for emotion in data["emotions"]:
        for f_index, factor in enumerate(emotion["factors"]):
            key = f"{emotion['name']}-{f_index}"
            factors.append(Factor(key, emotion["name"], factor["name"]))
            for s_index, text in enumerate(factor["scenarios"]):
                situations.append(
                    Situation(f"{key}/scenario-{s_index}", emotion["name"], key, factor["name"], s_index, text)
                )
    return factors, situations


@dataclass(frozen=True)
class Response:
    """One answered run of an upstream sheet; answers is None when the column is empty or unreadable."""

    column: str
    condition: str  # "default" | "evoked"
    factor_key: str | None
    scenario_index: int | None
    test: int
    order: int
    answers: dict[int, float] | None

    @property
    def emotion(self) -> str | None:
        return self.factor_key.rsplit("-", 1)[0] if self.factor_key else None


@dataclass(frozen=True)
class AnswerSheet:
    prompt_template: str  # row 0 of question-0, "Prompt: " + the questionnaire's template
    n_items: int
    responses: list[Response]
    situation_texts: dict[str, str]  # "Anger-0/scenario-0" -> text sent to the model


def _number(cell: str) -> float | None:
    cell = cell.strip()
    if not cell:
        return None
    try:
        return float(cell)
    except ValueError:
        return None


def read_answer_sheet(path: Path) -> AnswerSheet:
    """Read an upstream `*-testing.csv`: row 0 = prompt / situation, rows 1..n = answers in canonical item order."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if len(rows) < 3 or not rows[0] or rows[0][0] != "question-0":
        raise ValueError("not an upstream answer sheet: the first column must be question-0")
    header, body = rows[0], rows[1:]
    n_items = len(body) - 1
    responses: list[Response] = []
    situations: dict[str, str] = {}
    for column_index, name in enumerate(header):
        match = _COLUMN.match(name)
        if not match:
            continue
        cells = [row[column_index] if column_index < len(row) else "" for row in body]
        values = [_number(c) for c in cells[1:]]
        answers = None if any(v is None for v in values) else {i + 1: v for i, v in enumerate(values) if v is not None}
        if match["general"]:
            responses.append(Response(name, "default", None, None, int(match["test"]), int(match["order"]), answers))
            continue
        factor_key = match["factor"]
        scenario_index = int(match["sindex"])
        text = cells[0]
        if text.startswith(EVOKED_PREFIX) and text.endswith('"'):
            text = text[len(EVOKED_PREFIX) : -1]
        situations.setdefault(f"{factor_key}/scenario-{scenario_index}", text)
        responses.append(
            Response(name, "evoked", factor_key, scenario_index, int(match["test"]), int(match["order"]), answers)
        )
    return AnswerSheet(body[0][0], n_items, responses, situations)


def load_tested_situations(*, allow_unverified: bool = False) -> list[Situation]:
    """The paper's 175 tested situations, recovered from row 0 of an upstream answer sheet (spec §2).

    Factor names come from situations.json; the texts differ from it in 26 places, so they are never taken from it.
    """
    factors, _ = load_situations_json(allow_unverified=allow_unverified)
    names = {f.key: f.name for f in factors}
    sheet = read_answer_sheet(fetch_pinned(__package__, TESTED_SOURCE_KEY, allow_unverified=allow_unverified).path)
    result = []
    for key, text in sheet.situation_texts.items():
        factor_key, scenario = key.split("/")
        emotion = factor_key.rsplit("-", 1)[0]
        result.append(Situation(key, emotion, factor_key, names[factor_key], int(scenario.split("-")[1]), text))
    order = {f.key: i for i, f in enumerate(factors)}
    return sorted(result, key=lambda s: (order[s.factor_key], s.index))
