"""A user's own `judge validate --out FILE` reports as a source of judge evidence: each report carries the figures its
instrument names for `empathybench judges` (`evidence`, written by run/judge.py), the judge and the validation.

A file or a directory may be given (a directory: every `*.json` report directly in it). A report is read bounded and
checked: a file that is not a judge validation report is one UserError line; a report written before reports carried
`evidence` is left out with a note saying to run the validation again.
"""

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.formatting import printable
from empathybench.judges.evidence import Evidence

MAX_REPORT_BYTES = 32 * 1024 * 1024  # a report is a few hundred kB
MAX_REPORTS = 1000
MAX_TEXT = 200  # a name or label read from a report


def _files(paths: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.glob("*.json") if p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise UserError(f"{path}: no such report file or directory (give `judge validate --out FILE` files)")
    if len(files) > MAX_REPORTS:
        raise UserError(f"{len(files)} report files; at most {MAX_REPORTS} at once")
    return files


def read_report(path: Path) -> dict[str, Any]:
    """A judge validation report, read bounded; anything else is one UserError line."""
    try:
        size = path.stat().st_size
        if size > MAX_REPORT_BYTES:
            raise UserError(f"{path} is {size} bytes; a judge validation report is at most {MAX_REPORT_BYTES}")
        report = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{path} is not a JSON judge validation report ({printable(exc, 120)})") from None
    if not isinstance(report, dict) or not isinstance(report.get("judge"), dict) or "n_failed_calls" not in report:
        raise UserError(f"{path} is not a `judge validate --out` report (no judge, no call counts)")
    return report


def _text(value: Any) -> str:
    return printable(value if value is not None else "", MAX_TEXT)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _interval(value: Any) -> tuple[float, float] | None:
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    low, high = _number(value[0]), _number(value[1])
    return (low, high) if low is not None and high is not None else None


def _row(figure: Any, judge: str, source: str, validation: str, where: Path) -> Evidence:
    if not isinstance(figure, Mapping):
        raise UserError(f"{where}: an evidence entry is not an object")
    n = figure.get("n")
    unit = figure.get("unit")
    return Evidence(
        judge=judge,
        source=source,
        against=_text(figure.get("against")),
        aspect=_text(figure.get("aspect")),
        statistic=_text(figure.get("statistic")),
        value=_number(figure.get("value")),
        ci95=_interval(figure.get("ci95")),
        n=int(n) if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0,
        unit=unit if unit in ("item", "model") else "item",
        headline=figure.get("headline") is True,
        note=f"{validation}, your report {printable(where.name, 80)}",
    )


class ValidationReportsSource:
    """The given reports: per report, its judge's figures (module docstring)."""

    name = "judge-validate"
    title = "Your `judge validate` reports: the judge you chose against the instruments' human ratings"

    def __init__(self, paths: Sequence[Path]) -> None:
        self.rows: list[Evidence] = []
        self.notes: list[str] = []
        self.reports: list[dict[str, Any]] = []
        for path in _files(paths):
            report = read_report(path)
            judge_entry = report["judge"]
            judge = _text(judge_entry.get("model") or judge_entry.get("spec") or "unknown judge")
            validation = _text(report.get("validation") or "judge validate")
            figures = report.get("evidence")
            if not isinstance(figures, list):
                self.notes.append(
                    f"{printable(path, 120)}: written before reports carried their evidence; run the same "
                    "`judge validate` again (its answers come from the cache) to add it"
                )
                continue
            rows = [_row(figure, judge, self.name, validation, path) for figure in figures[:100]]
            self.rows.extend(rows)
            self.reports.append(
                {
                    "file": str(path),
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
