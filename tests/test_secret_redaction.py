"""No API key reaches a file, a report or the terminal, even from a server that echoes it back.

The fake servers' echo mode repeats the request's credentials (Authorization, x-api-key, the path with its query)
in their 400/500 error messages and in every reply. Real commands run in a subprocess; then every file of the run
directory, the cache directory and the --out JSON, and the captured stdout/stderr, are searched for the secrets.
"""

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from empathybench.engine.cache import ResponseCache
from empathybench.models.base import ChatResponse
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.redaction import (
    REDACTED,
    _forget_registered_for_tests,
    redact,
    redact_data,
    register_secret,
    split_url_query,
    strip_url_credentials,
    url_secrets,
)
from empathybench.rundir.store import RunStore
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer

OPENAI_KEY = "sk-leak-test-5f2c9a7e1b"
ANTHROPIC_KEY = "sk-ant-leak-test-93d1e0"
URL_PASSWORD = "pw-in-url-7d3f21"
URL_QUERY_KEY = "qk-in-url-8e4a55"


def cli_env(cache_dir: Path, mirror: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(cache_dir), EMPATHYBENCH_MIRROR=str(mirror), **extra)
    return env


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "empathybench", *args], env=env, capture_output=True, text=True, timeout=180
    )


def leaks(secrets: list[str], roots: list[Path], outputs: list[str]) -> list[str]:
    """Where any secret appears: file paths under the roots, or "stdout/stderr"."""
    found = []
    for root in roots:
        paths = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
        for path in paths:
            data = path.read_bytes()
            found += [f"{path}: {s}" for s in secrets if s.encode() in data]
    found += [f"output: {s}" for s in secrets for text in outputs if s in text]
    return found


def marker_in(path: Path) -> bool:
    return REDACTED.encode() in path.read_bytes()


@pytest.fixture(autouse=True)
def _forget_registered_secrets() -> Iterator[None]:
    """Secrets registered by one test (directly or by a backend) do not stay known for the next ones."""
    yield
    _forget_registered_for_tests()


def test_redact_covers_the_forms_a_secret_takes() -> None:
    register_secret('k3y/with+odd=chars"')
    text = (
        'plain k3y/with+odd=chars" json "k3y/with+odd=chars\\"" url k3y%2Fwith%2Bodd%3Dchars%22 '
        "html k3y/with+odd=chars&quot; template k3y/with+odd=chars&#34;"
    )
    assert "k3y" not in redact(text) and redact(text).count(REDACTED) == 5
    assert redact_data({"a": ['x k3y/with+odd=chars" y', 3]}) == {"a": [f"x {REDACTED} y", 3]}
    register_secret("short")  # too short to be a key: left alone rather than blanking ordinary words
    assert redact("a short note") == "a short note"


def test_url_credentials_are_found_stripped_and_split() -> None:
    url = f"https://bob:{URL_PASSWORD}@gw.example/v1?api_key={URL_QUERY_KEY}&region=eu"
    secrets = url_secrets(url)
    assert URL_PASSWORD in secrets and URL_QUERY_KEY in secrets
    assert base64.b64encode(f"bob:{URL_PASSWORD}".encode()).decode() in secrets
    assert strip_url_credentials(url) == f"https://gw.example/v1?api_key={REDACTED}&region=eu"
    assert split_url_query(url) == (
        f"https://bob:{URL_PASSWORD}@gw.example/v1",
        {"api_key": URL_QUERY_KEY, "region": "eu"},
    )
    backend = OpenAIBackend("m", base_url=url, api_key="sk-something-long")
    assert backend.identity()["base_url"] == strip_url_credentials(url)


def test_writers_redact_whatever_reaches_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defence in depth: a key that slipped past the sources is still blanked where things are written."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    store = RunStore(tmp_path / "run")
    store.open("fingerprint")
    store.append({"benchmark": "b", "item_id": "1", "status": "error", "error": f"HTTP 400: Bearer {OPENAI_KEY}"})
    quoted = 'gw-secret"with\\quote'  # characters JSON escapes: the line must stay valid JSON
    register_secret(quoted)
    store.append({"benchmark": "b", "item_id": "2", "status": "error", "error": f"echo {quoted} end"})
    store.write_run({"error": OPENAI_KEY})
    store.write_summary({"note": {OPENAI_KEY: 1}})
    store.close()
    cache = ResponseCache(tmp_path / "cache" / "responses.sqlite")
    cache.put("k", ChatResponse(text=f"your key is {OPENAI_KEY}"))
    assert cache.get("k") is not None and cache.get("k").text == f"your key is {REDACTED}"  # type: ignore[union-attr]
    cache.close()
    assert leaks([OPENAI_KEY, quoted, json.dumps(quoted)[1:-1]], [tmp_path], []) == []
    lines = (tmp_path / "run" / "samples.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(line)["error"] for line in lines] == [f"HTTP 400: Bearer {REDACTED}", f"echo {REDACTED} end"]
    assert all(marker_in(tmp_path / "run" / name) for name in ("samples.jsonl", "run.json", "summary.json"))


def test_openai_run_and_judge_validate_never_leak_the_key(tmp_path: Path, mirror: Path) -> None:
    run_dir, cache_dir, out = tmp_path / "run", tmp_path / "cache", tmp_path / "out" / "validation.json"
    env = cli_env(cache_dir, mirror, OPENAI_API_KEY=OPENAI_KEY)
    with FakeOpenAIServer(echo_auth=True) as server:
        server.script_faults("400", "500")  # the first item is rejected, the second retried after a 500
        run_args = ["run", "--model", "openai/fake", "--base-url", server.base_url, "--bench", "eqbench"]
        run = cli([*run_args, "--limit", "4", "--max-concurrency", "1", "--out", str(run_dir)], env)
        report = cli(["report", str(run_dir)], env)
        server.script_faults("400")
        validate_args = ["judge", "validate", "--judge", "openai/gpt-fake", "--base-url", server.base_url]
        validate = cli([*validate_args, "--limit", "3", "--max-concurrency", "1", "--out", str(out)], env)
        received = server.authorizations
    assert received == {f"Bearer {OPENAI_KEY}"}  # the key was sent, and echoed back in every answer
    assert run.returncode == 1 and report.returncode == 0 and validate.returncode == 1, run.stderr + validate.stderr
    outputs = [p.stdout + p.stderr for p in (run, report, validate)]
    assert leaks([OPENAI_KEY], [run_dir, cache_dir, out], outputs) == []

    records = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines()]
    [failed] = [r for r in records if r["status"] == "error"]
    assert "HTTP 400" in failed["error"] and f"Bearer {REDACTED}" in failed["error"]
    assert all(f"Bearer {REDACTED}" in r["calls"][0]["reply"] for r in records if r["status"] == "ok")
    for name in ("report.html", "report.md", "samples.jsonl"):
        assert name == "report.md" or marker_in(run_dir / name), name
    validation: dict[str, Any] = json.loads(out.read_text("utf-8"))
    assert f"Bearer {REDACTED}" in validation["call_errors"][0]
    assert REDACTED in validate.stderr  # the printed first failure, redacted


def test_anthropic_run_never_leaks_the_key(tmp_path: Path, mirror: Path) -> None:
    run_dir, cache_dir = tmp_path / "run", tmp_path / "cache"
    with FakeAnthropicServer(api_key=ANTHROPIC_KEY, echo_auth=True) as server:
        server.script_faults("400", "500")
        env = cli_env(cache_dir, mirror, ANTHROPIC_API_KEY=ANTHROPIC_KEY, ANTHROPIC_BASE_URL=server.base_url)
        args = ["run", "--model", "anthropic/claude-fake", "--bench", "eqbench", "--limit", "3"]
        run = cli([*args, "--max-concurrency", "1", "--out", str(run_dir)], env)
        requests = server.requests
    assert [r.outcome for r in requests] == ["400", "500", "ok", "ok"]
    assert run.returncode == 1, run.stderr
    assert leaks([ANTHROPIC_KEY], [run_dir, cache_dir], [run.stdout + run.stderr]) == []
    records = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines()]
    [failed] = [r for r in records if r["status"] == "error"]
    assert REDACTED in failed["error"] and all(REDACTED in r["calls"][0]["reply"] for r in records if r["calls"])


def test_a_key_inside_the_base_url_is_sent_but_never_recorded(tmp_path: Path, mirror: Path) -> None:
    run_dir, cache_dir = tmp_path / "run", tmp_path / "cache"
    env = cli_env(cache_dir, mirror, OPENAI_API_KEY=OPENAI_KEY)
    with FakeOpenAIServer(echo_auth=True) as server:
        server.script_faults("400")
        base_url = f"http://gateway-user:{URL_PASSWORD}@127.0.0.1:{server.port}/v1?api_key={URL_QUERY_KEY}"
        args = ["run", "--model", "openai/fake", "--base-url", base_url, "--bench", "eqbench", "--limit", "3"]
        run = cli([*args, "--max-concurrency", "1", "--out", str(run_dir)], env)
        outcomes, received, port = server.outcomes, server.authorizations, server.port
    # The URL's credentials did reach the server (Basic auth from user:password, the key as a query parameter) and
    # the SDK's paths were not swallowed by the query string: every request was answered at /v1/chat/completions.
    assert outcomes["400"] == 1 and outcomes["ok"] == 2
    assert received == {"Basic " + base64.b64encode(f"gateway-user:{URL_PASSWORD}".encode()).decode()}
    assert run.returncode == 1, run.stderr
    secrets = [URL_PASSWORD, URL_QUERY_KEY, OPENAI_KEY, next(iter(received)).removeprefix("Basic ")]
    assert leaks(secrets, [run_dir, cache_dir], [run.stdout + run.stderr]) == []
    run_info = json.loads((run_dir / "run.json").read_text("utf-8"))
    assert run_info["model"]["base_url"] == f"http://127.0.0.1:{port}/v1?api_key={REDACTED}"
    records = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines()]
    assert all(f"api_key={REDACTED}" in r["calls"][0]["reply"] for r in records if r["status"] == "ok")
