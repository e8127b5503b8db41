"""The blind pointwise judge: one Good / Okay / Bad per reply, strict parsing, bounded re-asks, raw output kept."""

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from empathybench.engine.engine import Generation, stored_text
from empathybench.instruments.bounds import MAX_PARSED_CHARS
from empathybench.instruments.empathetic.data import LABEL_RATINGS
from empathybench.instruments.empathetic.prompts import REASK, judge_messages
from empathybench.models.base import Message, Sampling

JUDGE_ATTEMPTS = 3  # the first ask plus two re-asks
JUDGE_MAX_TOKENS = 16

JudgeCall = Callable[[Sequence[Message], Sampling, int], Awaitable[Generation]]

# Markdown emphasis, quotes and a trailing full stop are tolerated; anything else is a parse failure.
_DECORATION = re.compile(r"""^[\s*_"'`]+|[\s*_"'`.!]+$""")
# The two halves of `_DECORATION`, applied from each end: `sub` with it tries the trailing run at every
# position of a long run of spaces (quadratic); these read each end once. The trailing run is read reversed.
_LEADING = re.compile(r"""[\s*_"'`]*""")
_TRAILING = re.compile(r"""[\s*_"'`.!]*""")


def parse_rating(text: str) -> int | None:
    """Strict: the whole answer must be one label (Good / Okay / Bad, any case), nothing more.

    A reply longer than `bounds.MAX_PARSED_CHARS` is no rating (no label with decoration is that long).
    """
    if len(text) > MAX_PARSED_CHARS:
        return None
    start = _LEADING.match(text).end()  # type: ignore[union-attr]
    rest = text[start:]
    word = rest[: len(rest) - _TRAILING.match(rest[::-1]).end()]  # type: ignore[union-attr]
    return LABEL_RATINGS.get(word.lower())


@dataclass
class JudgeVerdict:
    rating: int | None  # 1 Bad / 2 Okay / 3 Good; None when no attempt parsed
    raw: list[str] = field(default_factory=list)  # every judge output, in order

    def as_record(self) -> dict[str, Any]:
        return {"rating": self.rating, "raw": self.raw}


async def judge_reply(
    call: JudgeCall,
    *,
    emotion: str,
    situation: str,
    speaker_utterance: str,
    reply: str,
    seed: int,
    attempts: int = JUDGE_ATTEMPTS,
    max_tokens: int = JUDGE_MAX_TOKENS,
) -> JudgeVerdict:
    """Rate one reply at temperature 0; after an unreadable answer, re-ask in the same conversation."""
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, not {attempts}")
    messages = judge_messages(emotion, situation, speaker_utterance, reply)
    sampling = Sampling(temperature=0.0, max_tokens=max_tokens, top_p=1.0, seed=seed)
    verdict = JudgeVerdict(rating=None)
    for attempt in range(attempts):
        generation = await call(messages, sampling, attempt)
        verdict.raw.append(stored_text(generation.text))
        verdict.rating = parse_rating(generation.text)
        if verdict.rating is not None:
            break
        messages = [*messages, Message("assistant", generation.text), Message("user", REASK)]
    return verdict
