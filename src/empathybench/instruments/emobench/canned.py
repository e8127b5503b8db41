"""EmoBench's canned answers for scripted models: `scripted/plausible[-K]` picks an option of the question it is
asked, in the format the protocol expects (paper2024: a letter line; repo2025: the fenced JSON object)."""

import json
import re

from empathybench.models.base import ChatRequest, Draw

# paper2024 lists options as `(a) text`, repo2025 as `A) text` (prompts.py letter_list_lower / letter_list_upper).
_LOWER_OPTION = re.compile(r"^\(([a-z])\) ", re.MULTILINE)
_UPPER_OPTION = re.compile(r"^([A-Z])\) ", re.MULTILINE)


def _pick(draw: Draw, prompt: str, part: str, count: int) -> int:
    """A letter index in [0, count): seeded by the variant, the prompt and which question it answers."""
    return min(count - 1, int(draw(draw.salt, prompt, part) * count))


def _option_blocks(prompt: str, pattern: re.Pattern[str]) -> list[int]:
    """The number of options of each consecutive lettered list in the prompt (a list restarts at letter a/A)."""
    blocks: list[int] = []
    for match in pattern.finditer(prompt):
        letter = match.group(1).lower()
        if letter == "a":
            blocks.append(1)
        elif blocks and ord(letter) - ord("a") == blocks[-1]:
            blocks[-1] += 1
    return blocks


def plausible_answer(request: ChatRequest, draw: Draw) -> str | None:
    """One seeded choice per question; None when the prompt holds no lettered options."""
    prompt = request.messages[-1].content
    system = request.messages[0].content if len(request.messages) > 1 else ""
    upper = _option_blocks(prompt, _UPPER_OPTION)
    if upper and "```json" in system:  # repo2025: EU asks emotion and cause in one JSON, EA one answer
        if len(upper) >= 2:
            answer = {
                "answer_q1": chr(ord("A") + _pick(draw, prompt, "q1", upper[0])),
                "answer_q2": chr(ord("A") + _pick(draw, prompt, "q2", upper[1])),
            }
        else:
            answer = {"answer": chr(ord("A") + _pick(draw, prompt, "answer", upper[0]))}
        return "```json\n" + json.dumps(answer) + "\n```"
    lower = _option_blocks(prompt, _LOWER_OPTION)
    if not lower:
        return None
    letter = chr(ord("a") + _pick(draw, prompt, "answer", lower[-1]))
    # A few variants answer in prose first, as chat models do; the letter line stays last for the letter finder.
    lead = "Considering the scenario carefully.\n" if draw(draw.salt, prompt, "lead") < 0.3 else ""
    return f"{lead}Answer: ({letter})"
