"""SECEU's canned answers for scripted models: `scripted/plausible[-K]` spreads 10 points over the 4 options."""

from empathybench.models.base import ChatRequest, Draw


def plausible_answer(request: ChatRequest, draw: Draw) -> str | None:
    """Four point values summing to about 10, more skewed the higher K; None when the prompt is not a SECEU item."""
    prompt = request.messages[-1].content
    if "Options: (1)" not in prompt and "sum up to 10" not in prompt:
        return None
    weights = [draw(draw.salt, prompt, str(i)) ** (1 + draw.variant) for i in range(4)]
    total = sum(weights) or 1.0
    points = [round(10 * w / total, 1) for w in weights]
    return "[" + ", ".join(f"{p:g}" for p in points) + "]"
