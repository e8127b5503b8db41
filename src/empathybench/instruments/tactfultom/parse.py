"""TactfulToM's reading of a reply, per question format, as upstream's evaluate_non_freeform.py `_clean` (L19-70) and
`_clean_reasoning` (L72-78) read it (specs/tactfultom.md section 6). Pure functions on strings.

Upstream keyed its pre-step on the result file's name, the model's name ("Llama" / "DeepSeek-V3": the first
`\\boxed{...}`; "QwQ" / "DeepSeek-R1": the text after the last `</think>`; every other model: none).
`prestep_for(name)` keeps that rule, for released files and for a run's model alike.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Format = Literal["freeform", "binary", "mcq", "list"]
FORMATS: tuple[Format, ...] = ("freeform", "binary", "mcq", "list")
UNREAD = "NAN"  # upstream's value for a binary or mcq reply it cannot read

_BOXED = re.compile(r"\\boxed\{(.*?)\}", re.DOTALL)
_NON_WORD = re.compile(r"[^\w\s]")
_MCQ_ANSWER = re.compile(r"[^}]*answer[^}]*:\s*([^}]+)", re.IGNORECASE)


@dataclass(frozen=True)
class Prestep:
    """What is done to a reply before it is read: upstream chose it by the result file's name."""

    think: bool = False  # keep the text after the last </think>, stripped
    boxed: bool = False  # keep the first \boxed{...} when there is one

    @property
    def name(self) -> str:
        """As a run's records and label name it."""
        if self.think and self.boxed:
            return "both"
        return "think" if self.think else "boxed" if self.boxed else "none"


EVERY_STEP = Prestep(think=True, boxed=True)


def prestep_for(file_name: str) -> Prestep:
    """Upstream's pre-step for a result file, or for a model by its name (evaluate_non_freeform.py L22-36, L73,
    L87: the file name is the model's name, its path left out, and the condition and set)."""
    if "QwQ" in file_name or "DeepSeek-R1" in file_name:
        return Prestep(think=True)
    return Prestep(boxed="Llama" in file_name or "DeepSeek-V3" in file_name)


def apply_prestep(reply: str, step: Prestep) -> str:
    if step.think:
        reply = reply.split("</think>")[-1].strip()
    if step.boxed and (found := _BOXED.findall(reply)):
        reply = found[0]
    return reply


def read_binary(reply: str) -> str:
    """ "yes", "no" or "NAN": "yes" when it is among the reply's words (punctuation removed, lower case) wherever
    "no" is, else "no" when that is, as upstream reads it ("No, yes" reads yes)."""
    words = _NON_WORD.sub("", reply).lower().split()
    if "yes" in words:
        return "yes"
    if "no" in words:
        return "no"
    return UNREAD


def read_mcq(reply: str, mapping: Sequence[int]) -> int | str:
    """The original index of the option the reply names (0: the gold answer), or "NAN".

    Upstream reads one character: after "option" or after "...answer...:", the first character of the reply with
    " #*:" stripped; a digit 1..len(mapping) is mapped back through the shuffle. An empty reply raised IndexError
    upstream; here it is "NAN".
    """
    if reply.lower().startswith("option"):
        reply = reply[6:]
    elif found := _MCQ_ANSWER.search(reply):
        reply = found.group(1).strip()
    stripped = reply.strip(" #*:")
    first = stripped[:1]
    if first in {str(number + 1) for number in range(len(mapping))}:
        return mapping[int(first) - 1]
    return UNREAD


def read_list(reply: str) -> list[str]:
    """The reply split at commas, each part stripped (no case, period or "and" handling, as upstream)."""
    return [part.strip() for part in reply.split(",")]


_LENIENT_SPLIT = re.compile(r",|;|\n|\band\b", re.IGNORECASE)
_LENIENT_EDGES = " \t.*:;!\"'`-"


def read_list_lenient(reply: str) -> list[str]:
    """Ours: the names split at commas, semicolons, lines and "and", stripped of spaces, periods, quotes and list
    marks, in lower case (so "Mica and Kuba." reads as upstream's "Mica, Kuba" would)."""
    parts = (part.strip(_LENIENT_EDGES).casefold() for part in _LENIENT_SPLIT.split(reply))
    return [part for part in parts if part]


def list_matches_leniently(names: Sequence[str], gold: Sequence[str]) -> bool:
    """Ours: the same set of names as the gold list, compared in lower case (an empty gold list is never right)."""
    wanted = {str(name).strip().casefold() for name in gold}
    return bool(wanted) and set(names) == wanted


def clean_reply(reply: str, question_format: Format, mapping: Sequence[int], step: Prestep) -> str | int | list[str]:
    """A reply as upstream's `clean_result`: freeform unchanged (after the pre-step), the others read per format."""
    text = apply_prestep(reply, step)
    if question_format == "binary":
        return read_binary(text)
    if question_format == "mcq":
        return read_mcq(text, mapping)
    if question_format == "list":
        return read_list(text)
    return text
