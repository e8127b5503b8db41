"""Every model role has its own endpoint and key: the model under test, the judge and the simulated person each on
a server of their own, which takes only its own key; the key itself is never written anywhere. And every backend
bounds its requests by `--timeout`, the Anthropic SDK's own client included."""

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR, cli_in_process
from empathybench.instruments.registry import all_benchmarks
from empathybench.models.anthropic_backend import AnthropicBackend
from empathybench.models.base import ChatRequest, Sampling, TransientBackendError
from empathybench.models.plausible import PlausibleResponder
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"the offline mirror is not at {MIRROR}")

KEYS = {"model": "sk-model-key-1111", "judge": "sk-judge-key-2222", "simulator": "sk-simulator-key-3333"}
MODELS = {"model": "gen-model", "judge": "judge-model", "simulator": "person-model"}


def canned_server(instrument: str, role: str) -> FakeOpenAIServer:
    """A server for one role of `instrument`: its canned answers, and only that role's key."""
    canned = {b.name: b.canned for b in all_benchmarks().values() if b.canned is not None}
    responder = PlausibleResponder(1, canned)
    tag = instrument if role == "model" else f"{instrument}:{role}"

    def answer(body: dict[str, Any]) -> str:
        messages = tuple((m["role"], m["content"]) for m in body["messages"])
        from empathybench.models.base import Message

        request = ChatRequest(tuple(Message(r, c) for r, c in messages), Sampling(temperature=0, max_tokens=1), tag)
        return responder(request)

    return FakeOpenAIServer(answer=answer, models=(MODELS[role],), api_key=KEYS[role])


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "EMPATHYBENCH_CACHE_DIR": str(tmp_path / "cache"),
        "EMPATHYBENCH_MIRROR": str(MIRROR),
        "OPENAI_API_KEY": KEYS["model"],
        "JUDGE_KEY": KEYS["judge"],
        "PERSON_KEY": KEYS["simulator"],
    }


def _run_dir_text(directory: Path) -> str:
    return "\n".join(p.read_text("utf-8", errors="replace") for p in directory.rglob("*") if p.is_file())


def test_the_model_and_the_judge_on_two_servers_each_with_its_own_key(tmp_path: Path) -> None:
    model_server, judge_server = canned_server("empathetic", "model"), canned_server("empathetic", "judge")
    with model_server, judge_server:
        out = tmp_path / "run"
        args = ["run", "-m", f"openai/{MODELS['model']}", "--base-url", model_server.base_url]
        args += ["--judge", f"openai/{MODELS['judge']}", "--judge-base-url", judge_server.base_url]
        args += ["--judge-arg", "api_key_env=JUDGE_KEY", "--bench", "empathetic", "--limit", "2", "-q"]
        done = cli_in_process([*args, "--out", str(out)], _env(tmp_path))
        assert done.returncode == 0, done.stderr
        # Each server saw only its own role's calls, with its own key (a wrong key would have been a 401).
        assert model_server.authorizations == {f"Bearer {KEYS['model']}"}
        assert judge_server.authorizations == {f"Bearer {KEYS['judge']}"}
        assert model_server.outcomes.get("401", 0) == 0 and judge_server.outcomes.get("401", 0) == 0
        assert model_server.requests_total == 2 and judge_server.requests_total >= 4  # 2 replies rated, each source
        judge_url = judge_server.base_url.rstrip("/")
    run_info = json.loads((out / "run.json").read_text("utf-8"))
    assert run_info["judge"]["base_url"] == judge_url
    assert run_info["judge"]["api_key_env"] == "JUDGE_KEY" and run_info["model"].get("api_key_env") is None
    written = _run_dir_text(out)
    assert all(key not in written for key in KEYS.values())  # the keys themselves are nowhere

    # base_url in the role's arguments is the same endpoint (and --judge-base-url with a different one is refused).
    with FakeOpenAIServer(answer=lambda body: "Good", models=(MODELS["judge"],), api_key=KEYS["judge"]) as other:
        clash = cli_in_process([*args, "--judge-arg", f"base_url={other.base_url}", "--out", str(tmp_path / "x")])
        assert clash.returncode == 2 and "name two servers" in clash.stderr
        assert other.requests_total == 0


def test_a_role_whose_key_variable_is_not_set_is_one_line_before_any_call(tmp_path: Path) -> None:
    with canned_server("empathetic", "model") as model_server:
        env = {k: v for k, v in _env(tmp_path).items() if k != "JUDGE_KEY"}
        args = ["run", "-m", f"openai/{MODELS['model']}", "--base-url", model_server.base_url, "--bench", "empathetic"]
        args += ["--judge", "openai/judge-model", "--judge-base-url", "http://127.0.0.1:9/v1"]
        args += ["--judge-arg", "api_key_env=JUDGE_KEY", "--out", str(tmp_path / "run")]
        done = cli_in_process(args, env)
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            "error: JUDGE_KEY is not set; export it (api_key_env of --judge-arg)"
        ]
        assert model_server.requests_total == 0 and not (tmp_path / "run").exists()
        # A key given where the variable's name belongs is refused without echoing it.
        args[-3] = "api_key_env=sk-a-pasted-key"
        done = cli_in_process(args, env)
        assert done.returncode == 2 and "sk-a-pasted-key" not in done.stderr and "environment variable" in done.stderr


def test_three_roles_on_three_servers(tmp_path: Path) -> None:
    servers = {role: canned_server("spiral", role) for role in ("model", "judge", "simulator")}
    for server in servers.values():
        server.start()
    try:
        out = tmp_path / "run"
        args = ["run", "-m", f"openai/{MODELS['model']}", "--base-url", servers["model"].base_url]
        args += ["--judge", f"openai/{MODELS['judge']}", "--judge-arg", f"base_url={servers['judge'].base_url}"]
        args += ["--judge-arg", "api_key_env=JUDGE_KEY", "--simulator", f"openai/{MODELS['simulator']}"]
        args += ["--simulator-base-url", servers["simulator"].base_url, "--simulator-arg", "api_key_env=PERSON_KEY"]
        args += ["--bench", "spiral", "--limit", "1", "--option", "spiral.num_turns=2", "-q", "--out", str(out)]
        done = cli_in_process(args, _env(tmp_path))
        assert done.returncode == 0, done.stderr
        for role, server in servers.items():
            assert server.authorizations == {f"Bearer {KEYS[role]}"}, role
            assert server.requests_total > 0 and server.outcomes.get("401", 0) == 0, role
    finally:
        for server in servers.values():
            server.stop()
    run_info = json.loads((out / "run.json").read_text("utf-8"))
    assert run_info["simulator"]["model"] == MODELS["simulator"]
    assert run_info["simulator"]["api_key_env"] == "PERSON_KEY"
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]
    roles = {call.get("role") for call in samples[0]["calls"]}
    assert roles == {None, "judge", "simulator"}
    assert all(key not in _run_dir_text(out) for key in KEYS.values())


def test_the_anthropic_sdk_honours_the_timeout_over_the_wire() -> None:
    """The engine bounds each live call itself; the backend's own SDK client must too (it alone bounds the batch
    API's calls), so here the backend is called directly, without the engine."""

    def slow(body: dict[str, Any]) -> str:
        time.sleep(3)
        return "late"

    with FakeAnthropicServer(api_key="sk-ant-test", answer=slow) as server:
        backend = AnthropicBackend("claude-test", base_url=server.base_url, api_key="sk-ant-test")
        backend.set_request_timeout(0.5)
        request = ChatRequest.of("hello", Sampling(temperature=0, max_tokens=8))

        async def ask() -> None:
            try:
                await backend.complete(request)
            finally:
                await backend.aclose()

        started = time.monotonic()
        with pytest.raises(TransientBackendError) as failure:
            asyncio.run(ask())
        assert failure.value.kind == "timeout"
        assert time.monotonic() - started < 2.5  # not the SDK's 600 s default, nor the server's 3 s
