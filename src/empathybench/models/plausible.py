"""`scripted/plausible[-K]`: a scripted model that answers every instrument in its expected format.

The answers are pseudo-random but deterministic (a hash of the prompt and K), so two names give two different
"models" with real spread: used by the tests, the browser test and demos of reports and comparisons. It knows
nothing about emotions; its figures mean nothing beyond exercising the whole pipeline.
"""

import re
from collections.abc import Mapping

from empathybench.models.base import Canned, ChatRequest, Draw

_SCORE_LINE = re.compile(r"^([^\n:<>]+):\s*<(?:revised )?score>\s*$", re.MULTILINE)


def score_line_labels(prompt: str) -> list[str]:
    """The labels of `Label: <score>` answer-template lines, in order, once each (the fallback for untagged
    requests; the instrument that uses this template supplies its own canned answer)."""
    return list(dict.fromkeys(m.group(1).strip() for m in _SCORE_LINE.finditer(prompt)))


class PlausibleResponder:
    """Deterministic pseudo-random answers in each instrument's format; `level` skews them (K = 1, 2, ...)."""

    def __init__(self, variant: int = 1, canned: Mapping[str, Canned] | None = None) -> None:
        self.variant = variant
        self._draw = Draw(variant)
        self.canned = dict(canned or {})

    def __call__(self, request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        # Sampling: another seed gives another answer, as a sampled model would (greedy decoding would not).
        sampled = request.sampling.temperature > 0 and request.sampling.seed is not None
        salt = str(request.sampling.seed) if sampled else ""
        # "<name>:judge" requests go to the same instrument's canned answers (it tells them apart by the tag).
        answer = self.canned.get(request.tag) or self.canned.get(request.tag.split(":", 1)[0])
        if answer is not None:  # the asking instrument's own canned answer
            text = answer(request, Draw(self.variant, salt))
            if text is not None:
                return text
        labels = score_line_labels(prompt)
        if labels:  # EQ-Bench: an intensity 0-10 per emotion
            return "\n".join(f"{label}: {round(10 * self._draw(salt, prompt, label) ** 1.5)}" for label in labels)
        openings = ("That sounds really hard.", "I'm so glad to hear that!", "Oh no, I'm sorry.", "How exciting!")
        return f"{openings[int(4 * self._draw(salt, prompt))]} How are you feeling about it now?"


def plausible_variant(name: str) -> int | None:
    """1 for `plausible`, K for `plausible-K`, None for other names."""
    match = re.fullmatch(r"plausible(?:-(\d+))?", name)
    if match is None:
        return None
    return int(match.group(1) or 1)
