"""EQ-Bench 3's canned answers for scripted models, dispatched by the request's tag.

`eqbench3` (the model under test): a role-play or drafting turn with the three required sections, a debrief, or an
analysis. `eqbench3:judge` (a scripted judge): the rubric score JSON (a 0-20 value per criterion of the prompt's
output format) or a pairwise verdict ("A0493++" style, both orders answered the same way by hash).
"""

import json
import re

from empathybench.instruments.eqbench3.conversation import DEBRIEF_WORD_TARGET, SECTION_WORD_TARGETS
from empathybench.instruments.eqbench3.data import TaskType
from empathybench.models.base import ChatRequest, Draw

_JSON_KEY = re.compile(r'^\s*"([a-z_]+)":\s*"?(0-20|winner & disparity rating)"?,?\s*$', re.MULTILINE)
_COT_KEY = "chain_of_thought_reasoning"
_FILLER = (
    "I notice the tension under the words and I want to name it without blaming anyone. "
    "They seem worried about being judged, and I should slow down, acknowledge that, and offer a concrete next step."
)


def _paragraph(draw: Draw, *parts: str) -> str:
    sentences = 2 + int(3 * draw(draw.salt, *parts))
    return " ".join([_FILLER] * sentences)


def _model_answer(request: ChatRequest, draw: Draw) -> str:
    prompt = request.messages[-1].content
    lowered = prompt.lower()
    if "# draft brainstorming" in lowered or "# perspective-taking" in lowered:
        return (
            f"# Perspective-taking\n{_paragraph(draw, prompt, 'p')}\n\n# Draft brainstorming\n"
            f"{_paragraph(draw, prompt, 'b')}\n\n# Draft\n{_paragraph(draw, prompt, 'd')}\n--"
        )
    if "# my response" in lowered:
        return (
            f"# I'm thinking & feeling\n{_paragraph(draw, prompt, 't')}\n\n# They're thinking & feeling\n"
            f"{_paragraph(draw, prompt, 'o')}\n\n# My response\n{_paragraph(draw, prompt, 'r')}\n--"
        )
    # An analysis task or the debrief: free text, long enough for the 100-character judging gate.
    return "In short: " + _paragraph(draw, prompt, "free text")


def _judge_answer(request: ChatRequest, draw: Draw) -> str | None:
    prompt = request.messages[-1].content
    fields = _JSON_KEY.findall(prompt)
    if not fields:
        return None
    answer: dict[str, object] = {_COT_KEY: "Scripted judge: scores drawn from a hash of the prompt."}
    for key, kind in fields:
        if kind == "0-20":
            answer[key] = round(4 + 14 * draw(draw.salt, prompt, key), 1)
        else:
            value = draw(draw.salt, prompt, key)
            winner = "A0493" if value < 0.5 else "A0488"
            answer[key] = winner + "+" * (1 + int(4 * (abs(value - 0.5) * 2)) if value != 0.5 else 1)
    return json.dumps(answer, indent=2)


def canned_answer(request: ChatRequest, draw: Draw) -> str | None:
    """The answer of `scripted/plausible[-K]` to one EQ-Bench 3 request (None: not a request it knows)."""
    if request.tag.endswith(":judge"):
        return _judge_answer(request, draw)
    return _model_answer(request, draw)


# Tokens per English word, as OpenAI's rule of thumb has it (~0.75 words per token).
_TOKENS_PER_WORD = 4 / 3


def expected_reply_tokens(request: ChatRequest) -> int | None:
    """What a real model's answer to one EQ-Bench 3 request costs in output tokens (for `--dry-run`): the words the
    master prompts ask for (conversation.SECTION_WORD_TARGETS, DEBRIEF_WORD_TARGET); None for the judge's requests
    (the canned judge answers have the real ones' shape)."""
    if request.tag.endswith(":judge"):
        return None
    lowered = request.messages[-1].content.lower()
    if "# draft brainstorming" in lowered or "# perspective-taking" in lowered:
        words = sum(SECTION_WORD_TARGETS[TaskType.DRAFTING].values())
    elif "# my response" in lowered:
        words = sum(SECTION_WORD_TARGETS[TaskType.ROLEPLAY].values())
    elif "debrief" in lowered:
        words = DEBRIEF_WORD_TARGET
    else:
        words = sum(SECTION_WORD_TARGETS[TaskType.ANALYSIS].values())
    return round(words * _TOKENS_PER_WORD)
