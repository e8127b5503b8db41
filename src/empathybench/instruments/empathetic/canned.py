"""Empathetic responding's canned answers for scripted models: `scripted/plausible[-K]` replies to the speaker,
and as a judge rates a reply Good / Okay / Bad (odd K a little more often Good, so two judges differ)."""

from empathybench.models.base import ChatRequest, Draw

JUDGE_TAG_SUFFIX = ":judge"  # the engine tags a judge's requests "<instrument>:judge"
_OPENINGS = ("That sounds really hard.", "I'm so glad to hear that!", "Oh no, I'm sorry.", "How exciting!")


def judge_answer(request: ChatRequest, draw: Draw) -> str:
    """One label, drawn from the last message (the rating question, or the re-ask after an unreadable answer)."""
    value = draw(draw.salt, request.messages[-1].content)
    return "Good" if value < 0.45 + 0.1 * (draw.variant % 2) else ("Okay" if value < 0.85 else "Bad")


def reply_answer(request: ChatRequest, draw: Draw) -> str:
    """A short reply to the speaker: one of four openings and a question back."""
    return f"{_OPENINGS[int(4 * draw(draw.salt, request.messages[-1].content))]} How are you feeling about it now?"


def plausible_answer(request: ChatRequest, draw: Draw) -> str:
    """The judge's label for a judge request, else the model's reply."""
    if request.tag.endswith(JUDGE_TAG_SUFFIX):
        return judge_answer(request, draw)
    return reply_answer(request, draw)
