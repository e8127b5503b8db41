"""The command line: fast help, listings, data commands, rescore errors."""

import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import cli_in_process


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return cli_in_process(list(args), {**os.environ, **(env or {})})


def test_help_is_fast_and_imports_nothing_heavy() -> None:
    started = time.monotonic()
    result = _cli("--help")
    elapsed = time.monotonic() - started
    assert result.returncode == 0
    assert "run" in result.stdout and "rescore" in result.stdout
    assert "<bool>" not in result.stdout  # a flag takes no value, and the help shows none
    run_help = _cli("run", "--help").stdout
    assert "--quiet" in run_help and "<bool>" not in run_help
    assert elapsed < 3.0  # generous for a loaded CI machine; the module check below is the strict one
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, empathybench.cli; heavy = {'openai', 'anthropic', 'llama_cpp', 'sqlite3', 'inspect_ai'}"
            " & set(sys.modules);"
            "print(sorted(heavy))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip() == "[]"


def test_list_shows_benchmarks_presets_and_providers() -> None:
    result = _cli("list")
    assert result.returncode == 0
    for word in ("eqbench", "quick", "paper", "full", "openai", "anthropic", "llamacpp", "local", "scripted"):
        assert word in result.stdout


def test_data_fetch_verify_where(mirror: Path, tmp_path: Path) -> None:
    env = {"EMPATHYBENCH_CACHE_DIR": str(tmp_path / "cache"), "EMPATHYBENCH_MIRROR": str(mirror)}
    where = _cli("data", "where", "--bench", "eqbench", env=env)
    assert where.returncode == 0 and str(tmp_path / "cache") in where.stdout
    before = _cli("data", "verify", "--bench", "eqbench", env=env)
    assert before.returncode != 0 and "missing" in before.stdout  # missing files are a failure of verify
    fetched = _cli("data", "fetch", "--bench", "eqbench", env=env)
    assert fetched.returncode == 0, fetched.stderr
    after = _cli("data", "verify", "--bench", "eqbench", env=env)
    assert after.returncode == 0 and "missing" not in after.stdout and "ok" in after.stdout


def test_rescore_of_a_missing_or_foreign_file_is_one_line(tmp_path: Path) -> None:
    missing = _cli("rescore", "eqbench", str(tmp_path / "nope.json"), "--json")
    assert missing.returncode != 0
    assert "Traceback" not in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"hello": 1}')
    result = _cli("rescore", "eqbench", str(foreign), "--json")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
