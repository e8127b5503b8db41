"""`empathybench run --dry-run`: the run's requests, tokens and cost, from its real item code, without a model call.

The instruments are prepared exactly as `run` prepares them (the same plan), then every item runs against
`DryRunBackend` (the canned answers, in process): no network, no response cache, no run directory (see run/cost.py
for the estimates).
"""

import asyncio
from typing import Any

from rich.console import Console

from empathybench.engine.engine import Engine, RunStats
from empathybench.run.cost import DryRunBackend, dry_run_items, estimate_record, run_prices
from empathybench.run.execute import prepare_benchmarks
from empathybench.run.options import RunOptions
from empathybench.run.plan import plan_run


def dry_run(options: RunOptions, console: Console, repeats: int = 1) -> dict[str, Any]:
    """What `options` would ask, in requests, tokens and USD, without calling any model (JSON-able)."""
    plan = plan_run(options, repeats)
    canned = plan.canned()
    # An instrument's own guess of a real answer's length, where its canned answers only sketch one.
    expected = {p.name: p.instrument.expected_output_tokens for p in plan.instruments}
    stats = RunStats()
    engines = {
        name: Engine(
            DryRunBackend(role.dry_identity(), canned, expected),
            cache=None,
            max_concurrency=64,
            stats=stats,
            label=name,
        )
        for name, role in plan.roles.items()
    }
    prepared, skipped = prepare_benchmarks(plan, console)
    tallies = asyncio.run(dry_run_items(prepared, engines, options.seed))
    return estimate_record(tallies, run_prices(plan), skipped)
