"""Shared fixtures: every test reads upstream data through the project's fetch code from the offline mirror."""

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("EMPATHYBENCH_TEST_MIRROR", REPO_ROOT.parent / "shared" / "mirror")).resolve()
GIEBENCH_FIXTURES = Path(__file__).parent / "fixtures" / "giebench" / "official"


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache_and_mirror(tmp_path_factory: pytest.TempPathFactory):
    """A fresh cache for the whole session and the offline mirror in place of the web."""
    saved = {k: os.environ.get(k) for k in ("EMPATHYBENCH_CACHE_DIR", "EMPATHYBENCH_MIRROR")}
    os.environ["EMPATHYBENCH_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    os.environ["EMPATHYBENCH_MIRROR"] = str(MIRROR)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def mirror() -> Path:
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    return MIRROR


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if MIRROR.is_dir():
        return
    skip = pytest.mark.skip(reason=f"the offline mirror is not at {MIRROR}")
    for item in items:
        if "mirror" in getattr(item, "fixturenames", ()):
            item.add_marker(skip)


# The test files that run the embedded model. They share one worker: there the model is loaded once and the
# answers one file asks are in the worker's cache for the next, which keeps
# the suite's time from depending on where the scheduler happened to put them. tests/test_scheduling.py
# checks this list against the files that carry the `model` mark.
EMBEDDED_MODEL_FILES = frozenset(
    {
        "test_emobench_local.py",
        "test_empathetic_judge_local.py",
        "test_first_run.py",
        "test_local_model.py",
        "test_seceu_run.py",
    }
)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With `--dist loadfile` (the default here), each file is one worker's, and the embedded model's files are
    one worker's together; any other --dist keeps xdist's own scheduler."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class EmbeddedModelFilesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "embedded-model" if Path(path).name in EMBEDDED_MODEL_FILES else path

    return EmbeddedModelFilesTogether(config, log)


def kill_once_polled(command: list[str], env: dict[str, str], batches: Any, polls: int = 3) -> None:
    """Start `command`; once it has polled the fake's held batch `polls` times, kill it with SIGKILL (kill -9)."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while batches.retrieves < polls and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert batches.retrieves >= polls, "the command never polled its batch"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()


def words_joined(html: str) -> str:
    """A page's markup without the spans that keep a word of a table cell on one line (report/html.py's
    whole_words: "<span class="w">gpt-4-1106-preview</span>"), so a test finds a cell's text as it was written."""
    import re

    return re.sub(r'<span class="w">([^<]*)</span>', r"\1", html)


def two_scripted_runs(root: Path, *options: str) -> tuple[Path, Path]:
    """`empathybench run OPTIONS` of scripted/plausible into root/a and of scripted/plausible-2 into root/b, offline
    (GIEBench's data from the test fixtures); skipped without the mirror."""
    from typer.testing import CliRunner

    from empathybench.cli import app

    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    runs = root / "a", root / "b"
    for out, model in zip(runs, ("scripted/plausible", "scripted/plausible-2"), strict=True):
        command = ["run", "-m", model, "-o", str(out), "--quiet", "--no-cache", "--allow-unverified"]
        result = CliRunner().invoke(app, [*command, "-O", f"giebench.data_dir={GIEBENCH_FIXTURES}", *options])
        assert result.exit_code == 0, result.output
    return runs


@pytest.fixture
def env(tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean environment for a CLI run: no keys or URLs from the parent, a fresh cache, the offline mirror, an API
    key for the fake servers; cwd = tmp_path."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "ANTHROPIC_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", str(mirror))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def exit_code(value: object) -> int:
    """The exit status a SystemExit with this code gives the shell."""
    return value if isinstance(value, int) else 0 if value is None else 1


def cli_in_process(
    args: list[str], env: dict[str, str] | None = None, *, cwd: Path | str | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m empathybench ARGS` with exactly the environment `env` (default: this process's) and cwd, run in
    this process.

    Starting a child costs ~1-2 s of CPU (importing the SDKs), most of the suite's time, so a test runs its command
    here unless a process boundary is what it tests (kill -9, signals, two processes at once): those keep
    subprocess. What the command sees is a child's: its own environment, working directory, argv, empty stdin and
    fresh stdout/stderr, and the CLI module imported afresh (its consoles read COLUMNS and the like at import); the
    signal handlers it installs are taken back. An uncaught exception is exit code 1 with its traceback on stderr,
    as in a child."""
    import importlib
    import io
    import sys
    import traceback

    from empathybench import cli

    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    env = saved_env if env is None else env
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", write_through=True)
    os.environ.clear()
    os.environ.update(env)
    code: int
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = ["empathybench", *args]
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(""), out, err
        importlib.reload(cli)  # consoles as the command's environment makes them
        try:
            cli.main()
            code = 0
        except SystemExit as stopped:
            code = exit_code(stopped.code)
            if stopped.code is not None and not isinstance(stopped.code, int):
                print(stopped.code, file=err)
        except Exception:
            traceback.print_exc(file=err)
            code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        importlib.reload(cli)  # consoles as the test's own environment makes them
        for signum, handler in saved_handlers.items():
            if handler is not None:
                signal.signal(signum, handler)

    def text(stream: io.TextIOWrapper) -> str:
        stream.flush()
        raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
        return raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")

    return subprocess.CompletedProcess(["empathybench", *args], code, text(out), text(err))


def run_in_process(
    command: list[str], env: dict[str, str], *, cwd: Path | str | None = None
) -> subprocess.CompletedProcess[str]:
    """cli_in_process for a command written as `[sys.executable, "-m", "empathybench", ARGS...]`."""
    import sys

    assert command[:3] == [sys.executable, "-m", "empathybench"], command
    return cli_in_process(command[3:], env, cwd=cwd)


def invoke(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `empathybench ARGS` in process; an uncaught exception fails the test."""
    import sys

    from empathybench import cli

    saved = sys.argv
    sys.argv = ["empathybench", *args]
    try:
        with pytest.raises(SystemExit) as stopped:
            cli.main()
    finally:
        sys.argv = saved
    out, err = capsys.readouterr()
    return exit_code(stopped.value.code), out, err


def run_instrument(root: Path, bench: str, model: str, *args: str) -> tuple[dict[str, Any], list[dict[str, Any]], Path]:
    """`empathybench run -m MODEL --bench BENCH ARGS` in process into a directory under `root` named after the
    model and arguments: the instrument's summary entry, its records (samples.jsonl) and the run directory."""
    import json
    import re

    out = root / re.sub(r"\W", "-", model + "".join(args))
    result = cli_in_process(["run", "-m", model, "--bench", bench, "--out", str(out), "--no-cache", *args])
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))["benchmarks"][bench]
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]
    return summary, records, out
