"""The options of one `empathybench run`, checked up front before any data is fetched or any model is called."""

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from empathybench.engine.engine import DEFAULT_REQUEST_TIMEOUT_S, RetryPolicy
from empathybench.errors import UserError
from empathybench.instruments.protocol import DemoPreset
from empathybench.instruments.registry import all_benchmarks, resolve_benchmarks
from empathybench.models.registry import ModelSpec, check_model_args, parse_model_spec
from empathybench.models.reply_bounds import reply_limit_override
from empathybench.paths import cache_dir, check_writable_dir


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
MAX_SEED = 2**32 - 1  # llama.cpp and numpy take unsigned 32-bit seeds
BATCH_PROVIDERS = ("openai", "anthropic")  # the providers whose batch APIs `--batch` speaks (engine/batch.py)
BATCH_FALLBACKS = ("live", "fail")  # what becomes of a request that no batch answered (engine/batch.py)


def check_run_options(options: RunOptions, repeats: int = 1) -> None:
    """Every mistake in a run's options as one UserError, before any data is fetched or any model is called."""
    if options.preset not in PRESETS:
        raise UserError(f"unknown preset {options.preset!r}; choose {', '.join(PRESETS[:-1])} or {PRESETS[-1]}")
    if not 1 <= repeats <= MAX_REPEATS:
        raise UserError(f"--repeats must be between 1 and {MAX_REPEATS}, not {repeats}")
    if options.limit is not None and options.limit < 1:
        raise UserError(f"--limit must be at least 1, not {options.limit}")
    if options.max_concurrency is not None and not 1 <= options.max_concurrency <= MAX_CONCURRENCY:
        raise UserError(f"--max-concurrency must be between 1 and {MAX_CONCURRENCY}, not {options.max_concurrency}")
    highest_seed = MAX_SEED - (repeats - 1)
    if not 0 <= options.seed <= highest_seed:
        with_repeats = f" with --repeats {repeats}" if repeats > 1 else ""
        raise UserError(f"--seed must be between 0 and {highest_seed}{with_repeats}, not {options.seed}")
    specs = [parse_model_spec(options.model)] + ([parse_model_spec(options.judge)] if options.judge else [])
    check_model_args(specs[0], options.model_args, "--model-arg")
    check_cost_and_batch(options.max_cost, options.batch, options.batch_poll_interval_s, specs)
    if options.batch_fallback not in BATCH_FALLBACKS:
        raise UserError(f"--batch-fallback must be live or fail, not {options.batch_fallback[:40]!r}")
    reply_limit_override(options.max_reply_bytes)  # the option, else the environment variable: one line if wrong
    if options.judge_args and not options.judge:
        raise UserError("--judge-arg needs --judge (without it the model under test judges itself, with -M)")
    if options.judge:
        check_model_args(specs[1], options.judge_args, "--judge-arg")
    if options.base_url is not None:
        check_base_url(options.base_url, "--base-url")
    elif any(spec.provider == "openai" for spec in specs) and os.environ.get("OPENAI_BASE_URL"):
        check_base_url(os.environ["OPENAI_BASE_URL"], "OPENAI_BASE_URL")
    chosen = run_benchmarks(options)
    if not options.judge:
        needs_judge = [b.name for b in chosen if needs_a_judge(b, options.preset)]
        if needs_judge:
            raise UserError(f"{', '.join(needs_judge)} needs a judge: add --judge SPEC (it never judges itself)")
    _check_benchmark_options(options, chosen)
    if options.out is not None:
        check_writable_dir(options.out, "--out")
    else:
        check_writable_dir(Path("runs"), "the run directory's parent")
    if options.use_cache:
        where = cache_dir()
        try:
            check_writable_dir(where, "the cache directory")
        except UserError as exc:
            raise UserError(f"{exc}; set EMPATHYBENCH_CACHE_DIR to a writable directory or pass --no-cache") from None


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


def _check_benchmark_options(options: RunOptions, chosen: list[Any]) -> None:
    selected = [benchmark.name for benchmark in chosen]
    for key in options.options:
        name = key.split(".", 1)[0]
        if name in selected:
            continue
        # Only a mistake loads the other instruments (each import costs start-up): to name them in the message.
        known = all_benchmarks()
        if name not in known:
            raise UserError(f"--option {key}: there is no benchmark {name!r}; known: {', '.join(known)}")
        raise UserError(
            f"--option {key} is for {name}, which this run does not include (it runs {', '.join(selected)}); "
            f"add --bench {name} or drop the option"
        )
    for benchmark in chosen:
        if options.preset not in benchmark.presets and options.preset != DEMO_PRESET:
            raise UserError(
                f"benchmark {benchmark.name} has no preset {options.preset!r}; "
                f"choose one of {', '.join(benchmark.presets)}"
            )
        preset, _, scoped = benchmark_settings(options, benchmark)
        check = getattr(benchmark, "check_options", None)
        if check is not None:
            check(preset, scoped)


def benchmark_settings(options: RunOptions, benchmark: Any) -> tuple[str, int | None, dict[str, str]]:
    """The preset, item limit and `--option`s (without the instrument's prefix) one instrument runs with; the demo
    is its quick preset cut down (see demo_of), the user's --limit and --option values winning."""
    prefix = f"{benchmark.name}."
    scoped = {key.removeprefix(prefix): value for key, value in options.options.items() if key.startswith(prefix)}
    if options.preset != DEMO_PRESET:
        return options.preset, options.limit, scoped
    demo = demo_of(benchmark)
    return "quick", min(options.limit or demo.items, demo.items), {**demo.options, **scoped}


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


def demo_of(benchmark: Any) -> DemoPreset:
    """The demo's cut of an instrument (its `demo` attribute; without one, 3 items of its quick preset)."""
    return getattr(benchmark, "demo", None) or DemoPreset()


def demo_selection() -> dict[str, DemoPreset]:
    """What a bare demo run runs: each instrument of the default run and each that declares a demo cut, with its
    cut, in run order."""
    return {benchmark.name: demo_of(benchmark) for benchmark in demo_benchmarks()}


def demo_benchmarks() -> list[Any]:
    """The instruments of a bare demo run: those of a run without --bench, and those that stay out of it but
    whose demo cut says `in_bare_demo` (e.g. one shown self-judged in the demo only)."""
    return [b for b in all_benchmarks().values() if getattr(b, "in_default_run", True) or demo_of(b).in_bare_demo]


def run_benchmarks(options: RunOptions) -> list[Any]:
    """The instruments a run runs: those named with --bench; without --bench, the default run's, or the demo's."""
    if not options.benchmarks and options.preset == DEMO_PRESET:
        return demo_benchmarks()
    return resolve_benchmarks(options.benchmarks)


def needs_a_judge(benchmark: Any, preset: str) -> bool:
    """Whether the instrument refuses to run without --judge (in the demo, one whose cut is self-judged does not)."""
    if not getattr(benchmark, "requires_judge", False):
        return False
    return not (preset == DEMO_PRESET and demo_of(benchmark).self_judged)


def default_preset(model: str, benchmarks: list[str] | None, limit: int | None) -> str:
    """The preset when none is given: the demo for a bare run on the embedded model, else quick."""
    return DEMO_PRESET if model == "local" and not benchmarks and limit is None else "quick"
