"""The files a user gives `empathybench judges`: `judge validate --out` reports and `judge compare` results (or the
directories holding them, e.g. a `judge compare --out` directory), told apart by their content. Every file is read
once, bounded, before anything is computed; a file that is neither is one UserError line."""

from collections.abc import Sequence
from pathlib import Path

from empathybench.errors import UserError
from empathybench.formatting import printable
from empathybench.judges.comparisons import JudgeComparisonsSource, is_comparison
from empathybench.judges.evidence import EvidenceSource
from empathybench.judges.validation_reports import ValidationReportsSource, files, is_report, read_json


def user_sources(paths: Sequence[Path]) -> list[EvidenceSource]:
    """The sources of the given files: validation reports, then comparison results (each only when given)."""
    reports, comparisons = ValidationReportsSource(), JudgeComparisonsSource()
    for path in files(paths):
        document = read_json(path, "judge validate report or judge compare result")
        if is_comparison(document):
            comparisons.add(path, document)
        elif is_report(document):
            reports.add(path, document)
        else:
            raise UserError(
                f"{printable(path, 200)} is neither a `judge validate --out` report (no judge, no call counts) nor a "
                "`judge compare` result (judge-comparison.json)"
            )
    sources: list[EvidenceSource] = []
    if reports.reports or reports.notes:
        sources.append(reports)
    if comparisons.results or comparisons.notes:
        sources.append(comparisons)
    return sources
