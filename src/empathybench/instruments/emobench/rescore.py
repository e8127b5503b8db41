"""Rescore the released EmoBench runs (2024 protocol) from their result CSVs (spec §5.3, §7).

Layout: `<DIR>/**/data/{EU,EA}/Results/<model>/<model>-<lang>[_cot][1|2|3].csv` (a digit = a permuted order).
Per file, each item's stored predictions (`Pred i`, `Emo Pred i`, `Cause Pred i`) are reduced by the upstream vote;
a file counts only with exactly 200 rows; a condition's score is the plain mean of its files' accuracies.
Only each CSV's own label columns are used, never today's items: the older EA files are not aligned with them.
"""

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.text import Text

from empathybench.errors import UserError
from empathybench.formatting import fit_columns, number
from empathybench.instruments.emobench.data import EU_CATEGORY_QIDS
from empathybench.instruments.emobench.score import majority_vote

ITEMS_PER_FILE = 200
_FILE_NAME = re.compile(r"^(?P<model>.+)-(?P<lang>en|zh)(?P<cot>_cot)?(?P<order>[1-3])?\.csv$")
_TASKS = ("EU", "EA")


def _cell_index(value: str | None) -> int | None:
    """A stored prediction or label: '2', '2.0', '-1'; empty or unreadable cells are None."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    if number != number or number != int(number):  # NaN or fractional
        return None
    return int(number)


@dataclass(frozen=True)
class FileScore:
    path: Path
    task: str
    model: str
    language: str
    cot: bool
    order: int  # 0 = original order, 1..3 = data_permute_<n>
    correct: tuple[bool, ...]  # joint (EU) or action (EA), per row
    emotion_correct: tuple[bool, ...] = ()
    cause_correct: tuple[bool, ...] = ()


@dataclass
class RescoreResult:
    rows: list[dict[str, Any]]
    skipped: list[str] = field(default_factory=list)  # "<file>: reason", for files left out of every mean


def _sample_numbers(header: Sequence[str], prefix: str) -> list[int]:
    numbers = []
    for name in header:
        match = re.fullmatch(rf"{prefix}(\d+)", name.strip())
        if match:
            numbers.append(int(match.group(1)))
    return sorted(numbers)


def _is_correct(votes: int, label: int | None) -> bool:
    return label is not None and votes == label


def score_file(path: Path, task: str, model: str, language: str, cot: bool, order: int) -> FileScore | str:
    """One result CSV scored by the upstream vote, or the reason it does not count."""
    csv.field_size_limit(2**31 - 1)  # CoT replies are long cells
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            header = [name.strip() for name in (reader.fieldnames or [])]
            rows = [{(k or "").strip(): v for k, v in row.items()} for row in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        return f"unreadable ({type(exc).__name__})"
    if len(rows) != ITEMS_PER_FILE:
        return f"{len(rows)} rows, not {ITEMS_PER_FILE} (upstream drops such files from the mean)"
    if task == "EA":
        samples = _sample_numbers(header, "Pred ")
        if "Label" not in header or not samples:
            return "no Label / Pred columns"
        correct = tuple(
            _is_correct(majority_vote(_cell_index(row.get(f"Pred {n}")) for n in samples), _cell_index(row["Label"]))
            for row in rows
        )
        return FileScore(path, task, model, language, cot, order, correct)
    emo_samples = _sample_numbers(header, "Emo Pred ")
    cause_samples = _sample_numbers(header, "Cause Pred ")
    if "Emo Label" not in header or "Cause Label" not in header or not emo_samples or not cause_samples:
        return "no Emo/Cause Label or Pred columns"
    emotion = tuple(
        _is_correct(
            majority_vote(_cell_index(row.get(f"Emo Pred {n}")) for n in emo_samples), _cell_index(row["Emo Label"])
        )
        for row in rows
    )
    cause = tuple(
        _is_correct(
            majority_vote(_cell_index(row.get(f"Cause Pred {n}")) for n in cause_samples),
            _cell_index(row["Cause Label"]),
        )
        for row in rows
    )
    joint = tuple(e and c for e, c in zip(emotion, cause, strict=True))
    return FileScore(path, task, model, language, cot, order, joint, emotion, cause)


def _percent(flags: Sequence[bool]) -> float:
    return 100.0 * sum(flags) / len(flags)


def _mean_percent(files: Sequence[FileScore], pick: str, positions: range | None = None) -> float:
    """Plain mean over files of each file's accuracy (percent), as upstream averages its orders."""
    values = []
    for score in files:
        flags = getattr(score, pick)
        if positions is not None:
            flags = tuple(flags[i] for i in positions)
        values.append(_percent(flags))
    return sum(values) / len(values)


def _condition_row(task: str, model: str, language: str, cot: bool, files: list[FileScore]) -> dict[str, Any]:
    if not files:
        accuracy = emotion = cause = None
        by_category: dict[str, float] | None = None
    else:
        accuracy = round(_mean_percent(files, "correct"), 2)
        emotion = round(_mean_percent(files, "emotion_correct"), 2) if task == "EU" else None
        cause = round(_mean_percent(files, "cause_correct"), 2) if task == "EU" else None
        by_category = None
        if task == "EU":  # EU rows are aligned with the qids; EA rows of older runs are not (spec §7)
            by_category = {
                name: round(_mean_percent(files, "correct", range(first - 1, last)), 2)
                for name, (first, last) in sorted(EU_CATEGORY_QIDS.items())
            }
    return {
        "task": task,
        "model": model,
        "language": language,
        "cot": cot,
        "accuracy": accuracy,
        "emotion_accuracy": emotion,
        "cause_accuracy": cause,
        "n_files": len(files),
        "by_category": by_category,
    }


def find_result_files(directory: Path) -> list[tuple[Path, str, str, str, bool, int]]:
    """(path, task, model, language, cot, order) of every result CSV under `directory` in the upstream layout."""
    found = []
    for path in sorted(directory.rglob("*.csv")):
        parts = path.relative_to(directory).parts
        if len(parts) < 4 or parts[-3] != "Results" or parts[-4] not in _TASKS:
            continue
        model = parts[-2]
        match = _FILE_NAME.match(path.name)
        if not match or match.group("model") != model:
            continue
        order = int(match.group("order") or 0)
        found.append((path, parts[-4], model, match.group("lang"), bool(match.group("cot")), order))
    return found


def rescore_directory(directory: Path) -> RescoreResult:
    """One row per (task, model, language, cot) found under `directory`; see the module docstring."""
    if not directory.is_dir():
        raise UserError(f"not a directory: {directory}")
    found = find_result_files(directory)
    if not found:
        raise UserError(f"no EmoBench result CSVs under {directory} (expected data/{{EU,EA}}/Results/<model>/*.csv)")
    groups: dict[tuple[str, str, str, bool], list[FileScore]] = {}
    skipped: list[str] = []
    for path, task, model, language, cot, order in found:
        key = (task, model, language, cot)
        groups.setdefault(key, [])
        scored = score_file(path, task, model, language, cot, order)
        if isinstance(scored, str):
            skipped.append(f"{path.relative_to(directory)}: {scored}")
        else:
            groups[key].append(scored)
    ordered = sorted(groups, key=lambda key: (_TASKS.index(key[0]), key[1].lower(), key[2], key[3]))
    return RescoreResult([_condition_row(*key, groups[key]) for key in ordered], skipped)


def condition_item_means(directory: Path, task: str, model: str, language: str, cot: bool) -> dict[str, float]:
    """Per row (qid for EU): the mean headline correctness over the condition's counted files, for intervals."""
    files = [
        scored
        for path, t, m, lang, c, order in find_result_files(directory)
        if (t, m, lang, c) == (task, model, language, cot)
        and isinstance(scored := score_file(path, t, m, lang, c, order), FileScore)
    ]
    if not files:
        return {}
    return {str(row + 1): sum(f.correct[row] for f in files) / len(files) for row in range(ITEMS_PER_FILE)}


def print_rows(rows: Sequence[dict[str, Any]], console: Any) -> None:
    """The rescored conditions as a terminal table (model names and paths are printed literally)."""
    from rich.table import Table

    def cell(value: float | None) -> str:
        return number(None if value is None else float(value), 2, missing="")

    table = Table("task", "model", "lang", "CoT", "accuracy %", "emotion %", "cause %", "files")
    table.columns[1].no_wrap = True  # whole model names: they identify the row
    for row in rows:
        table.add_row(
            row["task"],
            Text(row["model"]),
            row["language"],
            "yes" if row["cot"] else "no",
            cell(row["accuracy"]),
            cell(row["emotion_accuracy"]),
            cell(row["cause_accuracy"]),
            str(row["n_files"]),
        )
    fit_columns(table, console, {1: [str(row["model"]) for row in rows]})  # the other columns wrap before a name is cut
    console.print(table)
