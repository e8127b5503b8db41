"""A user's own `judge validate --out FILE` reports as a source of judge evidence: each report carries the figures its
instrument names for `empathybench judges` (`evidence`, written by run/judge.py), the judge and the validation.

A file or a directory may be given (a directory: every `*.json` report directly in it). A report is read bounded and
checked: a file that is not a judge validation report is one UserError line; a report written before reports carried
`evidence` is left out with a note saying to run the validation again. The reading and the rows are shared with the
other user files (`judge compare` results, judges/comparisons.py; judges/user_files.py tells them apart).
"""

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.formatting import printable
from empathybench.judges.evidence import UNITS, Evidence

MAX_REPORT_BYTES = 32 * 1024 * 1024  # a report is a few hundred kB
MAX_REPORTS = 1000
MAX_TEXT = 200  # a name or label read from a report
MAX_FIGURES = 100  # figures read from one file


def files(paths: Sequence[Path]) -> list[Path]:
    """The files given: each file, and every `*.json` directly in each directory."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if p.is_file())
            if not found:
                raise UserError(f"{printable(path, 200)} holds no .json report or result")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise UserError(
                f"{printable(path, 200)}: no such file or directory (give `judge validate --out` reports or "
                "`judge compare --out` directories)"
            )
    if len(files) > MAX_REPORTS:
        raise UserError(f"{len(files)} report files; at most {MAX_REPORTS} at once")
    return files


def read_json(path: Path, what: str = "judge validation report") -> Any:
    """A user's JSON file, read bounded; a file that cannot be read or is no JSON is one UserError line."""
    try:
        size = path.stat().st_size
        if size > MAX_REPORT_BYTES:
            raise UserError(f"{printable(path, 200)} is {size} bytes; a {what} is at most {MAX_REPORT_BYTES}")
        return json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read {printable(path, 200)}: {printable(exc.strerror or exc, 200)}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UserError(f"{printable(path, 200)} is not a JSON {what} ({printable(exc, 120)})") from None


def is_report(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("judge"), dict) and "n_failed_calls" in document


def read_report(path: Path) -> dict[str, Any]:
    """A judge validation report, read bounded; anything else is one UserError line."""
    report = read_json(path)
    if not is_report(report):
        raise UserError(f"{printable(path, 200)} is not a `judge validate --out` report (no judge, no call counts)")
    return report


def text(value: Any) -> str:
    return printable(value if value is not None else "", MAX_TEXT)


def finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def interval_of(value: Any) -> tuple[float, float] | None:
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    low, high = finite(value[0]), finite(value[1])
    return (low, high) if low is not None and high is not None else None


def evidence_row(figure: Any, judge: str, source: str, note: str, where: Path) -> Evidence:
    """One figure of a user's file (`evidence`: {"against", "aspect", "statistic", "value", "ci95", "n", "unit",
    "headline"}) as a row, every text bounded and made printable, anything out of shape left empty."""
    if not isinstance(figure, Mapping):
        raise UserError(f"{printable(where, 200)}: an evidence entry is not an object")
    n = figure.get("n")
    unit = figure.get("unit")
    return Evidence(
        judge=judge,
        source=source,
        against=text(figure.get("against")),
        aspect=text(figure.get("aspect")),
        statistic=text(figure.get("statistic")),
        value=finite(figure.get("value")),
        ci95=interval_of(figure.get("ci95")),
        n=int(n) if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0,
        unit=unit if unit in UNITS else "item",
        headline=figure.get("headline") is True,
        note=note,
    )


class ValidationReportsSource:
    """The given reports: per report, its judge's figures (module docstring)."""

    name = "judge-validate"
    title = "Your `judge validate` reports: the judge you chose against the instruments' human ratings"

    def __init__(self, paths: Sequence[Path] = ()) -> None:
        self.rows: list[Evidence] = []
        self.notes: list[str] = []
        self.reports: list[dict[str, Any]] = []
        for path in files(paths):
            self.add(path, read_report(path))

    def add(self, path: Path, report: Mapping[str, Any]) -> None:
        """One report read (`read_report`, or told apart by judges/user_files.py)."""
        judge_entry = report["judge"]
        judge = text(judge_entry.get("model") or judge_entry.get("spec") or "unknown judge")
        validation = text(report.get("validation") or "judge validate")
        figures = report.get("evidence")
        if not isinstance(figures, list):
            self.notes.append(
                f"{printable(path, 120)}: written before reports carried their evidence; run the same "
                "`judge validate` again (its answers come from the cache) to add it"
            )
            return
        note = f"{validation}, your report {printable(path.name, 80)}"
        rows = [evidence_row(figure, judge, self.name, note, path) for figure in figures[:MAX_FIGURES]]
        self.rows.extend(rows)
        self.reports.append(
            {
                "file": printable(path, 300),
                "validation": validation,
                "judge": judge,
                "n_failed_calls": report.get("n_failed_calls"),
                "evidence": [row.as_record() for row in rows],
            }
        )

    def evidence(self) -> list[Evidence]:
        return list(self.rows)

    def detail(self) -> dict[str, Any]:
        return {"reports": self.reports, "notes": list(self.notes)}
