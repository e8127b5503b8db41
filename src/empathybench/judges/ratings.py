"""Reading MentalAlign-70k's released ratings (specs/judges.md): the clinical experts' workbook and the four LLM judges'
workbooks, fetched through the package's pins and read once.

Each workbook is one sheet: `ConvID`, `context`, then one column per rated response (`human_response_<m>` in the
experts' file, some headers with a leading space; `judge_response_<m>` in a judge's). An expert's cell is a JSON object
of the 7 ratings; a judge's cell is the judge's raw reply, JSON, fenced JSON, or JSON inside prose. Only the numbers
are kept, never a text: the parsed grid of one file is kept in the cache by the file's SHA-256 and `READER` (a second
read neither imports openpyxl nor opens the workbook). A damaged workbook is one DataError line.
"""

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from empathybench.data.fetch import FetchedFile, fetch_pinned
from empathybench.data.parsed import parsed_document
from empathybench.errors import DataError
from empathybench.formatting import printable

PINS = "empathybench.judges"
# The reader's version: raise it whenever what is read from a workbook changes, so that no grid kept by an earlier
# reader is served.
READER = "mentalalign-ratings-2"

ATTRIBUTES = ("Guidance", "Informativeness", "Relevance", "Safety", "Empathy", "Helpfulness", "Understanding")

# Column suffix -> the response model's name in the paper's tables, in the authors' order (their MODEL_NAME_TO_KEY:
# the order their bootstrap resamples index). "original" is the original human reply: it is not in the published
# human table, but the authors' ICC counts it as one of the rated sources (their `Human`, last).
RESPONSE_MODELS: Mapping[str, str] = {
    "claude": "Claude-3.5-Haiku",
    "ds_llama": "DeepSeek-LLaMA-8B",
    "ds_qwen": "DeepSeek-Qwen-7B",
    "gemini": "Gemini-2.0-Flash",
    "gpt4o": "GPT-4o",
    "gpt4omini": "GPT-4o-Mini",
    "llama_3": "LLaMA-3.1-8B",
    "qwen_2": "Qwen-2.5-7B",
    "qwen_3": "Qwen-3-4B",
    "original": "Human (original reply)",
}


@dataclass(frozen=True)
class JudgeFile:
    key: str  # the pin
    label: str  # the judge's name in the paper's tables
    model_id: str  # the model the judge was (from the sheet name)
    own_family: str  # the response model the authors leave out of this judge's figures (their JUDGE_EXCLUSIONS)


HUMAN_KEY = "mentalalign/Human_judge.xlsx"
JUDGES: Mapping[str, JudgeFile] = {
    "claude": JudgeFile(
        "mentalalign/claude_llm_judge.xlsx", "Claude-3.7-Sonnet", "claude-3-7-sonnet-20250219", "claude"
    ),
    "gpt-4o": JudgeFile("mentalalign/gpt-4o_llm_judge.xlsx", "GPT-4o", "gpt-4o", "gpt4o"),
    "gemini": JudgeFile(
        "mentalalign/gemini_llm_judge.xlsx", "Gemini-2.5-Flash", "gemini-2.5-flash-preview-04-17", "gemini"
    ),
    "o4-mini": JudgeFile("mentalalign/o4-mini_llm_judge.xlsx", "o4-mini", "o4-mini", "gpt4omini"),
}

# How a cell was read. JSON: the authors' own reader takes it (JSON, after a leading ```json fence is removed);
# RECOVERED: only the ratings found in the text (JSON inside prose, unescaped quotes in the explanation, typographic
# quotes); UNPARSABLE: a reply with no ratings in it; EMPTY: no cell.
EMPTY, JSON, RECOVERED, UNPARSABLE = 0, 1, 2, 3
STATUS_NAMES = {EMPTY: "empty", JSON: "json", RECOVERED: "recovered", UNPARSABLE: "unparsable"}

MAX_ROWS = 20_000  # the released workbooks have 1,000 rows each
MAX_CELL_CHARS = 20_000  # a judge's reply is ~600 characters; a longer cell is cut before it is read
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```\s*$", re.IGNORECASE)
_RATING = {
    name: re.compile(r"[\"'\u201c\u201d]" + name + r"[\"'\u201c\u201d]\s*:\s*\"?(-?\d+(?:\.\d+)?)")
    for name in ATTRIBUTES
}

Row = list[float | None]  # the 7 ratings of one cell, in ATTRIBUTES order (None: that rating is missing)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def _from_object(data: Any) -> Row | None:
    if not isinstance(data, dict):
        return None
    return [_number(data.get(name)) for name in ATTRIBUTES]


def read_judge_cell(value: Any) -> tuple[int, Row | None]:
    """(status, ratings) of a judge's raw reply (module docstring: JSON, RECOVERED, UNPARSABLE, EMPTY)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return EMPTY, None
    text = str(value)[:MAX_CELL_CHARS].strip()
    if text.startswith("```json"):  # the authors' reader removes this fence (and nothing else) before json.loads
        text = text.replace("```json", "").replace("```", "").strip()
    try:
        row = _from_object(json.loads(text))
    except ValueError:
        row = None
    if row is not None:
        return JSON, row
    recovered = [_number(match.group(1)) if (match := pattern.search(text)) else None for pattern in _RATING.values()]
    if any(rating is not None for rating in recovered):
        return RECOVERED, recovered
    return UNPARSABLE, None


def read_expert_cell(value: Any, where: str) -> tuple[int, Row | None]:
    """(status, ratings) of an expert's cell: a JSON object of ratings, or nothing; anything else is a DataError."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return EMPTY, None
    text = str(value)[:MAX_CELL_CHARS]
    try:
        row = _from_object(json.loads(_FENCE.sub("", text.strip())))
    except ValueError:
        row = None
    if row is None:
        raise DataError(f"{where} is not a JSON object of ratings: {printable(text, 80)}")
    return JSON, row


def _rows(path: Path) -> Iterator[tuple[Any, ...]]:
    """The rows of the first sheet, read-only; a file openpyxl cannot open is one DataError line."""
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # zipfile's, openpyxl's, lxml's and KeyError for a missing part: all mean "damaged"
        raise DataError(f"{path.name} is not a readable .xlsx workbook ({type(exc).__name__}: {exc})") from None
    try:
        if not workbook.worksheets:
            raise DataError(f"{path.name} has no sheet")
        yield from workbook.worksheets[0].iter_rows(values_only=True)
    except DataError:
        raise
    except Exception as exc:  # a sheet whose XML is cut or damaged fails only while its rows are read
        raise DataError(f"{path.name}: a sheet cannot be read ({type(exc).__name__}: {exc})") from None
    finally:
        workbook.close()


def parse_workbook(path: Path, prefix: str, *, expert: bool) -> dict[str, Any]:
    """The grid of one workbook: {"conversations": [ConvID...], "columns": {model: {"ratings": [Row|None...],
    "status": [int...]}}}, every response model of RESPONSE_MODELS required under `prefix` (`human_response_` or
    `judge_response_`, leading spaces in headers ignored)."""
    rows = _rows(path)
    header = next(rows, None)
    if header is None:
        raise DataError(f"{path.name}: the sheet is empty")
    names = [str(cell).strip() if cell is not None else "" for cell in header]
    wanted = {"ConvID": "ConvID"} | {model: prefix + model for model in RESPONSE_MODELS}
    missing = [column for column in wanted.values() if column not in names]
    if missing:
        raise DataError(f"{path.name}: no column {missing[0]!r} in the sheet (it has {', '.join(names[:14])})")
    position = {key: names.index(column) for key, column in wanted.items()}
    conversations: list[int] = []
    columns: dict[str, dict[str, list[Any]]] = {model: {"ratings": [], "status": []} for model in RESPONSE_MODELS}
    for number, row in enumerate(rows, start=2):
        if all(cell is None for cell in row):
            continue
        if len(conversations) >= MAX_ROWS:
            raise DataError(f"{path.name}: more than {MAX_ROWS} rows; this is not MentalAlign's workbook")
        conversation = _number(row[position["ConvID"]] if position["ConvID"] < len(row) else None)
        if conversation is None or conversation != int(conversation):
            raise DataError(f"{path.name}: row {number} has no ConvID number")
        conversations.append(int(conversation))
        for model in RESPONSE_MODELS:
            index = position[model]
            cell = row[index] if index < len(row) else None
            if expert:
                status, ratings = read_expert_cell(cell, f"{path.name} row {number}, column {prefix + model}")
            else:
                status, ratings = read_judge_cell(cell)
            columns[model]["ratings"].append(ratings)
            columns[model]["status"].append(status)
    if len(set(conversations)) != len(conversations):
        raise DataError(f"{path.name}: a ConvID appears twice")
    return {"conversations": conversations, "columns": columns}


def _is_grid(kept: Any) -> bool:
    if not isinstance(kept, dict) or not isinstance(kept.get("conversations"), list):
        return False
    columns = kept.get("columns")
    n = len(kept["conversations"])
    return (
        isinstance(columns, dict)
        and set(columns) == set(RESPONSE_MODELS)
        and all(len(c.get("ratings", ())) == n and len(c.get("status", ())) == n for c in columns.values())
    )


@dataclass(frozen=True)
class Grid:
    """One rater's ratings of the grid: per response model, a (conversations x 7) array (NaN: no rating)."""

    rater: str
    conversations: tuple[int, ...]
    ratings: Mapping[str, Any]  # model -> numpy array (len(conversations), len(ATTRIBUTES))
    status: Mapping[str, Any]  # model -> numpy int array of cell statuses
    file: FetchedFile

    def status_counts(self) -> dict[str, int]:
        import numpy as np

        total = np.concatenate([np.asarray(s) for s in self.status.values()])
        return {name: int((total == code).sum()) for code, name in STATUS_NAMES.items()}


def _grid(rater: str, fetched: FetchedFile, document: Mapping[str, Any]) -> Grid:
    import numpy as np

    width = len(ATTRIBUTES)
    missing = [None] * width

    def array(rows: list[Row | None]) -> Any:
        return np.array([row if row is not None else missing for row in rows], dtype=float).reshape(-1, width)

    ratings = {model: array(c["ratings"]) for model, c in document["columns"].items()}
    status = {model: np.asarray(c["status"], dtype=np.int8) for model, c in document["columns"].items()}
    return Grid(rater, tuple(document["conversations"]), ratings, status, fetched)


def read_grid(key: str, rater: str, *, allow_unverified: bool = False) -> Grid:
    """The grid of the pinned workbook `key`, fetched and verified, parsed once for these bytes."""
    fetched = fetch_pinned(PINS, key, allow_unverified=allow_unverified)
    expert = key == HUMAN_KEY
    prefix = "human_response_" if expert else "judge_response_"
    document = parsed_document(fetched, READER, lambda path: parse_workbook(path, prefix, expert=expert), _is_grid)
    return _grid(rater, fetched, document)


@dataclass(frozen=True)
class MentalAlign:
    """The experts' grid and each judge's, on the conversations all of them have (aligned by ConvID)."""

    human: Grid
    judges: Mapping[str, Grid]  # JUDGES key -> grid
    conversations: tuple[int, ...]

    def human_ratings(self, model: str) -> Any:
        return _aligned(self.human, model, self.conversations)

    def judge_ratings(self, judge: str, model: str) -> Any:
        return _aligned(self.judges[judge], model, self.conversations)

    def judge_status(self, judge: str, model: str) -> Any:
        grid = self.judges[judge]
        index = {c: i for i, c in enumerate(grid.conversations)}
        return grid.status[model][[index[c] for c in self.conversations]]

    def files(self) -> list[dict[str, Any]]:
        return [grid.file.as_record() for grid in (self.human, *self.judges.values())]


def _aligned(grid: Grid, model: str, conversations: tuple[int, ...]) -> Any:
    if grid.conversations == conversations:
        return grid.ratings[model]
    index = {c: i for i, c in enumerate(grid.conversations)}
    return grid.ratings[model][[index[c] for c in conversations]]


@cache
def load_mentalalign(allow_unverified: bool = False) -> MentalAlign:
    """Every MentalAlign workbook, read once per process (and parsed once per set of bytes)."""
    human = read_grid(HUMAN_KEY, "human", allow_unverified=allow_unverified)
    judges = {name: read_grid(f.key, name, allow_unverified=allow_unverified) for name, f in JUDGES.items()}
    shared = set(human.conversations).intersection(*(set(g.conversations) for g in judges.values()))
    if not shared:
        raise DataError("the MentalAlign workbooks share no ConvID")
    return MentalAlign(human, judges, tuple(c for c in human.conversations if c in shared))
