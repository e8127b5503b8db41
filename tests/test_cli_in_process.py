"""The suite's in-process runner (conftest.cli_in_process) gives what a child process would: the same exit code,
stdout and stderr for the same command and environment, and it leaves the test's process as it found it."""

import importlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_in_process
from empathybench import cli


def child(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "empathybench", *args]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "args",
    [
        ["list"],  # a long table on stdout
        ["report", "no-such-run-dir"],  # a one-line error on stderr, a failing exit
        ["run", "--model", "scripted/plausible", "--bench", "nope"],  # refused before any work
    ],
)
def test_in_process_equals_a_child(args: list[str], tmp_path: Path, mirror: Path) -> None:
    # The CLI was first imported by an earlier test under another terminal width, as happens in the suite (the run
    # below imports it again under this process's own environment when it ends).
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "60")
        importlib.reload(cli)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update(COLUMNS="100", EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"))
    real = child(args, env, tmp_path)
    here = cli_in_process(args, env, cwd=tmp_path)
    assert (here.returncode, here.stdout, here.stderr) == (real.returncode, real.stdout, real.stderr)
    assert real.stdout or real.stderr


def test_the_process_is_left_as_it_was(tmp_path: Path, mirror: Path) -> None:
    before_env, before_cwd = dict(os.environ), os.getcwd()
    before_handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    before_streams, before_argv = (sys.stdin, sys.stdout, sys.stderr), sys.argv
    # A whole run: it installs its own SIGTERM handler, which must not outlive it.
    env = {"ONLY_THIS": "1", "EMPATHYBENCH_MIRROR": str(mirror), "EMPATHYBENCH_CACHE_DIR": str(tmp_path / "c")}
    args = ["run", "-m", "scripted/plausible", "-b", "eqbench", "-n", "1", "-o", "run", "--quiet"]
    result = cli_in_process(args, env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "run" / "summary.json").is_file()  # relative to the command's cwd
    assert dict(os.environ) == before_env and os.getcwd() == before_cwd
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before_handlers
    assert (sys.stdin, sys.stdout, sys.stderr) == before_streams and sys.argv == before_argv
