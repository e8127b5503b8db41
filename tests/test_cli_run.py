"""`empathybench run` end to end against the fake OpenAI-compatible server (in process; kill -9 in a subprocess).

Covers the run directory, resume after kill -9, the API key never reaching disk, and the one-line errors.
"""

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import run_in_process
from empathybench.data.fetch import source_url
from empathybench.data.registry import pin
from empathybench.testing.fake_openai import FakeOpenAIServer

PINS = "empathybench.instruments.eqbench"  # the package whose pins.json holds the files these tests read

TEST_KEY = "sk-test-secret-123"
PAPER_ITEMS = 171
QUESTIONS_KEY = "eqbench/v2/eq_bench_v2_questions_171.json"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(seed=3) as fake:
        yield fake


def cli_env(cache_dir: Path, mirror: Path, *, api_key: str | None = TEST_KEY) -> dict[str, str]:
    """The parent's environment without any model or EmpathyBench settings, then ours."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))
    }
    env.update(EMPATHYBENCH_CACHE_DIR=str(cache_dir), EMPATHYBENCH_MIRROR=str(mirror))
    if api_key is not None:
        env["OPENAI_API_KEY"] = api_key
    return env


def run_command(base_url: str, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "empathybench",
        "run",
        "--model",
        "openai/fake",
        "--base-url",
        base_url,
        "--bench",
        "eqbench",
        "--preset",
        "paper",
        "--out",
        str(out),
        *extra,
    ]


def run_cli(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_in_process(command, env)


def read_records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines()]


def files_containing(secret: str, *roots: Path) -> list[Path]:
    needle = secret.encode()
    return [path for root in roots for path in root.rglob("*") if path.is_file() and needle in path.read_bytes()]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_paper_run_writes_a_complete_run_dir(server: FakeOpenAIServer, tmp_path: Path, mirror: Path) -> None:
    cache_dir, run_dir = tmp_path / "cache", tmp_path / "run"
    env = cli_env(cache_dir, mirror)
    result = run_cli(run_command(server.base_url, run_dir), env)
    assert result.returncode == 0, result.stderr
    assert server.requests_total == PAPER_ITEMS
    assert server.authorizations == {f"Bearer {TEST_KEY}"}

    run_info = json.loads((run_dir / "run.json").read_text("utf-8"))
    assert run_info["status"] == "complete"
    assert run_info["model"]["base_url"] == server.base_url
    [data_file] = run_info["benchmarks"]["eqbench"]["data_files"]
    assert data_file["verified"] is True

    records = read_records(run_dir)
    assert len(records) == PAPER_ITEMS
    assert len({r["item_id"] for r in records}) == PAPER_ITEMS
    for record in records:
        assert record["status"] == "ok"
        assert {"item_id", "calls", "parsed", "score", "parse_error"} <= record.keys()
        [call] = record["calls"]
        assert call["messages"][-1]["role"] == "user"
        assert call["sampling"]["temperature"] == 0.01
        assert call["reply"].endswith(": 5")
        assert record["parse_error"] is None
        assert record["score"] is not None

    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
    eqbench = summary["benchmarks"]["eqbench"]
    assert isinstance(eqbench["score"], float)
    assert (eqbench["n_items"], eqbench["n_parsed"]) == (PAPER_ITEMS, PAPER_ITEMS)
    assert summary["usage"]["prompt_tokens"] > 0
    assert (run_dir / "report.html").stat().st_size > 1000

    # The same command again: everything is in the run dir, nobody is asked.
    again = run_cli(run_command(server.base_url, run_dir), env)
    assert again.returncode == 0, again.stderr
    assert len(read_records(run_dir)) == PAPER_ITEMS

    # A new run dir on a warm cache: still nobody is asked, and it is quick (bench/ measures the 3 s limit).
    started = time.monotonic()
    warm = run_cli(run_command(server.base_url, tmp_path / "warm"), env)
    warm_s = time.monotonic() - started
    assert warm.returncode == 0, warm.stderr
    assert server.requests_total == PAPER_ITEMS
    assert all(call["cached"] for r in read_records(tmp_path / "warm") for call in r["calls"])
    assert warm_s < 15  # generous on a loaded machine; bench/ measures the 3 s target

    assert files_containing(TEST_KEY, run_dir, tmp_path / "warm", cache_dir) == []


def test_kill_9_mid_run_then_the_same_command_completes(server: FakeOpenAIServer, tmp_path: Path, mirror: Path) -> None:
    concurrency = 4
    server.latency_s = 0.15
    cache_dir, run_dir = tmp_path / "cache", tmp_path / "run"
    env = cli_env(cache_dir, mirror)
    command = run_command(server.base_url, run_dir, "--max-concurrency", str(concurrency), "--quiet")
    samples = run_dir / "samples.jsonl"

    first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (samples.exists() and samples.read_bytes().count(b"\n") >= 20):
            assert first.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no progress before the kill"
            time.sleep(0.02)
        first.send_signal(signal.SIGKILL)
    finally:
        first.kill()
        first.wait()
    # Whole lines written before the kill are finished items; they must survive as they are.
    before = [json.loads(line) for line in samples.read_bytes().split(b"\n")[:-1]]
    asked_before_resume = server.requests_total
    bodies_before_resume = server.body_counts
    assert len(before) < PAPER_ITEMS

    server.latency_s = 0.0  # what is under test is what the resume asks, not how long the server takes
    second = run_cli(command, env)
    assert second.returncode == 0, second.stderr

    records = read_records(run_dir)
    assert Counter(r["item_id"] for r in records) == Counter({str(i): 1 for i in range(1, PAPER_ITEMS + 1)})
    assert all(r["status"] == "ok" for r in records)
    by_id = {r["item_id"]: r for r in records}
    assert all(by_id[r["item_id"]] == r for r in before)
    run_info = json.loads((run_dir / "run.json").read_text("utf-8"))
    assert run_info["status"] == "complete"
    # The killed session's accounting is rebuilt from its records (it never wrote its own); totals add up.
    killed, resumed = run_info["sessions"]
    assert killed["status"] == "killed" and resumed["status"] == "complete"
    assert killed["usage"]["calls"] >= len(before)
    assert run_info["usage"]["calls"] == killed["usage"]["calls"] + resumed["usage"]["calls"]
    assert all(r["run"]["session"] == 1 for r in before)

    # Only calls in flight at the kill (at most one per concurrency slot) may have been asked twice: once by the
    # killed session, once by the resume.
    asked_twice_before = {h: n for h, n in bodies_before_resume.items() if n > 1}
    assert not asked_twice_before, f"the killed session asked these bodies more than once: {asked_twice_before}"
    by_resume = {h: n - bodies_before_resume.get(h, 0) for h, n in server.body_counts.items()}
    asked_twice_by_resume = {h: n for h, n in by_resume.items() if n > 1}
    assert not asked_twice_by_resume, f"the resume asked these bodies more than once: {asked_twice_by_resume}"
    asked_by_both = [h for h, n in by_resume.items() if n and h in bodies_before_resume]
    assert len(asked_by_both) <= concurrency, asked_by_both
    assert server.requests_total <= PAPER_ITEMS + concurrency
    assert server.requests_total > asked_before_resume
    assert files_containing(TEST_KEY, run_dir, cache_dir) == []


def _tampered_mirror(mirror: Path, root: Path) -> Path:
    """A mirror holding only the EQ-Bench v2 questions file, with one byte of one dialogue changed."""
    entry = pin(PINS, QUESTIONS_KEY)
    original = Path(source_url(entry, mirror=str(mirror)))
    copy = Path(source_url(entry, mirror=str(root)))
    copy.parent.mkdir(parents=True)
    shutil.copyfile(original, copy)
    data = bytearray(copy.read_bytes())
    position = data.index(b"[End dialogue]") - 10
    while not chr(data[position]).isalpha():
        position -= 1
    data[position] = ord(chr(data[position]).swapcase())  # still valid JSON, still a parseable prompt
    copy.write_bytes(bytes(data))
    return root


def _error_case(name: str, tmp_path: Path, base_url: str, mirror: Path) -> tuple[list[str], dict[str, str], str]:
    """(command, environment, expected text of the error line) of one failure mode."""
    cache_dir, out = tmp_path / "cache", tmp_path / "run"
    if name == "unknown benchmark":
        command = run_command(base_url, out)
        command[command.index("eqbench")] = "nosuch"
        return command, cli_env(cache_dir, mirror), "unknown benchmark 'nosuch'"
    if name == "missing key":
        command = [sys.executable, "-m", "empathybench", "run", "--model", "openai/gpt-4o", "--bench", "eqbench"]
        return (
            [*command, "--preset", "paper", "--out", str(out)],
            cli_env(cache_dir, mirror, api_key=None),
            "OPENAI_API_KEY",
        )
    if name == "unknown provider":
        command = run_command(base_url, out)
        command[command.index("openai/fake")] = "foo/bar"
        return command, cli_env(cache_dir, mirror), "unknown provider 'foo'"
    if name == "tampered data":
        tampered = _tampered_mirror(mirror, tmp_path / "mirror")
        return run_command(base_url, out), cli_env(cache_dir, tampered), "checksum mismatch"
    if name == "unreachable server":
        return run_command(f"http://127.0.0.1:{closed_port()}/v1", out), cli_env(cache_dir, mirror), "cannot reach"
    raise AssertionError(name)


@pytest.mark.parametrize(
    "case", ["unknown benchmark", "missing key", "unknown provider", "tampered data", "unreachable server"]
)
def test_failures_give_one_clear_line(case: str, server: FakeOpenAIServer, tmp_path: Path, mirror: Path) -> None:
    command, env, expected = _error_case(case, tmp_path, server.base_url, mirror)
    result = run_cli(command, env)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert expected in lines[0]
    assert server.requests_total == 0
    if tmp_path.joinpath("cache").exists():
        assert files_containing(TEST_KEY, tmp_path) == []
    if case == "unreachable server":  # nothing was recorded: no empty run directory is left behind
        assert not (tmp_path / "run").exists()


def test_allow_unverified_runs_and_records_the_actual_hash(
    server: FakeOpenAIServer, tmp_path: Path, mirror: Path
) -> None:
    tampered_mirror = _tampered_mirror(mirror, tmp_path / "mirror")
    tampered = Path(source_url(pin(PINS, QUESTIONS_KEY), mirror=str(tampered_mirror))).read_bytes()
    run_dir = tmp_path / "run"
    env = cli_env(tmp_path / "cache", tampered_mirror)
    result = run_cli(run_command(server.base_url, run_dir, "--allow-unverified", "--quiet"), env)
    assert result.returncode == 0, result.stderr

    run_info = json.loads((run_dir / "run.json").read_text("utf-8"))
    assert run_info["options"]["allow_unverified"] is True
    [data_file] = run_info["benchmarks"]["eqbench"]["data_files"]
    assert data_file["verified"] is False
    assert data_file["sha256"] == hashlib.sha256(tampered).hexdigest()
    assert data_file["sha256"] != pin(PINS, QUESTIONS_KEY).sha256
    assert len(read_records(run_dir)) == PAPER_ITEMS
