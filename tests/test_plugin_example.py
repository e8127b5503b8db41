"""examples/plugin is a third-party instrument package: pip installs it (offline, into a folder of the test's own, so
the shared environment never keeps it), and then, in fresh processes, `empathybench` lists it, runs it on scripted
models, draws its section in report.html, compares two runs of it and rescores a file with it."""

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import empathybench
from empathybench.schema.files import checked_in

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "examples" / "plugin"
SOURCE = Path(empathybench.__file__).resolve().parents[1]  # the empathybench under test (a worktree's src/)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip install --no-deps --no-build-isolation --target DIR examples/plugin`: a real wheel build and install."""
    if importlib.util.find_spec("hatchling") is None:
        if os.environ.get("CI"):
            pytest.fail("hatchling (the dev extra) is needed to build examples/plugin offline")
        pytest.skip("hatchling is not installed (pip install -e '.[dev]')")
    target = tmp_path_factory.mktemp("plugin-site")
    work = tmp_path_factory.mktemp("plugin-build")  # pip builds in a copy: the repo gets no build/ folder
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
    built = subprocess.run(
        [*pip, "--target", str(target), str(PLUGIN)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=work,
    )
    assert built.returncode == 0, built.stderr
    assert (target / "empathybench_example" / "instrument.py").is_file()
    return target


def _cli(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SOURCE)]), "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-m", "empathybench", *args], capture_output=True, text=True, env=env, timeout=240, cwd=cwd
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _records(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "samples.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_it_is_listed_and_speaks_the_typed_protocol(installed: Path, tmp_path: Path) -> None:
    listed = _cli(installed, "list", cwd=tmp_path).stdout
    assert "example — Example (plugin): name the emotion" in listed
    assert "example.attempts" in listed and "eqbench — " in listed  # beside the built-ins
    code = (
        "from empathybench.instruments import registry; i = registry.load('example');"
        "from empathybench.instruments.protocol import Instrument;"
        "print(type(i).__module__, isinstance(i, Instrument), i.canned is not None,"
        " 'example' in [b.name for b in registry.resolve_benchmarks(None)])"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(installed), str(SOURCE)])}
    seen = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    # Its own class, a subclass of the contract, with canned answers; not in a run without --bench.
    assert seen.stdout.split() == ["empathybench_example.instrument", "True", "True", "False"], seen.stderr


def test_it_runs_on_scripted_models_reports_and_compares(installed: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "plausible", tmp_path / "plausible-2"
    for model, out in (("scripted/plausible", first), ("scripted/plausible-2", second)):
        _cli(installed, "run", "-m", model, "--bench", "example", "--out", str(out), "--no-cache", "-q", cwd=tmp_path)

    summary = json.loads((first / "summary.json").read_text("utf-8"))
    jsonschema.validate(summary, checked_in("summary.schema.json"))
    assert list(summary["benchmarks"]) == ["example"]
    result = summary["benchmarks"]["example"]
    assert result["status"] == "complete" and result["headline_metric"] == "accuracy"
    records = [r for r in _records(first) if r["benchmark"] == "example"]
    assert len(records) == result["n_items"] == 4  # the quick preset
    assert all(r["status"] == "ok" and r["calls"] for r in records)
    # The canned answers reached the instrument (the generic scripted reply names no emotion): answers parsed.
    assert sum(r["answer"] is not None for r in records) >= 3
    assert all(r["correct"] == (r["answer"] == r["expected"]) for r in records)
    accuracy = result["metrics"]["accuracy"]
    assert accuracy["value"] == pytest.approx(100 * sum(r["correct"] for r in records) / len(records))
    low, high = accuracy["ci95"]
    assert 0 <= low <= accuracy["value"] <= high <= 100
    assert summary["profile"][0]["benchmark"] == "example" and summary["profile"][0]["title"] == "Example plugin"

    # Where the instrument came from: run.json records the distribution for every instrument, reports show it for
    # plugins (never for the built-ins).
    info = json.loads((first / "run.json").read_text("utf-8"))
    assert info["benchmarks"]["example"]["provider"] == {"distribution": "empathybench-example", "version": "0.1.0"}
    assert "package empathybench-example 0.1.0" in (first / "report.md").read_text("utf-8")

    page = (first / "report.html").read_text("utf-8")
    assert "package empathybench-example 0.1.0" in page and "package empathybench " not in page
    assert '<section data-benchmark="example">' in page
    assert "written for this example" in page and "<h3>answers</h3>" in page  # its own ReportSection
    assert page.count('href="#item-example-') >= len(records)  # its answers table links every sample

    comparison = tmp_path / "comparison.html"
    shown = _cli(installed, "report", str(first), str(second), "--out", str(comparison), cwd=tmp_path).stdout
    assert "Example plugin" in shown
    compared = json.loads(comparison.with_suffix(".json").read_text("utf-8"))
    (paired,) = compared["benchmarks"]["example"]["paired"]
    assert paired["metric"] == "accuracy" and paired["n_shared"] == 4 and paired["test"] == "exact McNemar"
    values = [row["value"] for row in compared["benchmarks"]["example"]["leaderboard"]["accuracy"]]
    assert paired["difference"] == pytest.approx(values[1] - values[0], abs=1e-3)
    assert 'data-benchmark="example"' in comparison.read_text("utf-8")


def test_its_rescore_command(installed: Path, tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps({"1": "Joy!", "2": "I think anger.", "4": "fear or surprise"}), "utf-8")
    shown = _cli(installed, "rescore", "example", str(replies), "--json", cwd=tmp_path).stdout
    # 1 is joy (right), 2 is sadness (wrong), 4 names two emotions (no answer).
    assert json.loads(shown) == {"n": 3, "correct": 1, "accuracy": pytest.approx(100 / 3)}


def test_it_imports_only_the_public_protocol() -> None:
    allowed = {"empathybench.instruments.protocol", "empathybench.instruments.support"}
    wrong = []
    for path in sorted((PLUGIN / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            wrong += [f"{path.name}: {n}" for n in names if n.startswith("empathybench.") and n not in allowed]
    assert not wrong, wrong


def test_the_guide_quotes_the_example_and_names_every_member_of_the_protocol() -> None:
    from empathybench.instruments.protocol import Instrument

    guide = (REPO / "docs" / "write-an-instrument.md").read_text("utf-8")
    files = [p.read_text("utf-8") for p in sorted(PLUGIN.rglob("*.py"))] + [(PLUGIN / "pyproject.toml").read_text()]
    snippets = re.findall(r"```(?:python|toml)\n(.*?)```", guide, re.S)
    assert len(snippets) >= 4
    stale = [snippet for snippet in snippets if not any(snippet in text for text in files)]
    assert not stale, f"snippets of docs/write-an-instrument.md not in examples/plugin: {stale}"
    members = set(Instrument.__annotations__) | {n for n in vars(Instrument) if not n.startswith("_")}
    missing = sorted(m for m in members if f"`{m}" not in guide)
    assert not missing, f"the guide's protocol table lacks {missing}"
