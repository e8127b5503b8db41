"""The options of one `empathybench run` as the CLI gives them (run/plan.py checks them and makes the run's plan)."""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from empathybench.engine.engine import DEFAULT_REQUEST_TIMEOUT_S, RetryPolicy
from empathybench.errors import UserError
from empathybench.instruments.protocol import DemoPreset, Instrument
from empathybench.instruments.registry import all_benchmarks, resolve_benchmarks
from empathybench.models.registry import ModelSpec


@dataclass
class RunOptions:
    model: str = "local"
    benchmarks: list[str] | None = None
    preset: str = "quick"
    limit: int | None = None
    out: Path | None = None
    max_concurrency: int | None = None
    seed: int = 0
    base_url: str | None = None
    allow_unverified: bool = False
    options: dict[str, str] = field(default_factory=dict)
    use_cache: bool = True
    show_progress: bool = True
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    judge: str | None = None  # model spec of the judge for judged benchmarks; None: the model judges itself
    judge_base_url: str | None = None  # `--judge-base-url`: the judge's server (None: its provider's default)
    simulator: str | None = None  # model spec of the simulated person (`--simulator`); None: the model plays it
    simulator_args: list[str] = field(default_factory=list)  # `--simulator-arg KEY=VALUE`
    simulator_base_url: str | None = None  # `--simulator-base-url`
    simulator_price: str | None = None  # `--simulator-price input=X,output=Y[,cached=Z]`
    request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S  # bound on one whole request (`--timeout`)
    model_args: list[str] = field(default_factory=list)  # `-M KEY=VALUE` for the model under test
    judge_args: list[str] = field(default_factory=list)  # `--judge-arg KEY=VALUE` for the judge
    max_cost: float | None = None  # `--max-cost USD`: the run's budget over all its sessions (run/cost.py)
    price: str | None = None  # `--price input=X,output=Y[,cached=Z]`: the model's USD per million tokens
    judge_price: str | None = None  # `--judge-price ...`: the judge's
    batch: bool = False  # `--batch`: requests go through the providers' batch APIs (engine/batch.py)
    batch_poll_interval_s: float = 30.0  # `--batch-poll-interval`
    batch_fallback: str = "live"  # `--batch-fallback`: a request no batch answered is asked live, or fails
    max_reply_bytes: int | None = None  # `--max-reply-bytes`: every reply's limit (models/reply_bounds.py)


# Up-front bounds of the run's own options (benchmark options carry theirs in their configs).
MAX_REPEATS = 100  # each repeat is a whole run in its own folder
MAX_CONCURRENCY = 256


def check_max_concurrency(value: int | None) -> None:
    """--max-concurrency within 1..MAX_CONCURRENCY (None: not given), or a one-line UserError."""
    if value is not None and not 1 <= value <= MAX_CONCURRENCY:
        raise UserError(f"--max-concurrency must be between 1 and {MAX_CONCURRENCY}, not {value}")


MAX_SEED = 2**32 - 1  # llama.cpp and numpy take unsigned 32-bit seeds
BATCH_PROVIDERS = ("openai", "anthropic")  # the providers whose batch APIs `--batch` speaks (engine/batch.py)
BATCH_FALLBACKS = ("live", "fail")  # what becomes of a request that no batch answered (engine/batch.py)


def check_cost_and_batch(
    max_cost: float | None, batch: bool, batch_poll_interval_s: float, specs: Sequence[ModelSpec]
) -> None:
    """`--max-cost`, `--batch` and `--batch-poll-interval` of any command that calls models (`specs`)."""
    if max_cost is not None and not (math.isfinite(max_cost) and max_cost > 0):
        raise UserError(f"--max-cost must be a positive number of USD, not {max_cost}")
    if not 0 < batch_poll_interval_s <= 3600:
        raise UserError(f"--batch-poll-interval must be above 0 and at most 3600 s, not {batch_poll_interval_s}")
    no_batch_api = [str(spec) for spec in specs if spec.provider not in BATCH_PROVIDERS]
    if batch and no_batch_api:
        raise UserError(
            f"--batch needs a provider with a batch API (openai/, anthropic/); {no_batch_api[0]} has none: "
            "run it without --batch"
        )


def check_base_url(url: str, what: str) -> None:
    """A server URL the HTTP client can use; the URL itself is not echoed, it may carry a key."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        port = parts.port  # ValueError when out of range or not a number
    except ValueError as exc:
        raise UserError(f"{what} is not a usable URL ({exc}); e.g. http://127.0.0.1:8000/v1") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"{what} must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1")
    if port == 0:
        raise UserError(f"{what} has port 0; ports are 1-65535")


# The "demo" preset: what `empathybench run` with no --preset, --bench or --limit does on the embedded model. It
# shows every instrument working end to end in about two minutes on 2 cores (the quick presets took 14 min there):
# each instrument's quick preset cut down by its `demo` (items, options; user --option values win). Its figures
# mean nothing.
DEMO_PRESET = "demo"
PRESETS = ("quick", "paper", "full", DEMO_PRESET)


def demo_selection() -> dict[str, DemoPreset]:
    """What a bare demo run runs: each instrument of the default run and each that declares a demo cut, with its
    cut, in run order."""
    return {benchmark.name: benchmark.demo for benchmark in demo_benchmarks()}


def demo_benchmarks() -> list[Instrument[Any, Any]]:
    """The instruments of a bare demo run: those of a run without --bench, and those that stay out of it but
    whose demo cut says `in_bare_demo` (e.g. one shown self-judged in the demo only)."""
    return [b for b in all_benchmarks().values() if b.in_default_run or b.demo.in_bare_demo]


def left_out_of_demo() -> list[tuple[str, str]]:
    """(name, why) of each instrument that stays out of the bare demo and says why (`DemoPreset.left_out_because`)."""
    shown = {benchmark.name for benchmark in demo_benchmarks()}
    return [
        (benchmark.name, benchmark.demo.left_out_because)
        for benchmark in all_benchmarks().values()
        if benchmark.name not in shown and benchmark.demo.left_out_because
    ]


def run_benchmarks(options: RunOptions) -> list[Instrument[Any, Any]]:
    """The instruments a run runs: those named with --bench; without --bench, the default run's, or the demo's."""
    if not options.benchmarks and options.preset == DEMO_PRESET:
        return demo_benchmarks()
    return resolve_benchmarks(options.benchmarks)


def default_preset(model: str, benchmarks: list[str] | None, limit: int | None) -> str:
    """The preset when none is given: the demo for a bare run on the embedded model, else quick."""
    return DEMO_PRESET if model == "local" and not benchmarks and limit is None else "quick"
