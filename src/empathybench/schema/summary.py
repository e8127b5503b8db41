"""summary.json (schema version 1): the envelope every instrument's result shares, as pydantic models.

Every key of schema 1 keeps its name and meaning. Instrument-specific figures stay as extra keys of an instrument's
entry (`extra="allow"`), so a reader gets the envelope typed and the details as they were written.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt

SUMMARY_SCHEMA_VERSION = 1
SUMMARY_SCHEMA_ID = "https://empathybench.invalid/schemas/summary-1.json"

# 95% interval [low, high]; null when it cannot be computed (e.g. no parsed item). A list, as written in JSON.
Interval = Annotated[
    list[float | None] | None,
    Field(
        min_length=2,
        max_length=2,
        description="95% interval [low, high]; null when it cannot be computed (e.g. no parsed item)",
    ),
]


class _Open(BaseModel):
    """A part of the contract that may carry more keys than it names (kept as written)."""

    model_config = ConfigDict(extra="allow")


class Reference(_Open):
    """The human norm or published context a value is read against."""

    kind: str
    label: str


class Metric(_Open):
    """A headline number. For a mean-type metric value = scale * mean(items) + offset and the interval is an item
    bootstrap; otherwise items is null and method says how the interval was made."""

    label: str
    value: float | None
    ci95: Interval
    n: NonNegativeInt
    unit: str
    higher_is_better: bool | None
    method: str
    items: dict[str, float] | None
    scale: float
    offset: float
    paired_test: Literal["paired_t", "wilcoxon", "mcnemar", "none"]
    reference: Reference | None


class Validity(_Open):
    """What the numbers are worth (report/validity.py): the first that applies of invalid (the instrument's own rule
    rejects the run), insufficient (no headline or fewer than half the items parsed), self-judged (no --judge),
    self-simulated (no --simulator); else valid."""

    status: Literal["valid", "invalid", "insufficient", "self-judged", "self-simulated", "skipped"]
    label: str
    reasons: list[str]


class InstrumentSummary(_Open):
    """One instrument's result: the envelope below, and its own figures as further keys."""

    status: Literal["complete", "incomplete"]
    score: float | None
    score_name: str | None = None
    score_ci95: Interval
    headline_metric: str | None = Field(None, description="the key in metrics of the ONE headline figure")
    score_metric: str | None = None
    headline_note: str | None = None
    n_items: NonNegativeInt
    n_parsed: NonNegativeFloat | None = None
    n_failed_calls: NonNegativeInt
    metrics: dict[str, Metric] = Field(default_factory=dict)
    validity: Validity | None = None

    @property
    def headline(self) -> Metric | None:
        """The headline metric (None when the instrument names none or it is missing)."""
        return self.metrics.get(self.headline_metric) if self.headline_metric else None


class SkippedSummary(_Open):
    """An instrument that could not run (e.g. its data is unavailable)."""

    status: Literal["skipped"]
    error: str
    validity: Validity | None = None


class ProfileRow(_Open):
    benchmark: str
    title: str
    question: str | None = None
    status: str | None
    validity: Validity | None = None
    note: str | None = None
    metric: str | None
    label: str | None = None
    value: float | None
    ci95: Interval
    n: int | None = None
    unit: str | None = None
    reference: dict[str, Any] | None


class Usage(_Open):
    calls: NonNegativeInt
    cache_hits: NonNegativeInt
    retries: NonNegativeInt
    prompt_tokens: NonNegativeInt
    completion_tokens: NonNegativeInt


class RepeatedMetric(_Open):
    values: list[float | None]
    mean: float | None
    sd: float | None


class Repeats(_Open):
    """Run-to-run variation over --repeats N runs with seeds seed..seed+N-1."""

    n: Annotated[int, Field(ge=2)]
    seeds: list[int] | None = Field(None, description="the seed of each repeat, in order")
    runs: list[str]
    metrics: dict[str, RepeatedMetric]


class RunSummary(_Open):
    """summary.json: the result of one `empathybench run`: every instrument's figures, each headline number with its
    95% interval, the EI profile, and usage."""

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        title="EmpathyBench summary.json",
        json_schema_extra={"$id": SUMMARY_SCHEMA_ID},
    )

    schema_: str | None = Field(None, alias="$schema")
    schema_version: Literal[1]
    model: str = Field(description="model spec as given to --model (never a key)")
    preset: Literal["quick", "paper", "full", "demo"]
    run_dir: str
    benchmarks: dict[str, InstrumentSummary | SkippedSummary] = Field(
        description="one entry per instrument, keyed by its name"
    )
    profile: list[ProfileRow]
    repeats: Repeats | None = None
    usage: Usage
    elapsed_s: NonNegativeFloat = Field(description="seconds, summed over every session of the run")
    session: dict[str, Any] | None = Field(
        None,
        description="the latest session alone (n, started, finished, status, usage, elapsed_s); usage and elapsed_s "
        "above are totals over all sessions (run.json lists them)",
    )
