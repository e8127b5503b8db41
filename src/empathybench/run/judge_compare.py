"""`empathybench judge compare --bench NAME --judge SPEC`: a judge against an instrument's published judge.

The instrument says what to re-judge and how to compare (`JudgeComparison`, instruments/protocol.py); this module
does what `report --judge` does around its judged comparisons (run/comparisons.py), and names no instrument: the
judge's backend, the engine with the response cache, retries and adaptive concurrency, the progress display, the cost
meter (`--judge-price`, `--max-cost`: stop before exceeding it, exit 3) and `--dry-run` (the requests, tokens and cost
from the real task code against canned answers, no model called).

Everything goes to one output directory:
- `<instrument>-judgements.jsonl`: every verdict of the judge as soon as it is read, keyed by judge + exact prompt;
  the same command after a budget stop, a kill or with a larger --limit asks only what the file does not hold;
- `judge-comparison.json` (RESULT_FILE, format RESULT_FORMAT; docs/judges.md): the comparison, for the terminal's
  `--json`, and as evidence about the judge for other commands.
"""

import asyncio
import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import Engine, RunStats
from empathybench.engine.progress import RunProgress
from empathybench.errors import UserError
from empathybench.instruments.protocol import ComparisonJudging, JudgeComparison, PreparedJudgeComparison
from empathybench.paths import cache_dir
from empathybench.run.comparisons import (
    JudgeSettings,
    check_settings,
    cost_line,
    dry_judge_pending,
    judge_engine,
    judge_estimate_notes,
    judge_pending,
    read_judgements,
    render_judge_price_and_notes,
)
from empathybench.run.cost import DryRunBackend, RoleTally, budget_stop, no_price_line

RESULT_FILE = "judge-comparison.json"
RESULT_FORMAT = 1
RESULT_KIND = "judge_comparison"


@dataclass(frozen=True)
class CompareSettings:
    """What `judge compare` re-judges: the instrument's comparison, `--limit`, where its results go."""

    bench: str
    hook: JudgeComparison
    limit: int | None
    out: Path
    allow_unverified: bool = False


def installed_judge_comparison(bench: str | None = None) -> tuple[str, JudgeComparison]:
    """(name, JudgeComparison) of the instrument `bench`, or without one of the first installed instrument (in run
    order) that offers one; a name without one is a UserError."""
    from empathybench.instruments.registry import all_benchmarks

    instruments = all_benchmarks()
    offering = [name for name, instrument in instruments.items() if instrument.judge_comparison is not None]
    if bench is None:
        if not offering:
            raise UserError("no installed instrument has a published judge to compare a judge with")
        bench = offering[0]
    if bench not in offering:
        what = "is not an installed instrument" if bench not in instruments else "has no judge comparison"
        raise UserError(f"{bench} {what}; --bench takes one of: {', '.join(offering) or 'none installed'}")
    hook = instruments[bench].judge_comparison
    assert hook is not None
    return bench, hook


def judgements_file(out: Path, bench: str) -> Path:
    return out / f"{bench}-judgements.jsonl"


def default_out(bench: str, judge_spec: str) -> Path:
    """`judge-compare/<instrument>-<judge>`, the judge's spec made a safe file name."""
    import re

    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", judge_spec).strip("-.") or "judge"
    return Path("judge-compare") / f"{bench}-{slug[:100]}"


def _pending(prepared: PreparedJudgeComparison, stored: Mapping[str, Any]) -> list[Any]:
    """The tasks the judgements file does not answer, each key once, in task order."""
    return list({task.key: task for task in prepared.tasks if task.key not in stored}.values())


def _backend(judge: JudgeSettings, hook: JudgeComparison) -> Any:
    return judge.judge.backend({hook.tag: hook.canned} if hook.canned is not None else {})


def _prepare(compare: CompareSettings, judge: JudgeSettings, identity: Mapping[str, Any]) -> PreparedJudgeComparison:
    return compare.hook.prepare(
        limit=compare.limit,
        judge=str(judge.judge.spec),
        judge_identity=dict(identity),
        allow_unverified=compare.allow_unverified,
    )


def compare_judge(compare: CompareSettings, judge: JudgeSettings, *, console: Console | None = None) -> dict[str, Any]:
    """Re-judge with `judge` what the instrument's comparison prepares, compare, and write the result file; the
    result (JSON-able). A budget stop raises BudgetStopError (exit 3) once the calls in flight have finished: their
    verdicts are in the judgements file, and the same command with a larger --max-cost asks only for the rest."""
    from empathybench.paths import check_writable_dir
    from empathybench.version import __version__

    prices = check_settings(judge)
    if compare.out.exists() and not compare.out.is_dir():
        raise UserError(f"--out {compare.out} is a file; give a directory for the comparison's files")
    check_writable_dir(compare.out, "--out")  # before the judge is asked anything
    # The backend first: a missing key or extra is the error to show, before any data is read.
    backend = _backend(judge, compare.hook)
    identity = backend.identity()
    prepared = _prepare(compare, judge, identity)
    path = judgements_file(compare.out, compare.bench)
    stored = read_judgements(path)
    pending = _pending(prepared, stored)
    stats = RunStats(items_total=len(pending))
    from empathybench.run.cost import CostMeter

    meter = CostMeter(prices, budget_usd=judge.max_cost)
    cache = ResponseCache(cache_dir() / "responses.sqlite") if judge.use_cache else None
    try:
        engine = judge_engine(backend, judge, cache, stats, meter)
        progress = RunProgress(console or Console(quiet=True), stats, enabled=console is not None)
        with progress:
            progress.set_description(f"{compare.bench} judge compare")
            new, failures = asyncio.run(
                judge_pending(prepared.judge, pending, engine, compare.hook.tag, path, progress, None)
            )
    finally:
        if cache is not None:
            cache.close()
    if meter.stopped:
        raise budget_stop(meter, len(pending) - len(new) - len(failures), path)
    cost = meter.session_record()
    keys = {task.key for task in prepared.tasks}
    judging = ComparisonJudging(
        verdicts={key: entry for key, entry in {**stored, **new}.items() if key in keys},
        new_keys=frozenset(new),
        stored_keys=frozenset(stored) & keys,
        failures=tuple(failures),
        usage=stats.as_dict(),
        cost=cost,
        judgements_file=str(path),
    )
    result = {
        "format": RESULT_FORMAT,
        "kind": RESULT_KIND,
        "instrument": compare.bench,
        "judge": {"spec": str(judge.judge.spec), **identity},
        "limit": compare.limit,
        "limit_counts": compare.hook.limit_help,
        "scope": prepared.scope,
        **dict(prepared.finish(judging)),
        "tasks": {
            "total": len(keys),
            "asked_now": len(new),
            "from_judgements_file": len(judging.stored_keys),
            "failed": len(failures),
        },
        "failures": list(failures[:20]),
        "usage": stats.as_dict(),
        "cost": cost,
        "cost_line": cost_line(cost, judge),
        "judgements_file": str(path),
        "data_files": [f.as_record() for f in prepared.data_files],
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "empathybench_version": __version__,
    }
    if compare.hook.evidence is not None:
        result["evidence"] = compare.hook.evidence(result)  # what `empathybench judges RESULT` reads
    from empathybench.redaction import dumps_redacted

    try:
        (compare.out / RESULT_FILE).write_text(dumps_redacted(result, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {compare.out / RESULT_FILE}: {exc.strerror or exc}") from None
    result["result_file"] = str(compare.out / RESULT_FILE)
    return result


# --- dry run -----------------------------------------------------------------------------------------------------


def estimate_judge_comparison(compare: CompareSettings, judge: JudgeSettings) -> dict[str, Any]:
    """What `judge compare` would ask, in requests, tokens and USD, without calling any model (JSON-able): every
    pending task through the instrument's real judge code against canned answers (DryRunBackend); tasks already in
    the judgements file are not counted, as the real command does not ask them."""
    from empathybench.instruments.registry import all_benchmarks
    from empathybench.models.prices import price_table

    prices = check_settings(judge)
    try:
        identity, exact = _backend(judge, compare.hook).identity(), True
    except UserError:  # a dry run needs no API key: the spec's provider, model and base URL
        identity, exact = judge.judge.dry_identity(), False
    prepared = _prepare(compare, judge, identity)
    stored = read_judgements(judgements_file(compare.out, compare.bench))
    pending = _pending(prepared, stored)
    hook = compare.hook
    instrument = all_benchmarks().get(compare.bench)
    backend = DryRunBackend(
        identity,
        {hook.tag: hook.canned} if hook.canned is not None else {},
        {hook.tag: instrument.expected_output_tokens} if instrument is not None else {},
    )
    engine = Engine(backend, cache=None, max_concurrency=64, stats=RunStats(), label="judge")
    tally = RoleTally()
    asyncio.run(dry_judge_pending(prepared.judge, pending, engine, hook.tag, tally))
    unique = len({task.key for task in prepared.tasks})
    price = judge.judge.price
    return {
        "instrument": compare.bench,
        "judge": str(judge.judge.spec),
        "limit": compare.limit,
        "limit_counts": compare.hook.limit_help,
        "scope": prepared.scope,
        "tasks": unique,
        "from_judgements_file": unique - len(pending),
        "total": {"judge": tally.as_dict(price, prices.batch)},
        "prices": {"judge": price.as_dict() if price else None, "table_as_of": price_table().as_of},
        "notes": [
            *([no_price_line("judge", judge.judge.spec)] if price is None else []),
            *judge_estimate_notes(exact=exact, max_tokens_aside=" (reasoning models bill their thinking on top)"),
        ],
    }


def render_estimate(console: Console, estimate: Mapping[str, Any]) -> None:
    """The dry run on `console` (every value printed literally)."""
    from rich.table import Table

    from empathybench.formatting import usd

    title = f"dry run: {estimate['instrument']} judge compare by {estimate['judge']}; no model was called"
    table = Table(title=Text(title), title_justify="left")
    for header in ("tasks", "in judgements file", "requests", "input tokens", "output tokens exp / max"):
        table.add_column(header, justify="right")
    table.add_column("cost exp / max", justify="right", no_wrap=True)
    judge = estimate["total"]["judge"]
    table.add_row(
        f"{estimate['tasks']:,}",
        f"{estimate['from_judgements_file']:,}",
        f"{judge['requests']:,}" + (f" (+{judge['reasks']:,} re-asks)" if judge["reasks"] else ""),
        f"{judge['input_tokens']:,}",
        f"{judge['output_tokens']:,} / {judge['output_tokens_max']:,}",
        f"{usd(judge['cost_usd'])} / {usd(judge['cost_usd_max'])}",
    )
    console.print(table)
    console.print(Text(f"what is judged: {estimate['scope']}"))
    console.print(Text(f"--limit N: {estimate['limit_counts']}"))
    render_judge_price_and_notes(console, estimate)
