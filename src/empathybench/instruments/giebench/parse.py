"""Verdict parsers for GIEBench replies (specs/giebench.md §2.3). Pure functions.

`parse_legacy` is the released evaluation regex; `parse_recommended` is the toolkit parser the spec recommends:
last `[[A]]`-`[[D]]` token, tokens of an echoed format line ignored, optional fallbacks, failures reported.

Both read at most `bounds.MAX_PARSED_CHARS` characters of a reply (a failure says when a reply was cut) and run
in linear time: the released regex is quadratic on a reply full of tokens, so `parse_legacy` computes its
match from the list of tokens instead (same result, tested against the regex).
"""

import re
from dataclasses import dataclass, replace
from itertools import pairwise

from empathybench.instruments.bounds import parse_head

VALID_LETTERS = frozenset("ABCD")

# Verbatim from the released eval script (§2.3): the first [[X]], unless the same letter recurs later.
LEGACY_VERDICT = re.compile(r"\[\[([A-Z])\]\](?!(?:[^\[]*\[\[[A-Z]\]\])+[^\[]*\[\[\1\]\])")

_ANY_TOKEN = re.compile(r"\[\[([A-Z])\]\]")
_TOKEN = re.compile(r"\[\[\s*([A-Da-d])\s*\]\]")
# An echoed format line names all four letters close together; 300 characters covers the prompt's own line
# (about 170) with room for quoting, and is far shorter than a typical explanation of four replies.
ECHO_MAX_SPAN = 300
_PUNCT = "\"'*_`()[].!:"
_LONE_LETTER = re.compile(
    r"^(?:(?i:final\s+)?(?i:verdict|answer|choice|decision)\s*(?i:is)?\s*[:\-]?\s*)?"
    r"[\[\(\"'*_`]*([A-D])[\]\)\"'*_`.!]*$"
)
_ASSISTANT = re.compile(r"\b(?i:assistant)\s+([A-D])\b(?!'s)")
# "Assistant X" counts only on a line that states a choice: an echoed "[The End of Assistant D's Answer]" must not.
_CHOICE_WORD = re.compile(
    r"(?i:\b(?:better|best|verdict|choose|chose|choice|pick|prefer|preferred|winner|answer is)\b)"
)
_ANSWER_IS = re.compile(r"(?i:verdict|answer|choice)\s*(?i:is|:)\s*[\[\(\"'*_`]*([A-D])\b")


@dataclass(frozen=True)
class Verdict:
    """A parsed reply: `letter` is None when no verdict could be read; `method` says how it was read."""

    letter: str | None
    method: str  # token | fallback_lone_letter | fallback_assistant | fallback_answer_is | legacy_regex | none
    failure: str | None = None  # why no valid verdict (None when letter is a valid A-D)

    @property
    def valid(self) -> bool:
        return self.letter in VALID_LETTERS


def legacy_letter(reply: str) -> str | None:
    """`LEGACY_VERDICT.search(reply).group(1)` in linear time.

    The regex takes the first [[X]] token unless, in the chain of tokens that follows it (tokens separated by
    text without "["), a token after the first one repeats X.
    """
    tokens = list(_ANY_TOKEN.finditer(reply))
    # linked[i]: token i+1 follows token i with no "[" between them, so the chain goes on.
    linked = [reply.find("[", a.end(), b.start()) < 0 for a, b in pairwise(tokens)]
    # later[i]: the letters of the chain from token i on; built from the right.
    later: list[frozenset[str]] = [frozenset()] * (len(tokens) + 1)
    for i in range(len(tokens) - 1, -1, -1):
        rest = later[i + 1] if i < len(linked) and linked[i] else frozenset()
        later[i] = rest | {tokens[i].group(1)}
    for i, token in enumerate(tokens):
        repeated = i + 1 < len(linked) and linked[i] and linked[i + 1] and token.group(1) in later[i + 2]
        if not repeated:
            return token.group(1)
    return None


def parse_legacy(reply: str) -> Verdict:
    """The released regex: may return a letter outside A-D (e.g. E), which is never correct (§2.3)."""
    reply, cut = parse_head(reply)
    letter = legacy_letter(reply)
    if letter is None:
        return Verdict(None, "none", "no_match: no [[X]] token" + (f" ({cut})" if cut else ""))
    if letter not in VALID_LETTERS:
        return Verdict(letter, "legacy_regex", f"out_of_range: [[{letter}]]")
    return Verdict(letter, "legacy_regex")


def _echoed_token_starts(tokens: list[re.Match[str]]) -> set[int]:
    """Start offsets of tokens inside echoed format lines: four distinct letters within ECHO_MAX_SPAN.

    Scans left to right and consumes each run it marks, so a verdict right after an echo is kept.
    """
    echoed: set[int] = set()
    index = 0
    while index + 4 <= len(tokens):
        window = tokens[index : index + 4]
        letters = {t.group(1).upper() for t in window}
        if len(letters) == 4 and window[-1].end() - window[0].start() <= ECHO_MAX_SPAN:
            echoed.update(t.start() for t in window)
            index += 4
        else:
            index += 1
    return echoed


def _final_line(reply: str) -> str:
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip(" \t" + _PUNCT + "#>-")]
    return lines[-1].strip("#>*_` \t") if lines else ""


def _fallback(reply: str) -> Verdict | None:
    line = _final_line(reply)
    if not line:
        return None
    if match := _LONE_LETTER.match(line):
        return Verdict(match.group(1), "fallback_lone_letter")
    named = {m.group(1) for m in _ASSISTANT.finditer(line)}
    if len(named) == 1 and _CHOICE_WORD.search(line):
        return Verdict(named.pop(), "fallback_assistant")
    if match := _ANSWER_IS.search(line):
        return Verdict(match.group(1), "fallback_answer_is")
    return None


def parse_recommended(reply: str, *, fallbacks: bool = True) -> Verdict:
    """The last [[A]]-[[D]] token outside echoed format lines; else (optionally) a verdict on the final line."""
    reply, cut = parse_head(reply)
    verdict = _parse_recommended(reply, fallbacks=fallbacks)
    if cut and verdict.failure:
        return replace(verdict, failure=f"{verdict.failure} ({cut})")
    return verdict


def _parse_recommended(reply: str, *, fallbacks: bool) -> Verdict:
    tokens = list(_TOKEN.finditer(reply))
    echoed = _echoed_token_starts(tokens)
    kept = [t for t in tokens if t.start() not in echoed]
    if kept:
        return Verdict(kept[-1].group(1).upper(), "token")
    if fallbacks and (found := _fallback(reply)) is not None:
        return found
    if tokens:
        return Verdict(None, "none", "echo_only: only the echoed format line, no verdict")
    if re.search(r"\[\[\s*[A-Za-z]\s*\]\]", reply):
        return Verdict(None, "none", "out_of_range: verdict token outside A-D")
    if not reply.strip():
        return Verdict(None, "none", "empty: empty reply")
    return Verdict(None, "none", "no_verdict: no [[A]]-[[D]] token" + (" and no fallback match" if fallbacks else ""))
