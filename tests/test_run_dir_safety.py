"""Run directory and cache safety (issue 11 items 3, 7, 8, 9, 12, 20), with real files, processes and signals.

Every test drives `empathybench run` (in process; in a subprocess where a kill, a signal or a second process is
under test) against the fake OpenAI-compatible server on 127.0.0.1, damages or locks what a user or a crash could
damage or lock, and checks that no intact record is lost, no record is adopted by another run, nothing is asked
twice, and each problem is said in one line.
"""

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import run_in_process
from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import Engine
from empathybench.errors import UserError
from empathybench.models.base import ChatResponse, Sampling
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.rundir.store import DAMAGED_FILE, RunStore
from empathybench.testing.fake_openai import FakeOpenAIServer

TEST_KEY = "sk-test-secret-123"
N_ITEMS = 12


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(seed=5) as fake:
        yield fake


def cli_env(cache_dir: Path, mirror: Path) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))
    }
    env.update(EMPATHYBENCH_CACHE_DIR=str(cache_dir), EMPATHYBENCH_MIRROR=str(mirror), OPENAI_API_KEY=TEST_KEY)
    return env


def run_command(base_url: str, out: Path | str, *extra: str, model: str = "openai/fake") -> list[str]:
    return [
        sys.executable,
        "-m",
        "empathybench",
        "run",
        "--model",
        model,
        "--base-url",
        base_url,
        "--bench",
        "eqbench",
        "--preset",
        "paper",
        "--limit",
        str(N_ITEMS),
        "--quiet",
        "--out",
        str(out),
        *extra,
    ]


def run_cli(command: list[str], env: dict[str, str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return run_in_process(command, env, **kwargs)


def start_cli(command: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    # SIGINT back to its default in the child, whatever the test runner's shell did (background jobs ignore it).
    return subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for_records(process: subprocess.Popen[str], samples: Path, n: int) -> None:
    deadline = time.monotonic() + 60
    while not (samples.exists() and samples.read_bytes().count(b"\n") >= n):
        assert process.poll() is None, "the run ended too early"
        assert time.monotonic() < deadline, "no progress"
        time.sleep(0.02)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def read_json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def record_lines(run_dir: Path) -> list[bytes]:
    return (run_dir / "samples.jsonl").read_bytes().splitlines(keepends=True)


def complete_run(
    server: FakeOpenAIServer, tmp_path: Path, mirror: Path, *extra: str
) -> tuple[Path, dict[str, str], subprocess.CompletedProcess[str]]:
    run_dir = tmp_path / "run"
    env = cli_env(tmp_path / "cache", mirror)
    result = run_cli(run_command(server.base_url, run_dir, *extra), env)
    assert result.returncode == 0, result.stderr
    assert len(record_lines(run_dir)) == N_ITEMS
    return run_dir, env, result


# --- item 3: damaged samples.jsonl ----------------------------------------------------------------------------


def test_damaged_lines_are_set_aside_and_only_their_items_are_asked_again(
    server: FakeOpenAIServer, tmp_path: Path, mirror: Path
) -> None:
    run_dir, env, _ = complete_run(server, tmp_path, mirror, "--no-cache")
    lines = record_lines(run_dir)
    not_utf8 = b'{"benchmark": "eqbench", "item_id": "\xff\xfe broken\n'
    not_an_object = b"[1, 2, 3]\n"
    torn = lines[-1][:25]  # a write cut short by a kill: no newline
    damaged_lines = [*lines[:3], not_utf8, *lines[4:7], not_an_object, *lines[8:], torn]
    (run_dir / "samples.jsonl").write_bytes(b"".join(damaged_lines))
    lost_items = {json.loads(lines[i])["item_id"] for i in (3, 7)}

    # Reports read past what is not a record.
    report = run_cli([sys.executable, "-m", "empathybench", "report", str(run_dir)], env)
    assert report.returncode == 0, report.stderr

    again = run_cli(run_command(server.base_url, run_dir, "--no-cache"), env)
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    [notice] = [line for line in error_lines(again.stderr) if "damaged" in line]
    assert DAMAGED_FILE in notice

    # Only the two items whose lines were damaged are asked again.
    assert server.requests_total == N_ITEMS + 2
    kept = record_lines(run_dir)
    intact = [line for line in lines if json.loads(line)["item_id"] not in lost_items]
    assert kept[: len(intact)] == intact  # every intact record, byte for byte, in order
    records = [json.loads(line) for line in kept]
    assert Counter(r["item_id"] for r in records) == Counter({r["item_id"]: 1 for r in records})
    assert len(records) == N_ITEMS and all(r["status"] == "ok" for r in records)
    assert {r["item_id"] for r in records[len(intact) :]} == lost_items
    # The damaged lines are kept aside, byte for byte.
    assert (run_dir / DAMAGED_FILE).read_bytes() == not_utf8 + not_an_object + torn + b"\n"


# --- item 7: one run per directory ----------------------------------------------------------------------------


def test_a_second_run_on_a_busy_directory_refuses_before_any_call(
    server: FakeOpenAIServer, tmp_path: Path, mirror: Path
) -> None:
    server.latency_s = 0.8  # the first run is busy for about 10 s
    run_dir, env = tmp_path / "run", cli_env(tmp_path / "cache", mirror)
    command = run_command(server.base_url, run_dir, "--no-cache", "--max-concurrency", "1")
    first = start_cli(command, env)
    try:
        wait_for_records(first, run_dir / "samples.jsonl", 1)
        second = run_cli(command, env)
        assert second.returncode == 2, second.stderr
        assert first.poll() is None, "the first run must still hold the directory"
        server.latency_s = 0.0
        _, first_err = first.communicate(timeout=60)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == 0, first_err
    [line] = error_lines(second.stderr)
    assert line.startswith("error: ") and "in use" in line and f"pid {first.pid}" in line
    # Each item asked once (no cache: a call of the second run would repeat a body), recorded once.
    assert server.requests_total == N_ITEMS
    assert len(server.repeated_bodies()) == 0
    records = [json.loads(line) for line in record_lines(run_dir)]
    assert sorted(Counter(r["item_id"] for r in records).values()) == [1] * N_ITEMS

    # Once the first run is over the directory is free again.
    third = run_cli(command, env)
    assert third.returncode == 0, third.stderr
    assert server.requests_total == N_ITEMS


# --- item 8: records say which run they belong to -------------------------------------------------------------


def test_records_carry_their_run_and_another_model_cannot_adopt_them(
    server: FakeOpenAIServer, tmp_path: Path, mirror: Path
) -> None:
    run_dir, env, _ = complete_run(server, tmp_path, mirror)
    fingerprint = read_json(run_dir / "run.json")["fingerprint"]
    records = [json.loads(line) for line in record_lines(run_dir)]
    assert all(r["run"]["fingerprint"] == fingerprint and r["run"]["model"] == "openai/fake" for r in records)
    before = (run_dir / "samples.jsonl").read_bytes()

    for damage in ("delete", "garble"):
        if damage == "delete":
            (run_dir / "run.json").unlink()
        else:
            (run_dir / "run.json").write_text('{"fingerprint": ', "utf-8")
        other = run_cli(run_command(server.base_url, run_dir, model="openai/other-model"), env)
        assert other.returncode == 2, other.stderr
        [line] = [line for line in error_lines(other.stderr) if line.startswith("error: ")]
        assert "records of another run" in line and "openai/fake" in line
        assert server.requests_total == N_ITEMS
        assert (run_dir / "samples.jsonl").read_bytes() == before

    # The run's own model rebuilds run.json from its records and asks nothing.
    (run_dir / "run.json").write_text("not json at all", "utf-8")
    same = run_cli(run_command(server.base_url, run_dir), env)
    assert same.returncode == 0, same.stderr
    assert server.requests_total == N_ITEMS
    rebuilt = read_json(run_dir / "run.json")
    assert rebuilt["fingerprint"] == fingerprint and rebuilt["status"] == "complete"
    assert rebuilt["model"]["spec"] == "openai/fake"
    assert (run_dir / "run.damaged.json").read_text("utf-8") == "not json at all"
    assert any("run.json" in line and "unreadable" in line for line in error_lines(same.stderr))
    assert (run_dir / "samples.jsonl").read_bytes() == before


def test_a_run_json_of_other_settings_is_refused(server: FakeOpenAIServer, tmp_path: Path, mirror: Path) -> None:
    run_dir, env, _ = complete_run(server, tmp_path, mirror)
    other = run_cli(run_command(server.base_url, run_dir, model="openai/other-model"), env)
    assert other.returncode == 2
    [line] = error_lines(other.stderr)
    assert "other settings" in line and "openai/fake" in line
    assert server.requests_total == N_ITEMS


# --- item 9: a broken cache is never fatal --------------------------------------------------------------------


def _foreign_sqlite(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE responses (id INTEGER, payload BLOB)")
    db.execute("INSERT INTO responses VALUES (1, x'00')")
    db.commit()
    db.close()


@pytest.mark.parametrize("kind", ["garbage", "foreign"])
def test_a_broken_cache_is_moved_aside_in_one_line(
    kind: str, server: FakeOpenAIServer, tmp_path: Path, mirror: Path
) -> None:
    cache_file = tmp_path / "cache" / "responses.sqlite"
    cache_file.parent.mkdir()
    if kind == "garbage":
        cache_file.write_bytes(b"this is not a database\n" * 300)
    else:
        _foreign_sqlite(cache_file)
    broken = cache_file.read_bytes()

    _, env, result = complete_run(server, tmp_path, mirror)
    assert server.requests_total == N_ITEMS
    assert "Traceback" not in result.stderr
    [notice] = error_lines(result.stderr)
    assert notice.startswith("warning: ") and "moved it to responses.sqlite.broken-" in notice
    [aside] = list(cache_file.parent.glob("responses.sqlite.broken-*"))
    assert aside.read_bytes() == broken
    # The new cache works: a second run dir is answered from it.
    warm = run_cli(run_command(server.base_url, tmp_path / "warm"), env)
    assert warm.returncode == 0, warm.stderr
    assert server.requests_total == N_ITEMS


def _hold_write_lock(path: Path) -> subprocess.Popen[str]:
    """Another process that takes the cache's write lock and keeps it (as a stuck writer would)."""
    code = (
        "import sqlite3, sys, time\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('BEGIN EXCLUSIVE')\n"
        "db.execute(\"INSERT INTO responses VALUES ('holder', 0, '{}')\")\n"
        "print('locked', flush=True)\n"
        "time.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_a_locked_cache_never_fails_a_call(server: FakeOpenAIServer, tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    warnings: list[str] = []
    cache = ResponseCache(path, busy_timeout_s=0.3, warn=warnings.append)
    cache.put("warm", ChatResponse(text="from before"))
    holder = _hold_write_lock(path)
    try:
        engine = Engine(OpenAIBackend("fake", base_url=server.base_url, api_key=TEST_KEY), cache=cache)

        async def ask() -> list[str]:
            try:
                answers = []
                for i in range(3):
                    prompt = f"Item {i}.\nJoy: <score>"
                    _, generation = await engine.generate(prompt, Sampling(temperature=0.0, max_tokens=20))
                    answers.append(generation.text)
                return answers
            finally:
                await engine.backend.aclose()

        started = time.monotonic()
        answers = asyncio.run(ask())
        elapsed = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
        cache.close()
    # Every call answered and returned; the cache is given up once, with one warning, not once per call.
    assert answers == ["Joy: 5"] * 3
    assert server.requests_total == 3
    assert len(warnings) == 1 and "locked" in warnings[0] and "goes on without the cache" in warnings[0]
    assert not cache.enabled
    assert elapsed < 3 * 0.3 + 5


class _JournalModeLockedAtFirst:
    """A real connection whose first journal-mode switches answer "database is locked" at once, as SQLite does
    (without its busy timeout) while another process is opening the same new cache file."""

    def __init__(self, db: sqlite3.Connection, refusals: int) -> None:
        self._db = db
        self.refusals_left = refusals

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql.startswith("PRAGMA journal_mode") and self.refusals_left > 0:
            self.refusals_left -= 1
            raise sqlite3.OperationalError("database is locked")
        return self._db.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def _connect_refusing_wal(monkeypatch: pytest.MonkeyPatch, refusals: int) -> list[_JournalModeLockedAtFirst]:
    opened: list[_JournalModeLockedAtFirst] = []
    real_connect = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> _JournalModeLockedAtFirst:
        opened.append(_JournalModeLockedAtFirst(real_connect(*args, **kwargs), refusals))
        return opened[-1]

    monkeypatch.setattr("empathybench.engine.cache.sqlite3.connect", connect)
    return opened


def test_a_new_cache_opened_by_two_processes_at_once_waits_for_the_journal_mode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    opened = _connect_refusing_wal(monkeypatch, refusals=3)
    warnings: list[str] = []
    cache = ResponseCache(tmp_path / "responses.sqlite", warn=warnings.append)
    try:
        assert warnings == [] and cache.enabled and opened[0].refusals_left == 0
        cache.put("k", ChatResponse(text="kept"))
        assert cache.get("k") == ChatResponse(text="kept")
        assert cache._db is not None and cache._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        cache.close()


def test_a_journal_mode_that_stays_locked_is_bypassed_after_the_busy_timeout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _connect_refusing_wal(monkeypatch, refusals=10_000)
    warnings: list[str] = []
    started = time.monotonic()
    cache = ResponseCache(tmp_path / "responses.sqlite", busy_timeout_s=0.3, warn=warnings.append)
    elapsed = time.monotonic() - started
    assert not cache.enabled and cache.get("k") is None
    assert len(warnings) == 1 and "locked" in warnings[0] and "goes on without it" in warnings[0]
    assert 0.1 < elapsed < 2


# --- item 12: Ctrl-C, SIGTERM and an empty --out --------------------------------------------------------------


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_run_says_how_to_resume_and_run_json_says_interrupted(
    signum: int, code: int, server: FakeOpenAIServer, tmp_path: Path, mirror: Path
) -> None:
    server.latency_s = 0.4
    run_dir, env = tmp_path / "run", cli_env(tmp_path / "cache", mirror)
    command = run_command(server.base_url, run_dir, "--max-concurrency", "1")
    process = start_cli(command, env)
    try:
        wait_for_records(process, run_dir / "samples.jsonl", 2)
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr, stderr
    assert error_lines(stderr) == [f"interrupted; run the same command again to resume (run directory {run_dir})"]
    run_info = read_json(run_dir / "run.json")
    assert run_info["status"] == "interrupted"
    assert run_info["sessions"][-1]["status"] == "interrupted"

    server.latency_s = 0.0
    again = run_cli(command, env)
    assert again.returncode == 0, again.stderr
    records = [json.loads(line) for line in record_lines(run_dir)]
    assert sorted(Counter(r["item_id"] for r in records).values()) == [1] * N_ITEMS
    assert read_json(run_dir / "run.json")["status"] == "complete"


def test_an_empty_out_is_refused(server: FakeOpenAIServer, tmp_path: Path, mirror: Path) -> None:
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    result = run_cli(run_command(server.base_url, ""), cli_env(tmp_path / "cache", mirror), cwd=workdir)
    assert result.returncode == 2
    [line] = error_lines(result.stderr)
    assert line.startswith("error: ") and "--out" in line
    assert list(workdir.iterdir()) == []
    assert server.requests_total == 0


# --- item 20: accounting over sessions ------------------------------------------------------------------------


def test_rerunning_a_finished_run_keeps_its_accounting(server: FakeOpenAIServer, tmp_path: Path, mirror: Path) -> None:
    server.latency_s = 0.05
    run_dir, env, _ = complete_run(server, tmp_path, mirror, "--no-cache")
    first_run = read_json(run_dir / "run.json")
    first_summary = read_json(run_dir / "summary.json")
    assert first_run["usage"]["calls"] == N_ITEMS
    assert first_summary["usage"]["prompt_tokens"] > 0
    time.sleep(1.1)  # creation times have one-second resolution

    again = run_cli(run_command(server.base_url, run_dir, "--no-cache"), env)
    assert again.returncode == 0, again.stderr
    assert server.requests_total == N_ITEMS
    run_info = read_json(run_dir / "run.json")
    summary = read_json(run_dir / "summary.json")
    assert run_info["created"] == first_run["created"]
    for name in ("calls", "prompt_tokens", "completion_tokens"):
        assert run_info["usage"][name] == summary["usage"][name] == first_run["usage"][name]
    assert summary["elapsed_s"] >= first_summary["elapsed_s"] >= 0.05  # at least one request's latency
    first_session, second_session = run_info["sessions"]
    assert first_session["usage"]["calls"] == N_ITEMS and first_session["status"] == "complete"
    assert second_session["usage"]["calls"] == 0 and second_session["status"] == "complete"
    assert summary["session"]["n"] == 2 and summary["session"]["usage"]["calls"] == 0
    assert summary["session"]["elapsed_s"] < summary["elapsed_s"]
    assert "this session (#2): 0 calls" in again.stdout


# --- the store on its own: run dirs written by an older version, hand-edited run.json -----------------------


def _old_version_record(item_id: str) -> bytes:
    return json.dumps({"benchmark": "toy", "item_id": item_id, "status": "ok", "calls": []}).encode() + b"\n"


def test_a_run_dir_of_an_older_version_resumes_with_its_accounting(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    old_run = {"fingerprint": "fp", "status": "complete", "created": "2026-01-01T00:00:00+00:00", "elapsed_s": 7.5}
    old_run["usage"] = {"items_total": 2, "calls": 9, "prompt_tokens": 100, "completion_tokens": 10}
    (run_dir / "run.json").write_text(json.dumps(old_run), "utf-8")
    (run_dir / "samples.jsonl").write_bytes(_old_version_record("a") + _old_version_record("b"))

    store = RunStore(run_dir)
    finished = store.open("fp", model="toy/model")
    try:
        assert set(finished) == {("toy", "a"), ("toy", "b")}
        run_info: dict[str, Any] = {"fingerprint": "fp"}
        store.start_session(run_info)
        store.end_session(run_info, "complete", {"calls": 1, "prompt_tokens": 5, "items_total": 2})
    finally:
        store.close()
    assert run_info["created"] == old_run["created"]
    assert [s["n"] for s in run_info["sessions"]] == [1, 2]
    assert run_info["usage"]["calls"] == 10 and run_info["usage"]["prompt_tokens"] == 105
    assert run_info["elapsed_s"] >= 7.5


def test_untagged_records_without_a_run_json_are_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    samples = _old_version_record("a")
    (run_dir / "samples.jsonl").write_bytes(samples)
    store = RunStore(run_dir)
    with pytest.raises(UserError, match="do not say which run"):
        store.open("fp", model="toy/model")
    assert (run_dir / "samples.jsonl").read_bytes() == samples
    # The refusal released the lock: the directory can be opened (e.g. after the user moves the records).
    (run_dir / "samples.jsonl").unlink()
    again = RunStore(run_dir)
    assert again.open("fp", model="toy/model") == {}
    again.close()


def test_a_hand_edited_run_json_with_odd_values_does_not_crash(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    odd = {"fingerprint": "fp", "created": "then", "sessions": [{"n": "one", "usage": {"calls": "many"}}, 5]}
    (run_dir / "run.json").write_text(json.dumps(odd), "utf-8")
    store = RunStore(run_dir)
    store.open("fp", model="toy/model")
    try:
        run_info: dict[str, Any] = {"fingerprint": "fp"}
        store.start_session(run_info)
        store.end_session(run_info, "complete", {"calls": 3})
    finally:
        store.close()
    assert run_info["usage"]["calls"] == 3 and run_info["created"] == "then"
