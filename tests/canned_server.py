"""A fake OpenAI server that answers like a plausible model of every installed instrument: each request with the
canned answers of the instrument and role it is for (the role told by the model name the request names)."""

import json
from typing import Any

from empathybench.instruments.registry import all_benchmarks
from empathybench.models.base import ChatRequest, Message, Sampling
from empathybench.models.plausible import PlausibleResponder
from empathybench.testing.fake_openai import FakeOpenAIServer

MODEL = "gpt-4o-mini"  # inspect's openai provider speaks chat completions to a model named like this
JUDGE = "gpt-4.1-mini"
SIMULATOR = "gpt-4o"  # a name inspect's openai provider sends to chat completions, as MODEL and JUDGE
SAMPLING_KEYS = ("temperature", "top_p", "seed", "stop", "top_k", "min_p", "repeat_penalty")


class CannedServer:
    """A fake OpenAI server answering one instrument with its canned answers (the judge and the simulated person by
    their model names), keeping what each request asked: its messages and sampling, as the server received them."""

    def __init__(self, instrument: str) -> None:
        canned = {b.name: b.canned for b in all_benchmarks().values() if b.canned is not None}
        self.responder = PlausibleResponder(1, canned)
        self.instrument = instrument
        self.asked: list[str] = []
        self.server = FakeOpenAIServer(answer=self.answer, models=(MODEL, JUDGE, SIMULATOR))

    def answer(self, body: dict[str, Any]) -> str:
        sent = {key: body[key] for key in SAMPLING_KEYS if body.get(key) is not None}
        sent["max_tokens"] = body.get("max_tokens") or body.get("max_completion_tokens")
        self.asked.append(json.dumps({"model": body["model"], "messages": body["messages"], **sent}, sort_keys=True))
        role = {JUDGE: ":judge", SIMULATOR: ":simulator"}.get(body["model"], "")
        messages = tuple(Message(m["role"], m["content"]) for m in body["messages"])
        sampling = Sampling(temperature=float(body.get("temperature") or 0), max_tokens=1, seed=body.get("seed"))
        return self.responder(ChatRequest(messages, sampling, self.instrument + role))

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def __enter__(self) -> "CannedServer":
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
