"""A judge-shaped answer function for FakeOpenAIServer: rates the reply in a judge prompt by a fixed rule.

The empathetic-responding judge prompt ends with the dialogue and the rating question:

    The dialogue:
    Speaker #1: <speaker utterance>
    Speaker #2: <the reply being rated>

    How empathetic is the speaker #2's response, ...?

`FakeJudge` finds that reply and answers "Good", "Okay" or "Bad" by a deterministic rule of the reply text
alone (by default its length in words), so a test can recompute every figure the judge should produce from the
replies and the released human ratings. Chosen replies (by a hash of their text) get an unreadable first
answer and a readable one after the re-ask, or are never answered readably, to exercise the strict parser.
Any other request (a model generating a reply) gets a fixed reply. Every request is recorded with its model.

    judge = FakeJudge(unreadable_first_every=4)
    with FakeOpenAIServer(answer=judge) as server:
        ... empathybench judge validate --judge openai/fake-judge --base-url {server.base_url} ...
    judge.first_asks()  # the replies that were rated, once each
"""

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from empathybench.instruments.empathetic.prompts import RATING_QUESTION, REASK

LABELS: dict[int, str] = {1: "Bad", 2: "Okay", 3: "Good"}
DIALOGUE_MARK = "The dialogue:\n"
REPLY_MARK = "\nSpeaker #2: "
GENERATED_REPLY = "I am so sorry you are going through this, it sounds really hard. How are you holding up?"
UNREADABLE_FIRST = "Well, I would say the response is {label} overall."  # the strict parser rejects it
NEVER_READABLE = "It is hard to say without more context."

Rule = Callable[[str], int]


def rated_reply(request: dict[str, Any]) -> str | None:
    """The Speaker #2 reply a judge request asks about; None when the request is not a judge prompt."""
    messages = request.get("messages") or []
    first = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)
    content = first.get("content") if first else None
    if not isinstance(content, str) or RATING_QUESTION not in content or DIALOGUE_MARK not in content:
        return None
    dialogue = content.rindex(DIALOGUE_MARK)
    start = content.index(REPLY_MARK, dialogue) + len(REPLY_MARK)
    end = content.rindex("\n\n" + RATING_QUESTION)
    return content[start:end]


def length_rating(reply: str, *, okay_from: int = 20, good_from: int = 35) -> int:
    """Bad below `okay_from` words, Okay below `good_from`, Good from there (whitespace words)."""
    words = len(reply.split())
    return 3 if words >= good_from else 2 if words >= okay_from else 1


def hashed_rating(reply: str) -> int:
    """1, 2 or 3 from the SHA-256 of the reply: unrelated to anything a human would see in it."""
    return hashlib.sha256(reply.encode("utf-8")).digest()[0] % 3 + 1


def selected(reply: str, every: int, salt: str) -> bool:
    """True for about one reply in `every`, chosen by a salted hash of its text (never when every is 0)."""
    if every <= 0:
        return False
    digest = hashlib.sha256(f"{salt}:{reply}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % every == 0


@dataclass(frozen=True)
class JudgeRequest:
    """One judge request as the fake judge saw it."""

    model: str | None
    reply: str
    asks_before: int  # re-ask messages already in the conversation (0: the first ask)
    answer: str


class FakeJudge:
    """An answer function for FakeOpenAIServer; thread-safe, since the server answers on many threads."""

    def __init__(
        self,
        rule: Rule = length_rating,
        *,
        unreadable_first_every: int = 0,
        never_readable_every: int = 0,
        generated_reply: str = GENERATED_REPLY,
    ) -> None:
        self.rule = rule
        self.unreadable_first_every = unreadable_first_every
        self.never_readable_every = never_readable_every
        self.generated_reply = generated_reply
        self._lock = threading.Lock()
        self.judge_requests: list[JudgeRequest] = []
        self.generation_models: list[str | None] = []

    def unreadable_first(self, reply: str) -> bool:
        return selected(reply, self.unreadable_first_every, "unreadable-first") and not self.never_readable(reply)

    def never_readable(self, reply: str) -> bool:
        return selected(reply, self.never_readable_every, "never-readable")

    def expected_rating(self, reply: str) -> int | None:
        """What the judge pipeline should end up with for this reply (None: unreadable however often asked)."""
        return None if self.never_readable(reply) else self.rule(reply)

    def answer_for(self, reply: str, asks_before: int) -> str:
        if self.never_readable(reply):
            return NEVER_READABLE
        label = LABELS[self.rule(reply)]
        if asks_before == 0 and self.unreadable_first(reply):
            return UNREADABLE_FIRST.format(label=label)
        return f"**{label}**." if asks_before else label  # decoration the parser tolerates, on re-asks

    def __call__(self, request: dict[str, Any]) -> str:
        model = request.get("model") if isinstance(request.get("model"), str) else None
        reply = rated_reply(request)
        if reply is None:
            with self._lock:
                self.generation_models.append(model)
            return self.generated_reply
        messages = request.get("messages") or []
        asks_before = sum(1 for m in messages if m.get("role") == "user" and m.get("content") == REASK)
        answer = self.answer_for(reply, asks_before)
        with self._lock:
            self.judge_requests.append(JudgeRequest(model, reply, asks_before, answer))
        return answer

    def first_asks(self) -> list[JudgeRequest]:
        """One entry per rated reply: the first ask of each judge conversation."""
        with self._lock:
            return [r for r in self.judge_requests if r.asks_before == 0]

    def judge_models(self) -> set[str | None]:
        with self._lock:
            return {r.model for r in self.judge_requests}


__all__ = [
    "GENERATED_REPLY",
    "LABELS",
    "FakeJudge",
    "JudgeRequest",
    "hashed_rating",
    "length_rating",
    "rated_reply",
    "selected",
]
