"""ToMBench's canned answers for scripted models: `scripted/plausible[-K]` picks one of the shown options.

Most answers take the format the system prompt asks for ("[[B]]"); a few take the other forms get_results.py reads
("[B]", a bare letter last) or none at all, so scripted runs go through every branch, the fallback included.
"""

import re

from empathybench.models.base import ChatRequest, Draw

_OPTION_LINE = re.compile(r"^([A-D])\. ", re.MULTILINE)


def plausible_answer(request: ChatRequest, draw: Draw) -> str | None:
    """A seeded choice among the prompt's lettered options; None when the prompt lists no A. and B. options."""
    prompt = request.messages[-1].content
    letters = sorted(set(_OPTION_LINE.findall(prompt)))
    if letters[:2] != ["A", "B"]:
        return None
    count = 4 if "D" in letters else 2
    letter = "ABCD"[min(count - 1, int(draw(draw.salt, prompt, "letter") * count))]
    form = draw(draw.salt, prompt, "form")
    if form < 0.8:
        return f"[[{letter}]]"
    if form < 0.9:
        return f"Answer: [{letter}]"
    if form < 0.96:
        return f"The most likely answer is {letter}"
    return "It is hard to tell from the story."  # no letter A-D anywhere: the upstream parser reads it as A
