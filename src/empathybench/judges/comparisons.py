"""A user's own `judge compare` results as a source of judge evidence: each `judge-comparison.json`
(run/judge_compare.py; the envelope is every instrument's, docs/judges.md) names its instrument, its judge, the
verdict against the instrument's margin, and carries the figures its instrument names for `empathybench judges`
(`evidence`: the judge's agreement with the instrument's published judge, each {"against", "aspect", "statistic",
"value", "ci95", "n", "unit", "headline"}).

A result is read bounded and checked like a validation report (judges/validation_reports.py): a file of the wrong
kind or format is one UserError line; a result written before results carried `evidence` is left out with a note
saying to run the comparison again (its verdicts come from the judgements file). Nothing here names an instrument.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.formatting import number, printable
from empathybench.judges.evidence import Evidence
from empathybench.judges.validation_reports import MAX_FIGURES, evidence_row, files, finite, read_json, text

KIND = "judge_comparison"  # what run/judge_compare.py writes as `kind`
FORMAT = 1  # the result format this reads (run/judge_compare.py RESULT_FORMAT)
VERDICTS = ("consistent", "differs", "inconclusive", None)


def is_comparison(document: Any) -> bool:
    return isinstance(document, dict) and document.get("kind") == KIND


def check_comparison(document: Any, path: Path) -> dict[str, Any]:
    """The result if it is a `judge compare` result of the format read here; else one UserError line."""
    where = printable(path, 200)
    if not is_comparison(document):
        raise UserError(f'{where} is not a `judge compare` result (no "kind": "{KIND}")')
    if document.get("format") != FORMAT:
        raise UserError(
            f"{where} is judge comparison format {printable(document.get('format'), 20)}; this EmpathyBench reads "
            f"format {FORMAT} (run the same `judge compare` again: its verdicts come from the judgements file)"
        )
    judge = document.get("judge")
    if not isinstance(document.get("instrument"), str) or not isinstance(judge, dict):
        raise UserError(f"{where}: a judge comparison names its instrument and its judge")
    if document.get("verdict") not in VERDICTS:
        raise UserError(f"{where}: the verdict is not one of consistent, differs, inconclusive or null")
    return document


def _margin(document: Mapping[str, Any]) -> str:
    margin = document.get("margin")
    value = finite(margin.get("value")) if isinstance(margin, Mapping) else None
    return f"margin ±{number(value)}" if value is not None else "no margin"


class JudgeComparisonsSource:
    """The given `judge compare` results: per result, its judge's figures (module docstring)."""

    name = "judge-compare"
    title = (
        "Your `judge compare` results: the judge you chose against an instrument's published judge, on the items it "
        "judged"
    )

    def __init__(self, paths: Sequence[Path] = ()) -> None:
        self.rows: list[Evidence] = []
        self.notes: list[str] = []
        self.results: list[dict[str, Any]] = []
        for path in files(paths):
            self.add(path, read_json(path, "judge compare result"))

    def add(self, path: Path, document: Any) -> None:
        """One result read (checked here)."""
        result = check_comparison(document, path)
        judge_entry = result["judge"]
        judge = text(judge_entry.get("model") or judge_entry.get("spec") or "unknown judge")
        instrument = text(result["instrument"])
        verdict = text(result.get("verdict") or "none")
        summary = (
            f"{printable(path, 120)}: {instrument} judge compare of {judge}: verdict {verdict} ({_margin(result)}); "
            f"what was judged: {text(result.get('scope'))}"
        )
        figures = result.get("evidence")
        if not isinstance(figures, list):
            self.notes.append(
                f"{printable(path, 120)}: written before results carried their evidence; run the same `judge compare` "
                "again (its verdicts come from the judgements file) to add it"
            )
            return
        self.notes.append(summary)
        base = f"{instrument} judge compare, your file {printable(path.name, 80)}"
        rows = [
            evidence_row(
                figure,
                judge,
                self.name,
                f"verdict {verdict} ({_margin(result)}); {base}"
                if isinstance(figure, Mapping) and figure.get("headline") is True
                else base,
                path,
            )
            for figure in figures[:MAX_FIGURES]
        ]
        self.rows.extend(rows)
        self.results.append(
            {
                "file": printable(path, 300),
                "instrument": instrument,
                "judge": judge,
                "verdict": verdict,
                "evidence": [row.as_record() for row in rows],
            }
        )

    def evidence(self) -> list[Evidence]:
        return list(self.rows)

    def detail(self) -> dict[str, Any]:
        return {"results": self.results, "notes": list(self.notes)}
