"""The library from Python: `from empathybench import run, open_run` (lazy), typed results with their intervals,
and docs/python-api.md's example, run as a doctest."""

import doctest
import subprocess
import sys
from pathlib import Path

import pytest

from empathybench.errors import UserError

DOC = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


def test_the_documented_example_runs(mirror: Path) -> None:
    failures, tried = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert tried > 5 and failures == 0


def test_import_is_lazy_and_run_stays_callable_after_the_package_is_imported() -> None:
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, empathybench; print(sorted(m for m in sys.modules if m.startswith('empathybench.')));"
            "import empathybench.run.execute; from empathybench import run, open_run; print(callable(run))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    # only the one-line version module comes with the package: no instrument, engine or report
    assert probe.stdout.splitlines() == ["['empathybench.version']", "True"]


def test_run_returns_typed_results_with_intervals(mirror: Path, tmp_path: Path) -> None:
    from empathybench import open_run, run
    from empathybench.schema import InstrumentSummary, Metric, RunInfo, RunSummary, SkippedSummary

    result = run("scripted/plausible-2", ["seceu", "giebench"], limit=2, out=tmp_path / "r", use_cache=False)
    assert isinstance(result.summary, RunSummary) and isinstance(result.run, RunInfo)
    assert isinstance(result.summary.benchmarks["seceu"], InstrumentSummary)
    assert isinstance(result.summary.benchmarks["giebench"], SkippedSummary)  # its data is not in the mirror
    headline = result.headlines()["seceu"]
    assert isinstance(headline, Metric) and headline.ci95 is not None and headline.n == 2
    assert result.headlines()["giebench"] is None
    assert open_run(tmp_path / "r").summary == result.summary
    again = run("scripted/plausible-2", ["seceu", "giebench"], limit=2, out=tmp_path / "r", use_cache=False)
    assert again.summary.session is not None and again.summary.session["usage"]["calls"] == 0  # resumed


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"preset": "huge"}, "unknown preset 'huge'"),
        ({"options": {"language": "de"}}, "is not BENCHMARK.NAME"),
        ({"limit": 0}, "--limit must be at least 1"),
    ],
)
def test_run_mistakes_are_one_line_user_errors(tmp_path: Path, kwargs: dict, message: str) -> None:
    from empathybench import run

    with pytest.raises(UserError, match=message):
        run("scripted/plausible", ["eqbench"], out=tmp_path / "never", **kwargs)
    assert not (tmp_path / "never").exists()


def test_open_run_of_a_missing_directory_is_a_user_error(tmp_path: Path) -> None:
    from empathybench import open_run

    with pytest.raises(UserError, match="no such run directory"):
        open_run(tmp_path / "missing")
