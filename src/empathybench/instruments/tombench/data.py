"""ToMBench's items: its own pins (pins.json), fetched through the project's fetch code and read into records.

Item text is never committed: the 20 `data/*.jsonl` files (2,860 items, each with Chinese and English fields) are
read at run time. Their quirks, and what we do with them (docs/instruments/tombench.md, "Upstream defects"):
- An empty option is `NaN` in 484 items (Faux-pas Recognition Test, Strange Story Task): run_api.py tests
  `d['选项C'] != None`, which NaN passes, and would then fail on `NaN.replace`; we read a null or NaN option as
  absent, so these items get the 2-option prompt upstream meant for them.
- As upstream, the Chinese option C decides the form in both languages: Strange Story Task line 293 has
  4 English options but 2 Chinese ones, and is asked with 2 in both.
- Knowledge-Attention Links line 11 has the key "A. ": read as "A" (get_results.py would never match it).
"""

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from empathybench.data.fetch import FetchedFile, fetch_pinned
from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError
from empathybench.instruments.tombench.atoms import CATEGORY_OF, abilities_of

Language = Literal["en", "zh"]
LANGUAGES: tuple[Language, ...] = ("en", "zh")
LETTERS = "ABCD"
N_ITEMS = 2860  # the README: "2,860 testing samples"
PROMPTS_KEY = "tombench/prompts.py"

# The fields of one upstream record (run_api.py and get_results.py read the same names).
_FIELDS: dict[Language, tuple[str, str, tuple[str, ...]]] = {
    "en": ("STORY", "QUESTION", ("OPTION-A", "OPTION-B", "OPTION-C", "OPTION-D")),
    "zh": ("故事", "问题", ("选项A", "选项B", "选项C", "选项D")),
}
_ABILITY_FIELD = "能力\nABILITY"
_KEY_FIELD = "答案\nANSWER"


def pins() -> Mapping[str, DataFile]:
    """The instrument's pinned files (its pins.json), keyed `tombench/<path>`."""
    return load_pins(__package__)


def data_keys() -> list[str]:
    """The keys of the 20 item files, in file-name order (run_api.py reads `os.listdir("./data")`)."""
    return sorted(key for key in pins() if key.startswith("tombench/data/") and key.endswith(".jsonl"))


def task_slug(task: str) -> str:
    """A task file's name as an option value and in item ids: "False Belief Task" -> "false-belief-task"."""
    return re.sub(r"[^a-z0-9]+", "-", task.lower()).strip("-")


def task_slugs() -> list[str]:
    """The 20 task files' slugs, from the pins (no data read)."""
    return [task_slug(key.removeprefix("tombench/data/").removesuffix(".jsonl")) for key in data_keys()]


@dataclass(frozen=True)
class Presentation:
    """One item in one language: the texts run_api.py puts in the prompt."""

    story: str
    question: str
    options: tuple[str, ...]  # "A. " removed as run_api.py removes it; 2 or 4 of them


@dataclass(frozen=True)
class TomItem:
    task: str  # the file name without ".jsonl" (get_results.py's task)
    number: int  # the line in its file, from 1 (the record's INDEX numbers the questions of one story)
    label: str  # the ABILITY field as written (get_results.py's ability key)
    abilities: tuple[str, ...]  # the README's abilities the label names
    key: str  # "A".."D"
    languages: dict[Language, Presentation]

    @property
    def question_id(self) -> str:
        return f"{task_slug(self.task)}-{self.number}"

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(CATEGORY_OF[ability] for ability in self.abilities))

    @property
    def n_options(self) -> int:
        return len(self.languages["zh"].options)


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise DataError(f"{where} is not text")
    return value


def _item(task: str, number: int, record: dict[str, Any]) -> TomItem:
    where = f"ToMBench {task} line {number}"
    # run_api.py: `if d['选项C'] != None` picks the 4-option form, for both languages
    count = 2 if _absent(record.get("选项C")) else 4
    languages: dict[Language, Presentation] = {}
    for language, (story, question, option_fields) in _FIELDS.items():
        options = tuple(
            _text(record.get(name), f"{where} {name}").replace(f"{letter}. ", "")  # run_api.py's .replace
            for letter, name in zip(LETTERS[:count], option_fields[:count], strict=True)
        )
        languages[language] = Presentation(
            _text(record.get(story), f"{where} {story}"), _text(record.get(question), f"{where} {question}"), options
        )
    key = _text(record.get(_KEY_FIELD), f"{where} answer").strip().rstrip(".")
    if key not in LETTERS[:count]:
        raise DataError(f"{where}: answer {key!r} is not one of its {count} options")
    label = _text(record.get(_ABILITY_FIELD), f"{where} ability")
    try:
        abilities = abilities_of(label)
    except ValueError as exc:
        raise DataError(f"{where}: {exc}") from None
    return TomItem(task, number, label, abilities, key, languages)


def parse_items(task: str, text: str) -> list[TomItem]:
    """One data file's items, in file order (Python's json reads the files' bare `NaN`)."""
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"ToMBench {task} line {number} is not JSON: {exc.msg}") from None
        items.append(_item(task, number, record))
    return items


def load_items(*, allow_unverified: bool = False) -> tuple[list[TomItem], list[FetchedFile]]:
    """All items of the 20 files, in file-name then line order, and the files read."""
    items: list[TomItem] = []
    files = []
    for key in data_keys():
        fetched = fetch_pinned(__package__, key, allow_unverified=allow_unverified)
        files.append(fetched)
        task = key.removeprefix("tombench/data/").removesuffix(".jsonl")
        items.extend(parse_items(task, fetched.path.read_text("utf-8")))
    return items, files
