"""GIEBench's canned answers for scripted models: `scripted/plausible[-K]` picks one of the four assistants."""

from empathybench.models.base import ChatRequest, Draw


def plausible_answer(request: ChatRequest, draw: Draw) -> str | None:
    """`My answer is [[X]]` with X drawn from A-D; None when the prompt does not offer the four assistants."""
    prompt = request.messages[-1].content
    if "[[A]]" not in prompt or "[[D]]" not in prompt:
        return None
    return f"My answer is [[{'ABCD'[int(4 * draw(draw.salt, prompt))]}]]"
