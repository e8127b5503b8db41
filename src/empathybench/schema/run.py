"""run.json: what was run, with which software, model, options and data, and the accounting of every session."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt

RUN_SCHEMA_ID = "https://empathybench.invalid/schemas/run-1.json"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ModelInfo(_Open):
    """A model (or judge) as given on the command line, with what its backend says about itself (never a key)."""

    spec: str


class RunOptionsInfo(_Open):
    preset: str
    limit: int | None
    seed: int
    max_concurrency: int | None
    benchmark_options: dict[str, str]
    allow_unverified: bool
    cache: bool
    request_timeout_s: float | None = None


class DataFileInfo(_Open):
    key: str
    sha256: str | None
    verified: bool
    source: str | None = None


class InstrumentRunInfo(_Open):
    config: dict[str, Any] = Field(
        description="the instrument's config as run (its config model dumped, plus what the instrument adds, e.g. "
        "the preset and the items); part of the run's fingerprint"
    )
    n_items: NonNegativeInt
    data_files: list[DataFileInfo]


class SessionInfo(_Open):
    n: int
    started: str | None = None
    status: str | None = None
    finished: str | None = None
    usage: dict[str, Any] | None = None
    elapsed_s: float | None = None


class RunInfo(_Open):
    """run.json: written when a run starts and rewritten when each session ends."""

    model_config = ConfigDict(extra="allow", title="EmpathyBench run.json", json_schema_extra={"$id": RUN_SCHEMA_ID})

    fingerprint: str
    status: str = Field(
        description="running, complete, incomplete, failed, interrupted or budget (stopped by --max-cost)"
    )
    created: str | None
    finished: str | None = None
    empathybench_version: str
    python: str
    platform: str
    packages: dict[str, str | None]
    model: ModelInfo
    judge: ModelInfo
    options: RunOptionsInfo
    benchmarks: dict[str, InstrumentRunInfo]
    skipped: dict[str, str] = Field(default_factory=dict)
    sessions: list[SessionInfo] = Field(default_factory=list)
    usage: dict[str, Any] | None = None
    elapsed_s: NonNegativeFloat | None = None
    concurrency: dict[str, Any] | None = None
    repeats: dict[str, Any] | None = None
    error: str | None = None
