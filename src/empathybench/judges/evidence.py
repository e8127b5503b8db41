"""The judge evidence table: per judge model and evidence source, the agreement with people (or with a published
judge), its interval, n, the unit (items or models) and the source.

A source of evidence is anything with a name, a title and two methods (`EvidenceSource`): `evidence()` gives its
rows, `detail()` its full JSON-able document (tables, reproductions). MentalAlign-70k is the first
(`MentalAlignSource`); a user's `judge validate --out` reports are the second (judges/validation_reports.py); the
EQ-Bench 3 boards' judge change and Spiral-Bench re-judging plug in the same way.
"""

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

Unit = Literal["item", "model"]


@dataclass(frozen=True)
class Evidence:
    """One figure of a judge's agreement with a reference."""

    judge: str  # the judge model, as its source names it
    source: str  # the evidence source's name (EvidenceSource.name)
    against: str  # what the judge is held to: "clinical experts", "human raters", "published judge <model>"
    aspect: str  # what was rated: an attribute, "overall", "all 7 attributes pooled"
    statistic: str  # e.g. "quadratic-weighted kappa", "ICC(C,1)", "Pearson r"
    value: float | None
    ci95: tuple[float, float] | None
    n: int  # items (unit "item") or rated models (unit "model") behind the figure
    unit: Unit
    headline: bool = False  # the figure the summary table shows for this judge and source
    note: str = ""

    def as_record(self) -> dict[str, Any]:
        record = asdict(self)
        record["ci95"] = list(self.ci95) if self.ci95 is not None else None
        return record


class EvidenceSource(Protocol):
    """A source of judge evidence (module docstring)."""

    name: str
    title: str

    def evidence(self) -> Sequence[Evidence]: ...

    def detail(self) -> dict[str, Any]: ...


def evidence_table(sources: Iterable[EvidenceSource]) -> dict[str, Any]:
    """The document of `empathybench judges --json`: every source's rows, its headline rows apart, and its detail."""
    rows: list[Evidence] = []
    details: dict[str, Any] = {}
    titles: dict[str, str] = {}
    for source in sources:
        rows.extend(source.evidence())
        details[source.name] = source.detail()
        titles[source.name] = source.title
    return {
        "format": "empathybench-judge-evidence",
        "format_version": 1,
        "sources": titles,
        "headline": [row.as_record() for row in rows if row.headline],
        "evidence": [row.as_record() for row in rows],
        "detail": details,
    }
