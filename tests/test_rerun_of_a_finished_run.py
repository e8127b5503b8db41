"""A re-run of a finished run recomputes no summary: the instruments' results of summary.json are kept as they are
(their statistics were most of a re-run's time), unless the run changed since or another version wrote them."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR, cli_in_process
from empathybench.run import execute

ARGS = ["run", "-m", "scripted/plausible", "-b", "eqbench,seceu", "-n", "3", "-o", "run", "-q"]


@pytest.fixture
def finished(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    env = {**os.environ, "EMPATHYBENCH_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "120"}
    result = cli_in_process(ARGS, env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "run", env


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    original = execute.benchmark_result

    def counted(bench: Any, records: Any) -> Any:
        calls.append(bench.name)
        return original(bench, records)

    monkeypatch.setattr(execute, "benchmark_result", counted)
    return calls


def test_a_rerun_keeps_the_finished_summary(finished: tuple[Path, dict[str, str]], monkeypatch) -> None:
    run, env = finished
    before = json.loads((run / "summary.json").read_text())
    calls = _counting(monkeypatch)
    result = cli_in_process(ARGS, env, cwd=run.parent)
    assert result.returncode == 0, result.stderr
    after = json.loads((run / "summary.json").read_text())
    assert calls == []
    assert after["benchmarks"] == before["benchmarks"] and after["profile"] == before["profile"]
    assert after["session"] != before["session"] or after["usage"] == before["usage"]  # this session's own figures
    assert (run / "report.html").is_file()


def test_another_version_or_a_changed_run_is_summarised_again(finished: tuple[Path, dict[str, str]], monkeypatch):
    run, env = finished
    run_info = json.loads((run / "run.json").read_text())
    run_info["empathybench_version"] = "0.0.1"
    (run / "run.json").write_text(json.dumps(run_info))
    calls = _counting(monkeypatch)
    assert cli_in_process(ARGS, env, cwd=run.parent).returncode == 0
    assert sorted(calls) == ["eqbench", "seceu"]
    calls.clear()
    # samples.jsonl written after summary.json (e.g. repaired by hand): the summary no longer stands for it
    os.utime(run / "summary.json", (1_000_000, 1_000_000))
    assert cli_in_process(ARGS, env, cwd=run.parent).returncode == 0
    assert sorted(calls) == ["eqbench", "seceu"]
