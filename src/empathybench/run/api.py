"""The Python API of a run: `empathybench.run(...)` runs instruments and returns the run directory, typed.

    from empathybench import run, open_run
    result = run("scripted/plausible", ["eqbench"], preset="quick", limit=3, out="runs/demo")
    result.summary.benchmarks["eqbench"].headline          # Metric: value, ci95, n, unit, reference ...
    again = open_run("runs/demo")                           # the same, read back from disk

It is the CLI's `empathybench run` without the terminal: the same options, checks, run directory and resume.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.console import Console

from empathybench.errors import UserError
from empathybench.run.options import RunOptions, default_preset
from empathybench.run.repeats import execute_repeats
from empathybench.rundir.reader import RunDirectory, open_run


def run(
    model: str,
    instruments: Sequence[str] | str | None = None,
    *,
    preset: str | None = None,
    limit: int | None = None,
    out: Path | str | None = None,
    seed: int = 0,
    options: Mapping[str, str] | None = None,
    judge: str | None = None,
    simulator: str | None = None,
    repeats: int = 1,
    use_cache: bool = True,
    allow_unverified: bool = False,
    max_concurrency: int | None = None,
    base_url: str | None = None,
    model_args: Sequence[str] = (),
    judge_args: Sequence[str] = (),
    judge_base_url: str | None = None,
    simulator_args: Sequence[str] = (),
    simulator_base_url: str | None = None,
    progress: bool = False,
) -> RunDirectory:
    """Run `instruments` (None: all) against `model` and return the finished run directory, typed.

    The arguments are `empathybench run`'s options (`options` is `--option`: {"eqbench.language": "de"}; each model
    role, the model, `judge` and `simulator`, has its own arguments and server, e.g. `judge_base_url`); a mistake
    raises `UserError` with the CLI's one-line message before any model is called. Running again with the same `out`
    resumes: finished items are not asked again.
    """
    names = [instruments] if isinstance(instruments, str) else list(instruments) if instruments is not None else None
    chosen = preset or default_preset(model, names, limit)
    for key in options or {}:
        if "." not in key:
            raise UserError(f"option {key!r} is not BENCHMARK.NAME (the instrument, a dot, its option)")
    run_options = RunOptions(
        model=model,
        benchmarks=names,
        preset=chosen,
        limit=limit,
        out=Path(out) if out is not None else None,
        max_concurrency=max_concurrency,
        seed=seed,
        base_url=base_url,
        allow_unverified=allow_unverified,
        options={str(k): str(v) for k, v in (options or {}).items()},
        use_cache=use_cache,
        show_progress=progress,
        judge=judge,
        judge_base_url=judge_base_url,
        simulator=simulator,
        simulator_args=list(simulator_args),
        simulator_base_url=simulator_base_url,
        model_args=list(model_args),
        judge_args=list(judge_args),
    )
    console = Console(stderr=True, quiet=not progress)  # the terminal's notices only when progress is asked for
    result = execute_repeats(run_options, repeats, console)
    return open_run(result.directory)


__all__ = ["RunDirectory", "open_run", "run"]
