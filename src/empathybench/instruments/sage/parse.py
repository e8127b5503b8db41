"""Reading the simulator's replies and moving the emotion, as SAGE/simulator_response.py does (pure functions).

Upstream (planning_reply): full-width colons become ASCII and asterisks are removed; each section is the text after
its last label up to the next label, stripped of newlines and brackets; Change is the first signed integer after the
last "Change:", clamped to -10..+10; the emotion moves by it and is capped at 100 (no floor: it may go below 0).
A reply whose Change has no integer raises there and upstream asks again forever; here it is an unreadable reply,
asked again a bounded number of times by the conversation runner. Upstream's quirk is kept: a reply without any
"Change:" is read from its start, so its first integer counts (e.g. the "1." of a numbered list).

The person's answer (player_reply): the text after the last "Response:", stripped of newlines, brackets and curly
quotes; its thinking is the text before the first "Response:" after "Thinking:\\n".
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

CHANGE_LOW, CHANGE_HIGH = -10, 10  # simulator_response.py: max(-10, min(10, change))
EMOTION_CAP = 100  # simulator_response.py: emo_point = min(emo_point, 100)
_SIGNED_INTEGER = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class Analysis:
    """The simulator's analysis of the model's last reply (upstream's `planning`)."""

    activity: str
    target_completion: str
    content: str
    analyse: str
    change: int  # clamped to -10..+10
    change_read: int  # the integer as written, before clamping

    def planning(self) -> dict[str, object]:
        """Upstream's `planning` dict (its keys, as the result files store them)."""
        return {
            "activity": self.activity,
            "TargetCompletion": self.target_completion,
            "content": self.content,
            "analyse": self.analyse,
            "change": self.change,
        }


def _section(reply: str, label: str, next_label: str | None) -> str:
    text = reply.split(label)[-1]
    if next_label is not None:
        text = text.split(next_label)[0]
    return text.strip("\n").strip("[").strip("]")


def parse_analysis(reply: str) -> Analysis | str:
    """The analysis read as upstream reads it, or why it cannot be read (a str)."""
    reply = reply.replace("：", ":").replace("*", "")
    change_text = reply.split("Change:")[-1].strip("\n").strip("[").strip("]")
    match = _SIGNED_INTEGER.search(change_text)
    if match is None:
        return "no integer after Change:"
    try:
        written = int(match.group())
    except ValueError:  # past Python's limit of digits: upstream's int() raises too, and it asks again
        return "the integer after Change: is too long"
    return Analysis(
        activity=_section(reply, "Activity:", "Analyse:\n"),
        target_completion=_section(reply, "TargetCompletion:", "Activity:\n"),
        content=_section(reply, "Content:", "TargetCompletion:\n"),
        analyse=_section(reply, "Analyse:", "Change:\n"),
        change=max(CHANGE_LOW, min(CHANGE_HIGH, written)),
        change_read=written,
    )


def moved_emotion(emotion: int, change: int) -> int:
    """The emotion after a change (already clamped), capped at 100."""
    return min(emotion + change, EMOTION_CAP)


def emotion_state(
    emotion: int, previous: str, states: Sequence[tuple[str, int]], failed_state: str, failed_below: int
) -> str:
    """Upstream's state of an emotion: the first of `states` (emo_count, in order) whose threshold it reaches, else
    the previous state; `failed_state` below `failed_below` (which wins)."""
    state = previous
    for name, threshold in states:
        if emotion >= threshold:
            state = name
            break
    if emotion < failed_below:
        state = failed_state
    return state


@dataclass(frozen=True)
class PersonReply:
    thinking: str
    response: str


def parse_person_reply(reply: str) -> PersonReply | str:
    """The person's answer read as upstream reads it, or why it cannot be used (an empty answer)."""
    thinking = reply.split("Response:")[0].split("Thinking:\n")[-1].strip("\n").strip("[").strip("]")
    response = reply.split("Response:")[-1].strip("\n").strip("[").strip("]").strip("“").strip("”")
    if not response.strip():
        # Upstream would pass the empty line on; an empty user message is refused by some providers and ends
        # nothing, so it is asked again (a documented difference).
        return "the answer after Response: is empty"
    return PersonReply(thinking=thinking, response=response)
