"""Run directories written by EmpathyBench 0.1 (summary schema 1) still re-render, compare and resume; a directory
of an unknown schema version is refused with one line naming the version.

tests/fixtures/run-0.1 was written by 0.1 (`run --model scripted/plausible --limit 2`, all default instruments) and
stripped of item content by tests/fixtures/strip_run_dir.py.
"""

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import cli_in_process
from empathybench.cli import app
from empathybench.rundir.reader import open_run

FIXTURE = Path(__file__).parent / "fixtures" / "run-0.1"


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    target = tmp_path / "run-0.1"
    shutil.copytree(FIXTURE, target)
    return target


def test_fixture_is_a_0_1_directory_without_item_content() -> None:
    run_info = json.loads((FIXTURE / "run.json").read_text("utf-8"))
    assert run_info["empathybench_version"] == "0.1.0"
    for line in (FIXTURE / "samples.jsonl").read_text("utf-8").splitlines():
        for call in json.loads(line).get("calls") or ():
            assert call["reply"] == "<removed>"
            assert all(message["content"] == "<removed>" for message in call["messages"])


def test_a_0_1_run_directory_re_renders(old_run: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(old_run)])
    assert result.exit_code == 0, result.output
    html = (old_run / "report.html").read_text("utf-8")
    summary = json.loads((old_run / "summary.json").read_text("utf-8"))
    for name in summary["benchmarks"]:  # a section per instrument, the skipped one included
        assert f'data-benchmark="{name}"' in html or f'id="bench-{name}"' in html, name


def test_a_0_1_run_directory_opens_typed(old_run: Path) -> None:
    run = open_run(old_run)
    assert run.run is not None and run.run.empathybench_version == "0.1.0"
    eqbench = run.summary.benchmarks["eqbench"]
    assert eqbench.headline is not None and eqbench.headline.ci95 is not None
    assert sum(1 for _ in run.samples()) == len((old_run / "samples.jsonl").read_text("utf-8").splitlines())


def test_a_0_1_run_directory_resumes_with_no_new_call(mirror: Path, old_run: Path) -> None:
    """The same command as in 0.1 finds the same fingerprint (every config dumps as it did) and asks nothing."""
    before = json.loads((old_run / "summary.json").read_text("utf-8"))
    result = CliRunner().invoke(
        app, ["run", "--model", "scripted/plausible", "--limit", "2", "--out", str(old_run), "--quiet", "--no-cache"]
    )
    assert result.exit_code == 0, result.output
    after = json.loads((old_run / "summary.json").read_text("utf-8"))
    assert after["session"]["usage"]["calls"] == 0
    assert (
        json.loads((old_run / "run.json").read_text("utf-8"))["fingerprint"]
        == json.loads((FIXTURE / "run.json").read_text("utf-8"))["fingerprint"]
    )
    for name, entry in before["benchmarks"].items():
        assert after["benchmarks"][name].get("score") == entry.get("score"), name


def test_a_0_1_run_compares_with_itself(old_run: Path, tmp_path: Path) -> None:
    other = tmp_path / "copy"
    shutil.copytree(old_run, other)
    out = tmp_path / "comparison.html"
    result = CliRunner().invoke(app, ["report", str(old_run), str(other), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.exists()


def refusal_of_report(run_dir: Path) -> str:
    """What `empathybench report RUN_DIR` prints on stderr; it must fail."""
    result = cli_in_process(["report", str(run_dir)], {**os.environ, "COLUMNS": "300"})
    assert result.returncode != 0
    return result.stderr.strip()


@pytest.mark.parametrize("version", [99, None, "1"])
def test_an_unknown_schema_version_is_refused_in_one_line(old_run: Path, version: object) -> None:
    summary = json.loads((old_run / "summary.json").read_text("utf-8"))
    if version is None:
        del summary["schema_version"]
    else:
        summary["schema_version"] = version
    (old_run / "summary.json").write_text(json.dumps(summary), "utf-8")
    message = refusal_of_report(old_run)
    assert len(message.splitlines()) == 1, message
    assert f"summary schema {version!r}" in message and "0.1.0" in message and "Traceback" not in message


def test_a_summary_that_breaks_its_schema_is_refused_in_one_line(old_run: Path) -> None:
    summary = json.loads((old_run / "summary.json").read_text("utf-8"))
    summary["benchmarks"]["eqbench"]["n_items"] = -1
    (old_run / "summary.json").write_text(json.dumps(summary), "utf-8")
    message = refusal_of_report(old_run)
    assert len(message.splitlines()) == 1 and "Traceback" not in message, message
    assert "does not follow its schema" in message and "benchmarks.eqbench" in message and "n_items" in message
