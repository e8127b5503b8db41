"""EmotionBench's canned answers for scripted models: `scripted/plausible[-K]` fills in a questionnaire."""

import re

from empathybench.models.base import ChatRequest, Draw

_NUMBERED_ITEM = re.compile(r"^\s*(\d{1,2})[.)]\s+([A-Za-z][^\n:]{0,60}?)\s*$", re.MULTILINE)
_SCALE = re.compile(r"\b(\d)\s*(?:-|to)\s*(\d)\b")


def plausible_answer(request: ChatRequest, draw: Draw) -> str | None:
    """Every item with a value on the stated scale (1-5 when none is stated), some items lifted after a situation
    was imagined; None when the prompt lists fewer than 5 numbered items (not a questionnaire)."""
    prompt = request.messages[-1].content
    items = _NUMBERED_ITEM.findall(prompt)
    if len(items) < 5:
        return None
    scale = _SCALE.search(prompt)
    low, high = (int(scale.group(1)), int(scale.group(2))) if scale else (1, 5)
    situation = "imagine" in prompt.lower()
    lines = []
    for number, name in items:
        # The lift depends on the item alone (never on the sampling seed): the same items move in every run.
        lift = 0.25 if situation and draw("", name, "negative") < 0.5 else 0.0
        value = low + round((high - low) * min(1.0, draw(draw.salt, prompt, number) * 0.8 + lift))
        lines.append(f"{number}. {name.strip()}: {value}")
    return "\n".join(lines)
