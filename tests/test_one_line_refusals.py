"""Every bad input is one clear line, before any call (issue 29 items 2 and 3, and the new options' values): an API
key with a line break names its variable and never shows the key; a repeated `--price` key, or `-M` keys that
disagree, are refused; an unusable `--max-reply-bytes` or `--batch-fallback` too."""

from pathlib import Path

import pytest

from conftest import invoke
from empathybench.errors import ModelConfigError, UserError
from empathybench.models.capabilities import parse_model_args
from empathybench.models.prices import parse_price_option
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer

SECRET = "sk-proj-linebreak-3f9a77c1"


def one_error_line(code: int, err: str, expected: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith("error: ") and expected in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (f"{SECRET}\r\n", "contains a line break"),
        (f"{SECRET}\n", "contains a line break"),
        (f"{SECRET[:8]}\n{SECRET[8:]}", "contains a line break"),
        (f"{SECRET} ", "contains a space or a tab"),
        (f"{SECRET}\x07", "contains a character an HTTP header cannot carry"),
        (f"{SECRET}é", "contains a character an HTTP header cannot carry"),
    ],
)
def test_an_api_key_that_cannot_be_a_header_is_refused_by_name(
    provider: str,
    key: str,
    expected: str,
    env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    variable = f"{provider.upper()}_API_KEY"
    with FakeOpenAIServer() as openai_server, FakeAnthropicServer() as anthropic_server:
        monkeypatch.setenv(variable, key)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
        model = "openai/fake" if provider == "openai" else "anthropic/claude-fake-1"
        args = ["run", "-m", model, "--base-url", openai_server.base_url, "-b", "eqbench", "--limit", "1"]
        code, out, err = invoke(capsys, *args, "--out", str(env / "run"), "-q")
        asked = openai_server.requests_total + anthropic_server.requests_total
    line = one_error_line(code, err, f"{variable} {expected}")
    assert asked == 0 and not (env / "run").exists()
    assert SECRET not in out + err and SECRET[:8] not in line


def test_price_keys_are_given_once() -> None:
    with pytest.raises(UserError, match="input is given twice"):
        parse_price_option("input=1,output=1,input=2")
    with pytest.raises(UserError, match="cached is given twice"):
        parse_price_option("input=1,output=1,cached=0.5,cached=0.5")  # even the same value: a slip to point out
    assert parse_price_option("input=1, output=2").output == 2


def test_repeated_model_arguments_must_agree() -> None:
    with pytest.raises(ModelConfigError, match="-M max_tokens is given twice with different values"):
        parse_model_args(["max_tokens=10", "max_tokens=20"], "-M")
    with pytest.raises(ModelConfigError, match=r"extra_body\.top_k is given twice with different values"):
        parse_model_args(["extra_body.top_k=20", "extra_body.top_k=40"], "-M")
    with pytest.raises(ModelConfigError, match="reasoning is given twice"):
        parse_model_args(["reasoning=true", "reasoning=false"], "-M")
    agreed = parse_model_args(["max_tokens=10", "max_tokens= 10", "extra_body.top_k=20", "extra_body.top_k=20"], "-M")
    assert agreed.max_tokens == 10 and agreed.body_fields() == {"top_k": 20}


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--price", "input=1,output=1,input=2"], "--price 'input=1,output=1,input=2': input is given twice"),
        (["-M", "max_tokens=10", "-M", "max_tokens=20"], "max_tokens is given twice with different values"),
        (["--max-reply-bytes", "10"], "--max-reply-bytes must be at least 1024 bytes, not 10"),
        (["--batch", "--batch-fallback", "maybe"], "--batch-fallback must be live or fail, not 'maybe'"),
    ],
)
def test_bad_bound_and_price_options_are_one_line_before_any_call(
    extra: list[str], expected: str, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer() as server:
        args = ["run", "-m", "openai/fake", "--base-url", server.base_url, "-b", "eqbench", "--limit", "1", "-q"]
        code, _, err = invoke(capsys, *args, "--out", str(env / "run"), *extra)
        asked = server.requests_total + server.batches.batches_created
    one_error_line(code, err, expected)
    assert asked == 0 and not (env / "run").exists()
    assert not (env / "cache" / "data").exists()  # nothing fetched


def test_a_bad_reply_limit_in_the_environment_is_one_line(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMPATHYBENCH_MAX_REPLY_BYTES", "a lot")
    with FakeOpenAIServer() as server:
        args = ["run", "-m", "openai/fake", "--base-url", server.base_url, "-b", "eqbench", "--limit", "1", "-q"]
        code, _, err = invoke(capsys, *args, "--out", str(env / "run"))
        asked = server.requests_total
    one_error_line(code, err, "EMPATHYBENCH_MAX_REPLY_BYTES='a lot' is not a whole number of bytes")
    assert asked == 0
