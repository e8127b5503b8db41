"""TactfulToM's canned answers for scripted models: `scripted/plausible[-K]` answers in the form the system prompt asks
for (an option number, yes / no, names split by commas, one sentence), now and then in the other forms upstream's
parser reads ("Option 2", "Answer: 3", "\\boxed{1}", "Mica, Kuba.") or in none, so scripted runs reach every branch.
With chain of thought the first pass thinks aloud and the second gives the answer.
"""

import re

from empathybench.instruments.tactfultom.prompts import COT_CUE, COT_FINAL
from empathybench.models.base import ChatRequest, Draw

_SPEAKER = re.compile(r"^\*\*([^*:\n]{1,40}):\*\*", re.MULTILINE)
_OPTION = re.compile(r"^(\d)\. ", re.MULTILINE)


def _format(system: str) -> str | None:
    if "option number" in system:
        return "mcq"
    if "'Yes' or 'No'" in system:
        return "binary"
    if "split them with commas" in system:
        return "list"
    if "single sentence" in system:
        return "freeform"
    return None


def plausible_answer(request: ChatRequest, draw: Draw) -> str | None:
    """A seeded answer of the asked format; None when the request is not one of TactfulToM's."""
    if len(request.messages) < 2:
        return None
    question_format = _format(request.messages[0].content)
    prompt = request.messages[-1].content
    if question_format is None or not prompt.startswith("# Context:"):
        return None
    if prompt.endswith(COT_CUE):
        return "Let me think about who heard what in the conversation, and why the lie was told."
    pick = draw(draw.salt, prompt, "answer")
    form = draw(draw.salt, prompt, "form")
    if question_format == "mcq":
        count = len(_OPTION.findall(prompt.split("# Options:")[-1])) or 1
        number = 1 + min(count - 1, int(pick * count))
        forms = (str(number), f"Option {number}", f"The answer is: {number}", f"\\boxed{{{number}}}")
        return forms[int(form * 4)] if form < 0.95 else "None of these fits."
    if question_format == "binary":
        word = "Yes" if pick < 0.5 else "No"
        return word if form < 0.8 else (f"{word}." if form < 0.95 else "It is hard to say.")
    if question_format == "list":
        names = list(dict.fromkeys(_SPEAKER.findall(prompt))) or ["Someone"]
        chosen = [
            name for number, name in enumerate(names) if draw(draw.salt, prompt, "name", str(number)) < 0.5
        ] or names[:1]
        text = ", ".join(chosen)
        return text if form < 0.9 else text + "."
    answer = "They said it to spare someone's feelings."
    return answer if not prompt.endswith(COT_FINAL) else f"In short: {answer}"
