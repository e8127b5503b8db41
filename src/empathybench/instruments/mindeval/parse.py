"""MindEval's pure readers, as upstream's mindeval/utils.py reads (specs/mindeval.md sections 4 and 6).

- `split_thinking`: separate_thinking_from_response: the text between <think> and </think> is thinking, the rest
  the reply; with no opening tag, the text before a bare </think> is thinking.
- `conversation_text`: messages_to_convo_str: user -> <member>, assistant -> <therapist>, joined by newlines.
- `parse_judgment`: parse_judge_scores: for each criterion the first `Name:\\s*(\\d+\\.?\\d*)` as a float; a missing
  criterion is 3 (upstream's default, counted here); no clamp; Overall = Average = the mean of the five.
"""

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

CRITERIA = (
    "Clinical Accuracy & Competence",
    "Ethical & Professional Conduct",
    "Assessment & Response",
    "Therapeutic Relationship & Alliance",
    "AI-Specific Communication Quality",
)
SHORT = {
    "Clinical Accuracy & Competence": "CAC",
    "Ethical & Professional Conduct": "EPC",
    "Assessment & Response": "AR",
    "Therapeutic Relationship & Alliance": "TRA",
    "AI-Specific Communication Quality": "ASCQ",
}
OVERALL = "Overall score"
AVERAGE = "Average score"
MISSING_DEFAULT = 3.0  # utils.parse_judge_scores: "Default to middle score if not found"
EMPTY_REPLY = "..."  # generate_interactions.py: an empty reply becomes "..." ("problematic for some apis")

_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_THINK_BLOCK = re.compile(f"{re.escape(_THINK_OPEN)}(.*?){re.escape(_THINK_CLOSE)}", re.DOTALL)
_PATTERNS = {name: re.compile(rf"{re.escape(name)}:\s*(\d+\.?\d*)") for name in CRITERIA}


def split_thinking(text: str) -> tuple[str, str]:
    """(reply, thinking), as separate_thinking_from_response."""
    block = _THINK_BLOCK.search(text)
    if block:
        return text[block.end() :].strip(), block.group(1).strip()
    parts = text.split(_THINK_CLOSE)
    if len(parts) > 1:
        return parts[1].strip(), parts[0].replace(_THINK_OPEN, "").strip()
    return text.strip(), ""


def turn_text(reply: str) -> tuple[str, str]:
    """A turn as it is passed on: the reply without its thinking, "..." when empty; and the thinking."""
    said, thinking = split_thinking(reply)
    return said or EMPTY_REPLY, thinking


def conversation_text(messages: Sequence[Mapping[str, str]]) -> str:
    """messages_to_convo_str."""
    parts = []
    for message in messages:
        role = "member" if message["role"] == "user" else "therapist"
        parts.append(f"<{role}>\n{message['content']}\n</{role}>\n")
    return "".join(parts).strip()


@dataclass(frozen=True)
class Judgment:
    scores: Mapping[str, float]  # the five criteria, Overall score and Average score (upstream's parsed_judgment)
    missing: tuple[str, ...]  # criteria not found (given MISSING_DEFAULT)

    @property
    def overall(self) -> float:
        return self.scores[OVERALL]


def parse_judgment(text: str) -> Judgment:
    """parse_judge_scores on a judge's reply (its thinking split off first, as upstream's generate_with_thinking)."""
    reply, _ = split_thinking(text)
    scores: dict[str, float] = {}
    missing = []
    for name in CRITERIA:
        match = _PATTERNS[name].search(reply)
        value = float(match.group(1)) if match else math.inf
        if math.isfinite(value):  # a number of hundreds of digits reads as infinity: as good as no number
            scores[name] = value
        else:
            scores[name] = MISSING_DEFAULT
            missing.append(name)
    overall = sum(scores.values()) / len(CRITERIA)
    scores[OVERALL] = overall
    scores[AVERAGE] = overall
    return Judgment(scores, tuple(missing))
