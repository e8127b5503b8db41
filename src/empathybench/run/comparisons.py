"""`empathybench report A B C ... --judge SPEC`: the instruments' judged comparisons of several runs.

An instrument offers one as its optional `comparison` hook (instruments/protocol.py RunComparison); this module
finds the instruments that have one and are in at least two of the runs, and calls each with the judge settings.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.instruments.protocol import ComparisonOutput


def judgements_path(target: Path, instrument: str) -> Path:
    """Where an instrument keeps its judge's verdicts for the comparison written to `target`."""
    return target.with_name(f"{target.stem}.{instrument}-judgements.jsonl")


def judged_comparisons(
    runs: Sequence[Any],
    *,
    judge: str,
    target: Path,
    judge_args: Sequence[str] = (),
    base_url: str | None = None,
    use_cache: bool = True,
    max_concurrency: int | None = None,
    request_timeout_s: float | None = None,
    console: Any = None,
) -> dict[str, ComparisonOutput]:
    """Each instrument's comparison output (instrument name -> output), in profile order."""
    from empathybench.instruments.registry import all_benchmarks

    if len(runs) < 2:
        raise UserError("--judge compares several runs: give at least two run directories")
    outputs: dict[str, ComparisonOutput] = {}
    for name, instrument in all_benchmarks().items():
        hook = getattr(instrument, "comparison", None)
        holding = [run for run in runs if name in run.summary.get("benchmarks", {})]
        if hook is None or len(holding) < 2:
            continue
        outputs[name] = hook.run(
            holding,
            judge=judge,
            judgements_path=judgements_path(target, name),
            judge_args=list(judge_args),
            base_url=base_url,
            use_cache=use_cache,
            max_concurrency=max_concurrency,
            request_timeout_s=request_timeout_s,
            console=console,
        )
    if not outputs:
        offering = [n for n, i in all_benchmarks().items() if getattr(i, "comparison", None) is not None]
        raise UserError(
            "--judge: no instrument with a judged comparison is in two of these runs"
            + (f" (offered by: {', '.join(offering)})" if offering else "")
        )
    return outputs
