"""EmpathyBench: published empathy and emotional-intelligence instruments for any LLM, beside human norms.

The Python API (imported lazily, so `import empathybench` stays light):

    from empathybench import run, open_run
    result = run("scripted/plausible", ["eqbench"], preset="quick", limit=3, out="runs/demo")
    result.summary.benchmarks["eqbench"].headline.ci95
    open_run("runs/demo").summary          # any run directory, typed (empathybench.schema.RunSummary)
"""

from typing import TYPE_CHECKING, Any

from empathybench.version import __version__

__all__ = ["__version__", "open_run", "run"]

if TYPE_CHECKING:
    from empathybench.rundir.reader import RunDirectory


def run(*args: Any, **kwargs: Any) -> "RunDirectory":
    """Run instruments against a model and return the run directory, typed: see `empathybench.run.api.run`."""
    from empathybench.run.api import run as run_instruments

    return run_instruments(*args, **kwargs)


def open_run(directory: Any) -> "RunDirectory":
    """A finished run directory, typed (run info, summary, samples): see `empathybench.rundir.reader.open_run`."""
    from empathybench.rundir.reader import open_run as open_directory

    return open_directory(directory)
