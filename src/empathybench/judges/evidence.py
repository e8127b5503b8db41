"""The judge evidence table: per judge model and evidence source, the agreement with people (or with a published
judge), its interval, n, the unit (items, models, chunks or conversations) and the source.

A source of evidence is anything with a name, a title and two methods (`EvidenceSource`): `evidence()` gives its
rows, `detail()` its full JSON-able document (tables, reproductions). Built in: MentalAlign-70k
(`MentalAlignSource`) and the atlas's published boards that rated the same models under two judges
(judges/boards.py). Given by the user: `judge validate --out` reports (judges/validation_reports.py) and
`judge compare` results (judges/comparisons.py), told apart by their content (judges/user_files.py).
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

# What n counts: rated items (replies), rated models, or a conversation's chunks and whole conversations (where a
# judge rates a conversation chunk by chunk, then as a whole).
Unit = Literal["item", "model", "chunk", "conversation"]
UNITS: tuple[Unit, ...] = ("item", "model", "chunk", "conversation")
FIELDS = ("judge", "source", "against", "aspect", "statistic", "value", "ci95", "n", "unit", "headline", "note")


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
    n: int  # how many of the unit are behind the figure
    unit: Unit
    headline: bool = False  # the figure the summary table shows for this judge and source
    note: str = ""

    def as_record(self) -> dict[str, Any]:
        record = asdict(self)
        record["ci95"] = list(self.ci95) if self.ci95 is not None else None
        return record


def is_records(kept: Any) -> bool:
    """A list of `Evidence.as_record()`s (e.g. kept in the cache)."""
    return isinstance(kept, list) and all(isinstance(r, dict) and set(r) == set(FIELDS) for r in kept)


def from_record(record: Mapping[str, Any]) -> Evidence:
    ci = record["ci95"]
    return Evidence(**{**record, "ci95": (ci[0], ci[1]) if ci else None})


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
