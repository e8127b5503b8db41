"""Reading a reply's answer letter and the vote over tries, as get_results.py does (pure functions).

`extract_answer` is get_results.py's `extract_answer`, branch for branch: "[[A]]".."[[D]]" (in that letter
order, wherever they stand), then "[A]".."[D]", then the last of the characters A-D anywhere in the reply (so
"Because" can answer B), else "A". That last fallback counts an unreadable reply as A; the strict parser counts it
as no answer (wrong) instead. `majority` is its `most_common_element`: ties go to the answer seen first.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from empathybench.instruments.bounds import parse_head
from empathybench.instruments.tombench.data import LETTERS

Method = Literal["[[X]]", "[X]", "last letter", "fallback"]
Parser = Literal["upstream", "strict"]
PARSERS: tuple[Parser, ...] = ("upstream", "strict")
FALLBACK_LETTER = "A"


@dataclass(frozen=True)
class Extracted:
    letter: str  # the shown letter get_results.py reads ("A" when nothing was found)
    method: Method
    note: str | None = None  # the reply was cut before reading (bounds.py)


def extract_answer(reply: str) -> Extracted:
    text, note = parse_head(reply)
    for pattern, method in (("[[{}]]", "[[X]]"), ("[{}]", "[X]")):
        for letter in LETTERS:
            if pattern.format(letter) in text:
                return Extracted(letter, method, note)  # type: ignore[arg-type]
    for character in reversed(text):
        if character in LETTERS:
            return Extracted(character, "last letter", note)
    return Extracted(FALLBACK_LETTER, "fallback", note)


def vote_of(mapped: str, method: str, parser: Parser) -> str | None:
    """One try's vote: the original letter ("" for C/D of a 2-option item); the strict parser's vote is None where
    upstream fell back to A."""
    return None if parser == "strict" and method == "fallback" else mapped


def majority(votes: Sequence[str | None]) -> str | None:
    """The most common vote, ties to the one seen first (None when there are no votes)."""
    if not votes:
        return None
    return Counter(votes).most_common(1)[0][0]  # Counter keeps first-seen order; most_common's sort is stable
