"""`empathybench run --dry-run`: the run's requests, tokens and cost, from its real item code, without a model call.

The instruments are prepared exactly as `run` prepares them, then every item runs against `DryRunBackend` (the
canned answers, in process): no network, no response cache, no run directory (see run/cost.py for the estimates).
"""

import asyncio
from typing import Any

from rich.console import Console

from empathybench.engine.engine import Engine, RunStats
from empathybench.run.cost import DryRunBackend, dry_run_items, estimate_record, run_prices
from empathybench.run.execute import prepare_benchmarks
from empathybench.run.options import RunOptions, check_run_options, run_benchmarks


def dry_run(options: RunOptions, console: Console) -> dict[str, Any]:
    """What `options` would ask, in requests, tokens and USD, without calling any model (JSON-able)."""
    check_run_options(options)
    prices = run_prices(options)
    chosen = run_benchmarks(options)
    canned = {b.name: b.canned for b in chosen if b.canned is not None}
    # An instrument's own guess of a real answer's length, where its canned answers only sketch one.
    expected = {b.name: hook for b in chosen if (hook := getattr(b, "expected_output_tokens", None)) is not None}
    identity: dict[str, Any] = {"provider": prices.model_spec.provider, "model": prices.model_spec.model}
    if options.base_url:
        identity["base_url"] = options.base_url
    engine = Engine(DryRunBackend(identity, canned, expected), cache=None, max_concurrency=64, stats=RunStats())
    judge_engine = None
    if prices.judge_spec is not None:
        judge_identity = {"provider": prices.judge_spec.provider, "model": prices.judge_spec.model}
        judge_engine = Engine(
            DryRunBackend(judge_identity, canned, expected),
            cache=None,
            max_concurrency=64,
            stats=engine.stats,
            label="judge",
        )
    prepared, skipped = prepare_benchmarks(options, console)
    tallies = asyncio.run(dry_run_items(prepared, engine, judge_engine, options.seed))
    return estimate_record(tallies, prices, skipped)
