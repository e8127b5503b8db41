"""`-M extra_body.KEY=JSON` and `--judge-arg extra_body.KEY=JSON`: server-specific request fields (vLLM, SGLang,
llama.cpp servers), checked in the body the fake OpenAI server receives, in each call's `sent` record, in the cache
key and the run fingerprint; the fields the protocol owns are refused in one line."""

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import invoke
from empathybench.errors import ModelConfigError
from empathybench.models.base import ChatRequest, Message, Sampling
from empathybench.models.capabilities import parse_model_args
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.testing.fake_openai import FakeOpenAIServer, fill_score_lines

QWEN3 = 'extra_body.chat_template_kwargs={"enable_thinking": false}'


class Recorder:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> str:
        self.bodies.append(body)
        if body["model"] == "judge":
            return "Good"
        return fill_score_lines(body, 5)


@pytest.fixture
def recorder() -> Iterator[tuple[Recorder, FakeOpenAIServer]]:
    answers = Recorder()
    with FakeOpenAIServer(answer=answers) as server:
        yield answers, server


def run_eqbench(server: FakeOpenAIServer) -> list[str]:
    return ["run", "--model", "openai/fake", "--base-url", server.base_url, "--bench", "eqbench", "--limit", "2", "-q"]


def test_extra_body_fields_reach_the_server_and_the_records(
    env: Path, recorder: tuple[Recorder, FakeOpenAIServer], capsys: pytest.CaptureFixture[str]
) -> None:
    answers, server = recorder
    code, _, err = invoke(capsys, *run_eqbench(server), "-M", QWEN3, "-M", "extra_body.top_k=20", "--out", "a")
    assert code == 0, err
    assert len(answers.bodies) == 2
    for body in answers.bodies:
        assert body["chat_template_kwargs"] == {"enable_thinking": False}
        assert body["top_k"] == 20
        assert "temperature" in body and "extra_body" not in body  # the protocol's sampling beside them
    calls = [c for line in (env / "a" / "samples.jsonl").read_text().splitlines() for c in json.loads(line)["calls"]]
    assert calls and all(c["sent"]["chat_template_kwargs"] == {"enable_thinking": False} for c in calls)
    assert all(c["sent"]["top_k"] == 20 for c in calls)
    run_info = json.loads((env / "a" / "run.json").read_text())
    assert run_info["model"]["model_args"]["extra_body"] == {
        "chat_template_kwargs": {"enable_thinking": False},
        "top_k": 20,
    }


def test_extra_body_is_part_of_the_cache_key_and_the_fingerprint(
    env: Path, recorder: tuple[Recorder, FakeOpenAIServer], capsys: pytest.CaptureFixture[str]
) -> None:
    answers, server = recorder
    assert invoke(capsys, *run_eqbench(server))[0] == 0
    assert invoke(capsys, *run_eqbench(server), "-M", QWEN3)[0] == 0
    assert len(answers.bodies) == 4  # not answered from the cache of the run without the field
    assert invoke(capsys, *run_eqbench(server), "-M", QWEN3)[0] == 0
    assert len(answers.bodies) == 4  # the same fields again: the cache answers
    runs = sorted(p.name for p in (env / "runs").iterdir())
    assert len(runs) == 2  # two fingerprints, two run directories


def test_the_judge_gets_its_own_extra_body(
    env: Path, recorder: tuple[Recorder, FakeOpenAIServer], capsys: pytest.CaptureFixture[str]
) -> None:
    answers, server = recorder
    args = ["run", "--model", "openai/fake", "--base-url", server.base_url, "--bench", "empathetic", "--limit", "1"]
    judge = ["--judge", "openai/judge", "--judge-arg", 'extra_body.guided_choice=["Good", "Okay", "Bad"]']
    judge += ["--judge-arg", f"base_url={server.base_url}"]
    code, _, err = invoke(capsys, *args, *judge, "-q", "--out", "j")
    assert code == 0, err
    judged = [b for b in answers.bodies if b["model"] == "judge"]
    tested = [b for b in answers.bodies if b["model"] == "fake"]
    assert judged and tested
    assert all(b["guided_choice"] == ["Good", "Okay", "Bad"] for b in judged)
    assert not any("guided_choice" in b for b in tested)


@pytest.mark.parametrize(
    ("pair", "expected"),
    [
        ("extra_body.temperature=0.5", "the instruments set temperature (a protocol's sampling is part of"),
        ("extra_body.max_tokens=10", "max_tokens=N sets the token budget"),
        ('extra_body.model="x"', "model is the protocol's own"),
        ("extra_body.messages=[]", "messages is the protocol's own"),
        ("extra_body.stream=true", "stream is the protocol's own"),
        ("extra_body.n=2", "n is the protocol's own"),
        ("extra_body.top_k=twenty", "the value must be JSON"),
        ("extra_body.=1", "needs a KEY"),
    ],
)
def test_fields_the_protocol_owns_and_bad_json_are_one_line(
    env: Path, pair: str, expected: str, recorder: tuple[Recorder, FakeOpenAIServer], capsys: pytest.CaptureFixture[str]
) -> None:
    answers, server = recorder
    code, _, err = invoke(capsys, *run_eqbench(server), "-M", pair)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code != 0 and len(lines) == 1 and expected in lines[0], err
    assert "Traceback" not in err
    assert answers.bodies == []  # refused before any call


def test_a_field_the_instruments_request_sets_is_refused() -> None:
    """EQ-Bench 3 sends min_p itself (its protocol); lm-eval protocols send seed and stop: the user's field for the
    same name would change the measurement."""
    backend = OpenAIBackend(
        "fake",
        base_url="http://127.0.0.1:9/v1",
        api_key="k",
        args=parse_model_args(["extra_body.min_p=0.2", "extra_body.seed=7"]),
    )
    with pytest.raises(ModelConfigError, match=r"extra_body\.min_p: this instrument's requests set min_p"):
        backend.request_parameters(ChatRequest((Message("user", "hi"),), Sampling(0.7, 10, min_p=0.1)))
    with pytest.raises(ModelConfigError, match=r"extra_body\.seed"):
        backend.request_parameters(ChatRequest((Message("user", "hi"),), Sampling(0.7, 10, seed=3)))
    sent = backend.request_parameters(ChatRequest((Message("user", "hi"),), Sampling(0.7, 10)))
    assert sent["min_p"] == 0.2 and sent["seed"] == 7


def test_extra_body_goes_over_the_wire_through_the_sdk() -> None:
    answers = Recorder()
    with FakeOpenAIServer(answer=answers) as server:
        args = parse_model_args([QWEN3, 'extra_body.guided_json={"type": "object"}'])
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key="k", args=args)

        async def ask() -> None:
            try:
                await backend.complete(ChatRequest((Message("user", "hi"),), Sampling(0.0, 10)))
            finally:
                await backend.aclose()

        asyncio.run(ask())
    (body,) = answers.bodies
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["guided_json"] == {"type": "object"}
    assert "extra_body" not in body  # merged into the body by the SDK, as the servers expect
