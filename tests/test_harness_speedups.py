"""The speed-ups of issue 13's EmotionBench-full target change no output: each fast path is checked against the
straightforward computation it replaced."""

import dataclasses
import json

import pytest

from empathybench import redaction
from empathybench.models.base import Sampling
from empathybench.models.capabilities import ModelArgs
from empathybench.redaction import REDACTED, dumps_redacted, redact, redact_data, register_secret

SECRET = "sk-speedup-test-9f8e7d6c"


@pytest.mark.parametrize(
    "sampling",
    [
        Sampling(temperature=0.0, max_tokens=10),
        Sampling(temperature=0.7, max_tokens=99, top_p=None, top_k=40, min_p=0.05, repeat_penalty=1.1, seed=3),
        Sampling(temperature=1.0, max_tokens=5, stop=("\n\n", "END")),
        Sampling(temperature=1.0, max_tokens=5, model_args=ModelArgs(reasoning_effort="minimal", max_tokens=16000)),
    ],
)
def test_sampling_as_dict_is_asdict_with_a_stop_list(sampling: Sampling) -> None:
    expected = dataclasses.asdict(sampling)
    expected["stop"] = list(sampling.stop)
    # the model arguments as given (their own as_dict), and no key at all without them (earlier cache keys hold)
    if sampling.model_args is None:
        del expected["model_args"]
    else:
        expected["model_args"] = sampling.model_args.as_dict()
    assert sampling.as_dict() == expected
    names = [f.name for f in dataclasses.fields(Sampling)]
    assert list(sampling.as_dict()) == (names if sampling.model_args else names[:-1])  # same keys, same order


def slow_dumps(data: object, indent: int | None = None) -> str:
    """What dumps_redacted did for every record: redact every string, then serialise."""
    return json.dumps(redact_data(data), indent=indent, ensure_ascii=False, default=lambda value: redact(str(value)))


@pytest.mark.parametrize(
    "data",
    [
        {"reply": "nothing secret here", "n": 3, "nested": [{"a": "ünïcödé \u2028 \x00"}]},
        {"reply": f"the key is {SECRET}!", "messages": [{"content": "x"}]},
        {f"key {SECRET}": 1},  # in a key
        {"quoted": json.dumps({"k": SECRET})},  # JSON-escaped inside a string
        {"url": f"https://h/v1?api_key={SECRET}", "percent": SECRET.replace("-", "%2D")},
        {"obj": object()},  # not JSON: written as its str()
        {"tab\tin key": 'line\nbreak "quote" \\ backslash'},
    ],
)
def test_dumps_redacted_fast_path_writes_what_the_slow_path_wrote(data: object) -> None:
    register_secret(SECRET)
    try:
        assert dumps_redacted(data) == slow_dumps(data)
        assert dumps_redacted(data, indent=2) == slow_dumps(data, indent=2)
        assert SECRET not in dumps_redacted(data)
    finally:
        redaction._forget_registered_for_tests()


def test_a_secret_registered_later_is_redacted_at_once() -> None:
    # The forms are memoised per set of secrets: a key registered mid-run must not be missed.
    later = "sk-registered-later-1a2b3c"
    assert later in dumps_redacted({"reply": later})
    register_secret(later)
    try:
        assert dumps_redacted({"reply": later}) == json.dumps({"reply": REDACTED})
    finally:
        redaction._forget_registered_for_tests()
