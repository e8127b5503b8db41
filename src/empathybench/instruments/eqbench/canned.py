"""EQ-Bench's canned answers for scripted models: `scripted/plausible[-K]` fills every `Label: <score>` line."""

import re

from empathybench.models.base import ChatRequest, Draw

_SCORE_LINE = re.compile(r"^([^\n:<>]+):\s*<(?:revised )?score>\s*$", re.MULTILINE)


def score_line_labels(prompt: str) -> list[str]:
    """The labels of the prompt's `Label: <score>` lines (EQ-Bench's answer template), in order, once each."""
    return list(dict.fromkeys(m.group(1).strip() for m in _SCORE_LINE.finditer(prompt)))


def plausible_answer(request: ChatRequest, draw: Draw) -> str | None:
    """An intensity 0-10 per emotion, skewed low as people's ratings are; None when the prompt has no template."""
    prompt = request.messages[-1].content
    labels = score_line_labels(prompt)
    if not labels:
        return None
    return "\n".join(f"{label}: {round(10 * draw(draw.salt, prompt, label) ** 1.5)}" for label in labels)
