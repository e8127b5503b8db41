"""Inside inspect, what goes over the wire is what the instrument asked for, or the result says it is not (issue 27).

inspect's `openai` provider takes a model name it does not know (`smollm`) for OpenAI's newest reasoning model: it
drops `temperature`, sends `max_completion_tokens` (which llama.cpp's server ignores) and the system prompt with
role `developer` (which llama.cpp's server refuses). The bridge keeps the body inspect's provider built with each
call, compares it with the instrument's request, and flags the result; `openai-api/<service>/<model>` sends the
request as asked. Against the fake OpenAI server, which keeps the bodies it received.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if importlib.util.find_spec("inspect_ai") is None:
    if os.environ.get("CI"):  # CI installs the `inspect` extra: there these tests must run, never skip
        raise ImportError("inspect_ai is not installed; CI installs the `inspect` extra")
    pytest.skip("inspect_ai is not installed (the `inspect` extra)", allow_module_level=True)

from conftest import MIRROR
from empathybench.inspect_bridge.wire import (
    ANTHROPIC,
    CHAT,
    RESPONSES,
    mark_request_changes,
    request_changes,
    wire_body,
)
from empathybench.models.anthropic_backend import AnthropicBackend
from empathybench.models.base import ChatRequest, Message, Sampling
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.report.validity import result_validity
from empathybench.testing.fake_openai import FakeOpenAIServer

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

API_KEY = "sk-inspect-wire-test"
# llama.cpp's server as the issue met it: roles system/user/assistant only (developer: HTTP 500), and the token
# cap read from max_tokens alone.
LLAMA_CPP = {"roles": ("system", "user", "assistant"), "token_fields": ("max_tokens",)}

REQUEST = ChatRequest.of(
    [Message("system", "You rate feelings."), Message("user", "How does Ann feel?")],
    Sampling(temperature=0.31, max_tokens=60, top_p=0.9, top_k=20, min_p=0.05, stop=("\n\n",), seed=7),
)


# --- the comparison, on bodies built by hand and by EmpathyBench's own backends ---------------------------------


def _asked(request: ChatRequest = REQUEST) -> tuple[list[dict[str, str]], dict[str, Any]]:
    return request.messages_as_dicts(), request.sampling.as_dict()


@pytest.mark.parametrize(
    "sampling",
    [
        REQUEST.sampling,
        Sampling(temperature=0.0, max_tokens=16),
        Sampling(temperature=0.7, max_tokens=512, top_p=None, repeat_penalty=1.1, seed=3),
    ],
)
def test_what_empathybench_run_sends_is_no_change(sampling: Sampling) -> None:
    request = ChatRequest(REQUEST.messages, sampling)
    messages, asked = _asked(request)
    openai_body = OpenAIBackend("smollm", base_url="http://127.0.0.1:9/v1", api_key="x").request_body(request)
    assert request_changes(CHAT, messages, asked, openai_body) == []
    # Anthropic's API has no seed, min_p or repeat_penalty, and takes top_p 1.0 as its default: run leaves them
    # out there too, which is no change.
    anthropic = AnthropicBackend("claude-3-5-haiku-latest", api_key="x").request_arguments(request)
    assert request_changes(ANTHROPIC, messages, asked, wire_body(anthropic)) == []


def test_the_reasoning_rewrite_is_named_field_by_field() -> None:
    messages, asked = _asked()
    body = {
        "model": "smollm",
        "messages": [{"role": "developer", "content": "You rate feelings."}, messages[1]],
        "top_p": 0.9,
        "max_completion_tokens": 60,
        "seed": 7,
        "stop": ["\n\n"],
        "top_k": 20,
        "min_p": 0.05,
    }
    assert request_changes(CHAT, messages, asked, body) == [
        "temperature dropped",
        "max_tokens sent as max_completion_tokens",
        "system message sent as developer",
    ]


def test_changed_added_and_dropped_fields_and_messages_are_named() -> None:
    messages, asked = _asked()
    body = {
        "model": "smollm",
        "messages": [messages[1]],
        "temperature": 1.0,
        "top_p": 0.9,
        "max_tokens": 4096,
        "seed": 7,
        "stop": "\n\n",  # one stop sequence as a string is the same stop
        "min_p": 0.05,
        "frequency_penalty": 0.5,
    }
    assert request_changes(CHAT, messages, asked, body) == [
        "temperature sent as 1.0 (asked 0.31)",
        "top_k dropped",
        "max_tokens sent as 4096 (asked 60)",
        "frequency_penalty added (0.5)",
        "2 messages sent as 1",
        "system message sent as user",
        "the text of 1 message changed",
    ]


def test_responses_api_bodies_are_read_in_their_own_shape() -> None:
    messages, asked = _asked(ChatRequest(REQUEST.messages, Sampling(temperature=0.31, max_tokens=60, seed=7)))
    body = {
        "model": "smollm",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You rate feelings."}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "How does Ann feel?"}]},
        ],
        "temperature": 0.31,
        "top_p": 1.0,
        "max_output_tokens": 60,  # the Responses API's own cap; it has no seed
    }
    assert request_changes(RESPONSES, messages, asked, body) == ["system message sent as developer"]


def test_the_sdk_body_merges_extra_body_and_leaves_headers_and_unset_fields_out() -> None:
    recorded = {
        "model": "m",
        "messages": [],
        "tools": None,
        "extra_headers": {"x-irid": "1"},
        "extra_body": {"top_k": 20},
        "temperature": 0.5,
    }
    assert wire_body(recorded) == {"model": "m", "messages": [], "temperature": 0.5, "top_k": 20}


def test_a_changed_request_makes_the_result_not_comparable() -> None:
    records = [
        {"status": "ok", "calls": [{"request_changes": ["temperature dropped"]}, {"request_changes": []}]},
        {"status": "ok", "calls": [{"role": "judge", "request_changes": ["temperature dropped"]}]},
        {"status": "error", "calls": [], "request_changes": ["system message sent as developer"]},
    ]
    result: dict[str, Any] = {"score": 50.0, "n_items": 3, "n_parsed": 3}
    mark_request_changes(result, records)
    changed = result["request_changed"]
    assert changed["n_calls_changed"] == 2 and changed["n_calls_checked"] == 3 and changed["n_failed_items"] == 1
    assert changed["changes"] == [
        "temperature dropped",
        "judge: temperature dropped",
        "system message sent as developer",
    ]
    validity = result_validity(result)
    assert validity["status"] == "invalid" and validity["label"] == "not comparable (request changed)"
    assert validity["reasons"] == [
        "not comparable (request changed): inspect's provider changed the instrument's request in 2 of 3 answered "
        "calls and 1 failed item: temperature dropped, judge: temperature dropped, system message sent as developer"
    ]
    untouched: dict[str, Any] = {"score": 50.0, "n_items": 1, "n_parsed": 1}
    mark_request_changes(untouched, [{"status": "ok", "calls": [{"request_changes": []}]}])
    assert "request_changed" not in untouched and result_validity(untouched)["status"] == "valid"


# --- inside inspect, against the fake server ----------------------------------------------------------------------

pytest_inspect = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"the offline mirror is not at {MIRROR}")


def _eval(bench: str, model: Any, log_dir: Path, **eval_args: Any) -> EvalLog:
    from inspect_ai import eval as inspect_eval

    (log,) = inspect_eval(
        f"empathybench/{bench}",
        model=model,
        task_args={"limit": 1 if bench == "emobench" else 2, "allow_unverified": True},
        log_dir=str(log_dir),
        display="none",
        log_level="error",
        **eval_args,
    )
    return log


def _records(log: EvalLog) -> list[dict[str, Any]]:
    from empathybench.inspect_bridge.task import RECORD_KEY

    assert log.samples
    return [sample.metadata[RECORD_KEY] for sample in log.samples]


def _canonical(body: Any) -> str:
    return json.dumps(body, sort_keys=True)


def _rebuilt_bodies(records: list[dict[str, Any]]) -> Counter[str]:
    """The request bodies the records say went over the wire: `sent` with the messages as sent."""
    calls = [call for record in records for call in record["calls"]]
    return Counter(_canonical({**c["sent"], "messages": c.get("sent_messages") or c["messages"]}) for c in calls)


def _report_markdown(log_dir: Path, out: Path) -> str:
    from typer.testing import CliRunner

    from empathybench.cli import app

    result = CliRunner().invoke(app, ["report", str(log_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out.with_suffix(".md").read_text("utf-8")


@pytest.fixture
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest_inspect
@pytest.mark.parametrize("name", ["o3-mini", "smollm"])  # OpenAI's reasoning model, and a name inspect takes for one
def test_a_model_inspect_treats_as_a_reasoning_model_is_flagged(name: str, tmp_path: Path, no_openai_env: None) -> None:
    from inspect_ai.model import get_model

    with FakeOpenAIServer(keep_bodies=True) as server:
        model = get_model(f"openai/{name}", base_url=server.base_url, api_key=API_KEY, responses_api=False)
        log = _eval("eqbench", model, tmp_path / "logs")
        received = Counter(_canonical(body) for body in server.received_bodies)
    assert log.status == "success", log.error
    assert log.results is not None
    metrics = {key: metric.value for key, metric in log.results.scores[0].metrics.items()}
    assert metrics["request_changed"] == 1.0 and metrics["valid"] == 0.0 and metrics["invalid"] == 1.0
    records = _records(log)
    # The record keeps what went over the wire: the very bodies the server received, and the model name it saw.
    assert _rebuilt_bodies(records) == received and sum(received.values()) == server.requests_total
    for record in records:
        assert {"temperature dropped", "max_tokens sent as max_completion_tokens"} <= set(record["request_changes"])
        for call in record["calls"]:
            assert "temperature" not in call["sent"]
            assert call["sent"]["max_completion_tokens"] == call["sampling"]["max_tokens"]
            assert call["asked"]["temperature"] == call["sampling"]["temperature"]  # what was asked stays beside
            assert call["sent"]["model"] == name and call["served_model"] == name
    assert log.samples is not None
    for sample in log.samples:
        assert sample.scores is not None
        assert sample.scores["eqbench"].explanation.startswith("request changed by inspect's provider (temperature")
    markdown = _report_markdown(tmp_path / "logs", tmp_path / "report.html")
    assert "not comparable (request changed)" in markdown
    assert "temperature dropped, max_tokens sent as max_completion_tokens" in markdown


@pytest_inspect
def test_openai_api_service_sends_the_instruments_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_openai_env: None
) -> None:
    # The documented path for a local server: openai-api/<service>/<model> with <SERVICE>_BASE_URL / _API_KEY, here
    # against a server that refuses role developer and reads only max_tokens, as llama.cpp's does.
    with FakeOpenAIServer(keep_bodies=True, **LLAMA_CPP) as server:  # type: ignore[arg-type]
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        monkeypatch.setenv("LOCAL_API_KEY", API_KEY)
        log = _eval("emobench", "openai-api/local/smollm", tmp_path / "logs")
        received = Counter(_canonical(body) for body in server.received_bodies)
    assert log.status == "success", log.error
    assert log.results is not None
    assert log.results.scores[0].metrics["request_changed"].value == 0.0
    records = _records(log)
    assert _rebuilt_bodies(records) == received and sum(received.values()) == server.requests_total
    calls = [call for record in records for call in record["calls"]]
    assert calls and all(call["request_changes"] == [] and "sent_messages" not in call for call in calls)
    assert any(call["messages"][0]["role"] == "system" for call in calls)  # the system prompt went as system
    for call in calls:
        assert call["sent"]["temperature"] == call["sampling"]["temperature"]
        assert call["sent"]["max_tokens"] == call["sampling"]["max_tokens"]
        assert call["sent"]["model"] == "smollm" and call["sent_api"] == "chat.completions"
    assert all("request_changes" not in record for record in records)
    assert "not comparable" not in _report_markdown(tmp_path / "logs", tmp_path / "report.html")


@pytest_inspect
def test_a_server_that_refuses_role_developer_fails_each_item_saying_why(tmp_path: Path, no_openai_env: None) -> None:
    from inspect_ai.model import get_model

    with FakeOpenAIServer(keep_bodies=True, **LLAMA_CPP) as server:  # type: ignore[arg-type]
        # max_retries=0: the SDK's own retries of the 500 (inspect's are off below); the outcome is the same.
        model = get_model(
            "openai/smollm", base_url=server.base_url, api_key=API_KEY, responses_api=False, max_retries=0
        )
        log = _eval("emobench", model, tmp_path / "logs", max_retries=0, fail_on_error=False)
        assert server.outcomes["500"] == server.requests_total > 0
        assert all(body["messages"][0]["role"] == "developer" for body in server.received_bodies)
    assert log.samples
    for sample in log.samples:
        assert sample.error is not None
        message = sample.error.message
        assert "system message sent as developer" in message and "temperature dropped" in message
        assert "openai-api/<service>/<model>" in message and "500" in message
    records = _records(log)
    assert all(record["status"] == "error" and record["request_changes"] for record in records)
    markdown = _report_markdown(tmp_path / "logs", tmp_path / "report.html")
    assert "not comparable (request changed)" in markdown and "failed item" in markdown


@pytest_inspect
def test_a_name_inspect_sends_to_the_responses_api_fails_saying_so(tmp_path: Path, no_openai_env: None) -> None:
    from inspect_ai.model import get_model

    with FakeOpenAIServer(keep_bodies=True) as server:  # serves chat completions only, as llama.cpp's server does
        model = get_model("openai/smollm", base_url=server.base_url, api_key=API_KEY, max_retries=0)
        log = _eval("eqbench", model, tmp_path / "logs", max_retries=0, fail_on_error=False)
        assert server.requests_total == 0
    assert log.samples
    for sample in log.samples:
        assert sample.error is not None
        assert "sent the request to the Responses API" in sample.error.message
        assert "openai-api/<service>/<model>" in sample.error.message
