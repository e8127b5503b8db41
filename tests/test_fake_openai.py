"""The fake OpenAI-compatible server itself: answers, counters, loopback only, and its command-line entry."""

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, cast

import pytest

from empathybench.testing.fake_openai import FakeOpenAIServer, fill_score_lines, request_body_hash


def post(url: str, body: dict[str, Any], key: str = "sk-x") -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def chat(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"model": "fake", "messages": [{"role": "user", "content": prompt}], **extra}


@pytest.mark.parametrize(
    ("placeholder", "revised"),
    [("<score>", "<revised score>"), ("<Punktzahl>", "<überarbeitete Punktzahl>"), ("<ocena>", "<zmieniona ocena>")],
)
def test_default_answer_fills_every_score_line_once(placeholder: str, revised: str) -> None:
    prompt = (
        f"Rate them.\nFirst pass scores:\nJoy: {placeholder}\nSad Anger: {placeholder}\n"
        f"Critique: <your critique here>\nRevised scores:\nJoy: {revised}\nSad Anger: {revised}\n"
    )
    assert fill_score_lines(chat(prompt)) == "Joy: 5\nSad Anger: 5"
    assert fill_score_lines(chat("Hello there")) == "I understand how they might feel."


def test_completion_shape_usage_and_counters() -> None:
    with FakeOpenAIServer() as server:
        body = chat("Joy: <score>\nFear: <score>", max_tokens=3)
        status, reply = post(f"{server.base_url}/chat/completions", body)
        post(f"{server.base_url}/chat/completions", body, key="sk-other")
        assert status == 200
        assert reply["choices"][0]["message"] == {"role": "assistant", "content": "Joy: 5\nFear:"}
        assert reply["choices"][0]["finish_reason"] == "length"  # cut at max_tokens
        # 11 text tokens (Joy : " <" score > newline Fear : " <" score >) + 3 for the message + 3 for the reply
        assert reply["usage"] == {
            "prompt_tokens": 17,
            "completion_tokens": 3,
            "total_tokens": 20,
            "prompt_tokens_details": {"cached_tokens": 0},  # a short prompt: nothing from the prompt cache
        }
        assert server.requests_total == 2
        assert server.body_counts == {request_body_hash(json.dumps(body).encode()): 2}
        assert server.authorizations == {"Bearer sk-x", "Bearer sk-other"}
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=10) as response:
            assert [m["id"] for m in json.loads(response.read())["data"]] == ["fake"]
        assert post(f"{server.base_url}/completions", body)[0] == 404
        assert post(f"{server.base_url}/chat/completions", {"model": "fake"})[0] == 400


def test_body_hash_ignores_key_order_and_spacing() -> None:
    assert request_body_hash(b'{"a": 1, "b": [2]}') == request_body_hash(b'{"b":[2],"a":1}')


def test_scripted_faults_come_first_then_the_rates() -> None:
    with FakeOpenAIServer(retry_after="2") as server:
        server.script_faults("429", "400", "500")
        url = f"{server.base_url}/chat/completions"
        statuses = [post(url, chat(f"q{i}"))[0] for i in range(4)]
        assert statuses == [429, 400, 500, 200]
        assert server.outcomes == {"429": 1, "400": 1, "500": 1, "ok": 1}
        with pytest.raises(ValueError, match="unknown fault"):
            server.script_faults("teapot")


def test_serves_on_loopback_only() -> None:
    with FakeOpenAIServer() as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        assert server._httpd is not None
        assert server._httpd.server_address[0] == "127.0.0.1"


def test_command_line_entry_serves_and_reports_on_sigterm(tmp_path: Path) -> None:
    stats_file = tmp_path / "stats.json"
    command = [sys.executable, "-m", "empathybench.testing.fake_openai", "--latency", "0.01"]
    process = subprocess.Popen(
        [*command, "--stats-out", str(stats_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        first_line = process.stdout.readline()
        base_url = first_line.rsplit(" ", 1)[-1].strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1"), first_line
        assert post(f"{base_url}/chat/completions", chat("Joy: <score>"))[1]["choices"][0]["message"]["content"] == (
            "Joy: 5"
        )
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    finally:
        process.kill()
    assert process.returncode == 0
    assert json.loads(stats_file.read_text())["requests_total"] == 1


@pytest.mark.parametrize("fake_name", ["openai", "anthropic"])
def test_a_request_whose_body_never_arrives_is_not_served_or_counted(fake_name: str) -> None:
    """A client killed between its headers and its body (kill -9 tests): a real server never serves that request,
    so the fakes must not count it (it once showed up as an empty body asked three times)."""
    import socket

    from empathybench.testing.fake_anthropic import FakeAnthropicServer

    fake_class = FakeOpenAIServer if fake_name == "openai" else FakeAnthropicServer
    path = "/v1/chat/completions" if fake_name == "openai" else "/v1/messages"
    body = json.dumps(chat("hello", max_tokens=8)).encode()
    with fake_class() as fake:
        host, port = fake.base_url.split("//", 1)[1].split("/", 1)[0].split(":")
        with socket.create_connection((host, int(port)), timeout=5) as client:
            head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            client.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body[:10])
            client.shutdown(socket.SHUT_WR)  # the client is gone: the rest of the body never comes
            assert client.recv(1024) == b""  # the server closes without an answer
        assert fake.requests_total == 0
        assert fake_name == "anthropic" or cast(FakeOpenAIServer, fake).body_counts == {}
        # A whole request on a new connection is served and counted as before.
        with socket.create_connection((host, int(port)), timeout=5) as client:
            client.sendall(f"{head}Content-Length: {len(body)}\r\nx-api-key: k\r\n\r\n".encode() + body)
            assert client.recv(1024).startswith(b"HTTP/1.1 ")
        assert fake.requests_total == 1
