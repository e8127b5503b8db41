"""`empathybench judge validate`: an instrument's judge validation run through the engine like a run's items.

The instrument says what to rate and how (`JudgeValidation`, instruments/protocol.py); this module does what a
run does around that: the judge's backend, the engine with the response cache, retries and adaptive concurrency,
per-item seeds and the progress display. It names no instrument.
"""

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import DEFAULT_REQUEST_TIMEOUT_S, Engine, ItemContext, RunStats, item_seed
from empathybench.engine.progress import RunProgress
from empathybench.errors import UserError
from empathybench.instruments.protocol import JudgeValidation, PreparedBenchmark
from empathybench.paths import cache_dir
from empathybench.run.plan import RolePlan, plan_role

if TYPE_CHECKING:
    from rich.console import Console


def installed_judge_validation(bench: str | None = None) -> JudgeValidation:
    """The JudgeValidation of the instrument `bench` (`judge validate --bench NAME`), or without one of the first
    installed instrument (in run order) that validates its judge; a name without a validation is a UserError."""
    from empathybench.instruments.registry import all_benchmarks

    instruments = all_benchmarks()
    offering = [name for name, instrument in instruments.items() if instrument.judge_validation is not None]
    if bench is not None:
        if bench not in offering:
            what = "is not an installed instrument" if bench not in instruments else "has no judge validation"
            raise UserError(f"{bench} {what}; --bench takes one of: {', '.join(offering) or 'none installed'}")
        validation = instruments[bench].judge_validation
        assert validation is not None
        return validation
    if not offering:
        raise UserError("no installed instrument has a judge to validate")
    validation = instruments[offering[0]].judge_validation
    assert validation is not None
    return validation


def validate_judge(
    validation: JudgeValidation,
    judge: RolePlan,
    *,
    limit: int | None = None,
    seed: int = 0,
    max_concurrency: int | None = None,
    use_cache: bool = True,
    allow_unverified: bool = False,
    attempts: int | None = None,
    console: "Console | None" = None,
    request_timeout_s: float | None = None,
) -> dict[str, Any]:
    """Have `judge` (its role: run/plan.py plan_role) rate the validation's items; the report (`--json`, `--out`)
    with the judge, the data files it read and the usage. With a `console`, progress is shown on it (a bar on a
    terminal, a line every 10 s elsewhere).
    """
    from rich.console import Console

    # The backend first: a missing key or extra is the error to show, before any data is fetched.
    backend = judge.backend({validation.tag: validation.canned} if validation.canned is not None else {})
    settings: dict[str, Any] = {"limit": limit, "seed": seed, "allow_unverified": allow_unverified}
    if attempts is not None:
        settings["attempts"] = attempts
    prepared = validation.prepare(**settings, judge_identity=backend.identity())
    stats = RunStats(items_total=len(prepared.items))
    cache = ResponseCache(cache_dir() / "responses.sqlite") if use_cache else None
    engine = Engine(
        backend,
        cache=cache,
        max_concurrency=max_concurrency,
        stats=stats,
        seed=seed,
        request_timeout_s=request_timeout_s or DEFAULT_REQUEST_TIMEOUT_S,
    )
    progress = RunProgress(console or Console(quiet=True), stats, enabled=console is not None)
    try:
        with progress:
            progress.set_description("judge validate")
            records = asyncio.run(_rate_all(engine, prepared, seed, validation.tag, progress.update))
    finally:
        if cache is not None:
            cache.close()
    report = prepared.summarize(records)
    report["validation"] = prepared.name
    if validation.evidence is not None:
        report["evidence"] = validation.evidence(report)  # what `empathybench judges REPORT` reads
    report["judge"] = {"spec": str(judge.spec), **backend.identity()}
    report["data_files"] = [f.as_record() for f in prepared.data_files]
    report["usage"] = stats.as_dict()
    return report


def run_validation(
    judge: str, judge_args: Sequence[str] = (), *, bench: str | None = None, **settings: Any
) -> dict[str, Any]:
    """`validate_judge` with an installed instrument's judge validation (what `judge validate [--bench NAME]` runs)."""
    return validate_judge(installed_judge_validation(bench), plan_role("judge", judge, judge_args), **settings)


async def _rate_all(
    engine: Engine,
    prepared: PreparedBenchmark[Any],
    seed: int,
    tag: str,
    on_done: Callable[[], None],
) -> list[dict[str, Any]]:
    """Every item through the engine at once (its concurrency limit holds them back); records in item order."""

    async def one(item: Any) -> dict[str, Any]:
        ctx = ItemContext(engine, item.id, item_seed(seed, prepared.name, item.id), tag=tag)
        record = {"item_id": item.id, **await prepared.run_item(item, ctx)}
        if record.get("error") is not None:
            engine.stats.items_failed += 1
        engine.stats.items_done += 1  # done: rated, or given up on
        on_done()
        return record

    try:
        return list(await asyncio.gather(*(one(item) for item in prepared.items)))
    finally:
        await engine.backend.aclose()
