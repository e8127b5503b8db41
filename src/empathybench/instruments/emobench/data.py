"""EmoBench data: the instrument's own pins (pins.json), fetched through the project's fetch code, parsed into records.

Item text is never committed: it is read at run time from the pinned upstream files (specs/emobench.md §0, §1).
`2025/...` keys are commit 3b4f843 (the current items and the JSON-protocol prompts); `2024/...` keys are commit
ffa5e58 (the paper-era prompts, the three permuted option orders and the released result CSVs).
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from empathybench.data.fetch import fetch_pinned
from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError

Language = Literal["en", "zh"]
Task = Literal["EU", "EA"]
LANGUAGES: tuple[Language, ...] = ("en", "zh")
TASKS: tuple[Task, ...] = ("EU", "EA")

EU_ITEMS_KEY = "emobench/2025/data/EU.jsonl"
EA_ITEMS_KEY = "emobench/2025/data/EA.jsonl"
PROMPTS_2025_KEY = "emobench/2025/src/configs/prompts.yaml"
RESPONSE_2025_KEY = "emobench/2025/src/configs/response.yaml"
DICTS_2024_KEY = "emobench/2024/data/dicts.json"
LICENSE_KEY = "emobench/2025/LICENSE"
N_PAPER_ORDERS = 4  # data.json + data_permute_{1,2,3}.json (spec §2.2)

# Coarse EU categories are contiguous qid blocks (spec §1 table; tested against EU.jsonl). Rescoring needs them
# without the item files, because the released CSVs carry no category column.
EU_CATEGORY_QIDS: dict[str, tuple[int, int]] = {
    "complex_emotions": (1, 49),
    "personal_beliefs_and_experiences": (50, 105),
    "emotional_cues": (106, 133),
    "perspective_taking": (134, 200),
}
# zh EU 73/74 have broken cause options (spec §8.1): reported with and without them.
KNOWN_DEFECTIVE: frozenset[tuple[Task, Language, str]] = frozenset({("EU", "zh", "73"), ("EU", "zh", "74")})


def eu_category_of(qid: int) -> str:
    for name, (first, last) in EU_CATEGORY_QIDS.items():
        if first <= qid <= last:
            return name
    raise ValueError(f"EU qid {qid} is outside 1..200")


def paper_order_key(task: Task, order: int) -> str:
    name = "data.json" if order == 0 else f"data_permute_{order}.json"
    return f"emobench/2024/data/{task}/{name}"


def pins() -> Mapping[str, DataFile]:
    """The instrument's pinned files (its pins.json), keyed `emobench/<era>/<path>`."""
    return load_pins(__package__)


def read_pinned_text(key: str, *, allow_unverified: bool = False) -> str:
    return fetch_pinned(__package__, key, allow_unverified=allow_unverified).path.read_text("utf-8")


@dataclass(frozen=True)
class EUItem:
    qid: str
    language: Language
    coarse_category: str
    fine_category: str
    scenario: str
    subject: str
    emotion_choices: tuple[str, ...]
    emotion_label: str
    cause_choices: tuple[str, ...]
    cause_label: str

    @property
    def emotion_label_index(self) -> int:
        return self.emotion_choices.index(self.emotion_label)

    @property
    def cause_label_index(self) -> int:
        return self.cause_choices.index(self.cause_label)


@dataclass(frozen=True)
class EAItem:
    qid: str
    language: Language
    category: str
    question_type: str  # "Action" | "Response", in both languages (spec §8.4)
    scenario: str
    subject: str
    choices: tuple[str, ...]
    label: str

    @property
    def label_index(self) -> int:
        return self.choices.index(self.label)


def _jsonl(text: str, source: str) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DataError(f"{source} line {number} is not JSON: {exc.msg}") from None
    return rows


def _strings(value: Any, field: str, source: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"{source}: field {field!r} is not a list of strings")
    return tuple(value)


def parse_eu_items(text: str, source: str = "EU.jsonl") -> list[EUItem]:
    items = []
    for row in _jsonl(text, source):
        try:
            item = EUItem(
                qid=str(row["qid"]),
                language=row["language"],
                coarse_category=row["coarse_category"],
                fine_category=row["finegrained_category"],
                scenario=row["scenario"],
                subject=row["subject"],
                emotion_choices=_strings(row["emotion_choices"], "emotion_choices", source),
                emotion_label=row["emotion_label"],
                cause_choices=_strings(row["cause_choices"], "cause_choices", source),
                cause_label=row["cause_label"],
            )
        except KeyError as exc:
            raise DataError(f"{source}: an item lacks field {exc.args[0]!r}") from None
        if item.language not in LANGUAGES:
            raise DataError(f"{source}: qid {item.qid} has unknown language {item.language!r}")
        if item.emotion_label not in item.emotion_choices or item.cause_label not in item.cause_choices:
            raise DataError(f"{source}: qid {item.qid} ({item.language}) has a label that is not among its options")
        items.append(item)
    return items


def parse_ea_items(text: str, source: str = "EA.jsonl") -> list[EAItem]:
    items = []
    for row in _jsonl(text, source):
        try:
            item = EAItem(
                qid=str(row["qid"]),
                language=row["language"],
                category=row["category"],
                question_type=row["question type"],
                scenario=row["scenario"],
                subject=row["subject"],
                choices=_strings(row["choices"], "choices", source),
                label=row["label"],
            )
        except KeyError as exc:
            raise DataError(f"{source}: an item lacks field {exc.args[0]!r}") from None
        if item.language not in LANGUAGES:
            raise DataError(f"{source}: qid {item.qid} has unknown language {item.language!r}")
        if item.label not in item.choices:
            raise DataError(f"{source}: qid {item.qid} ({item.language}) has a label that is not among its options")
        items.append(item)
    return items


def load_eu_items(*, allow_unverified: bool = False) -> list[EUItem]:
    return parse_eu_items(read_pinned_text(EU_ITEMS_KEY, allow_unverified=allow_unverified), EU_ITEMS_KEY)


def load_ea_items(*, allow_unverified: bool = False) -> list[EAItem]:
    return parse_ea_items(read_pinned_text(EA_ITEMS_KEY, allow_unverified=allow_unverified), EA_ITEMS_KEY)


@dataclass(frozen=True)
class OrderedOptions:
    """One item's options in one of the paper's option orders (2024 files; qid = position + 1)."""

    qid: str
    choices: tuple[str, ...]  # EA choices, or EU emotion choices
    label_index: int
    cause_choices: tuple[str, ...] = ()  # EU only
    cause_label_index: int = -1  # EU only
    question_word: str = ""  # EA only: the paper-era question type ("Action"/"行动", ...)


def parse_paper_order(text: str, task: Task, language: Language, source: str) -> list[OrderedOptions]:
    """Options and labels of one 2024 order file for one language."""
    try:
        rows = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{source} is not JSON: {exc.msg}") from None
    result = []
    for position, row in enumerate(rows):
        qid = str(position + 1)
        try:
            if task == "EU":
                emotions = _strings(row["Emotion"]["Choices"][language], "Emotion.Choices", source)
                causes = _strings(row["Cause"]["Choices"][language], "Cause.Choices", source)
                result.append(
                    OrderedOptions(
                        qid,
                        emotions,
                        emotions.index(row["Emotion"]["Label"][language]),
                        causes,
                        causes.index(row["Cause"]["Label"][language]),
                    )
                )
            else:
                choices = _strings(row["Choices"][language], "Choices", source)
                label = int(row["Label"])
                if not 0 <= label < len(choices):
                    raise ValueError(label)
                result.append(OrderedOptions(qid, choices, label, question_word=row["Question"][language]))
        except (KeyError, TypeError, ValueError):
            raise DataError(f"{source}: item {qid} ({language}) does not have the expected fields") from None
    return result


def load_paper_order(
    task: Task, order: int, language: Language, *, allow_unverified: bool = False
) -> list[OrderedOptions]:
    key = paper_order_key(task, order)
    return parse_paper_order(read_pinned_text(key, allow_unverified=allow_unverified), task, language, key)


def result_csv_keys() -> list[str]:
    """Pinned released result CSVs (three models of spec §7)."""
    return [key for key in pins() if "/Results/" in key]


def fetch_results_tree(target: Path, *, allow_unverified: bool = False) -> Path:
    """Lay the pinned result CSVs out under `target` as upstream had them (`data/{EU,EA}/Results/<model>/`)."""
    for key in result_csv_keys():
        fetched = fetch_pinned(__package__, key, allow_unverified=allow_unverified)
        destination = target / pins()[key].path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(fetched.path.read_bytes())
    return target
