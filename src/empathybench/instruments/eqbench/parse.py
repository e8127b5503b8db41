"""Parsing EQ-Bench answers: "Label: number" pairs, per mode and language (specs/eqbench.md §4).

Modes:
- "strict_v23": the original pipeline up to v2.3, the official runs and lm-eval. No markdown stripping,
  labels must equal the reference labels exactly (case-sensitive).
- "v24": upstream since 2024-05: every "*" and "#" is deleted first, labels are compared lower-cased.

Languages: en (and jahalf, whose instructions and labels are English) use `(\\w+):\\s+(\\d+)`; de and pl use
their own patterns (§4.5). ja (community file) has no upstream parser; ours is described at `_JAPANESE_PAIR`.

Bounded work: a reply is parsed up to `bounds.MAX_PARSED_CHARS` characters (a note says when it was cut), and
the regexes are applied in a way that is linear in the text (`extract_pairs`, `split_revise_blocks`) while
giving exactly the matches `finditer` / `search` with the patterns below would give.

A parsed map is kept as the model wrote it (label -> value); `score.score_v2` / `score.score_v1` match it to
the reference. `parse_answer` also runs the validity check and says why a map is unusable.
"""

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from empathybench.instruments.bounds import parse_head, shorten
from empathybench.instruments.eqbench.prompts import emotion_labels
from empathybench.instruments.eqbench.score import match_to_reference

ParseMode = Literal["strict_v23", "v24"]
ScoringVersion = Literal["v2", "v1"]
PARSE_MODES: tuple[str, ...] = ("strict_v23", "v24")
PARSE_LANGUAGES: tuple[str, ...] = ("en", "de", "pl", "ja", "jahalf")

# §4.3: a word, a colon, at least one whitespace (newlines included), digits.
_ENGLISH_PAIR = re.compile(r"(\w+):\s+(\d+)")
# §4.5 German: labels may contain spaces and umlauts, digits may be bold and may carry a decimal comma.
_GERMAN_PAIR = re.compile(r"([a-zA-ZäöüßÄÖÜ\s]+):\s*\**(\d+(?:,\d+)?)\**")
# §4.5 Polish: multi-word labels ("Wyrzuty sumienia"), optional "<...>" around the digits.
_POLISH_PAIR = re.compile(r"([\w ]+): *<?(\d+)>?")
# Japanese (our design): after NFKC normalisation (full-width colon and digits become ASCII), a run of word
# characters, optional spaces, a colon, optional whitespace, digits. Japanese text usually omits the space
# after the colon, so the English `\s+` would reject most well-formed answers. All 684 reference labels of
# the ja file are single `\w+` runs.
_JAPANESE_PAIR = re.compile(r"(\w+)\s*:\s*(\d+)")

# §4.2 revise-mode headings.
_ENGLISH_FIRST_PASS = re.compile(r"First pass scores:(.*?)Revised scores:", re.DOTALL)
_ENGLISH_REVISED = re.compile(r"Revised scores:(.*)", re.DOTALL)
_GERMAN_FIRST_PASS = re.compile(r"(Erste.*?):\s*(.*?)(?=Überarbeitete|$)", re.DOTALL | re.IGNORECASE)
_GERMAN_REVISED = re.compile(r"(Überarbeitete.*?):\s*(.*)", re.DOTALL | re.IGNORECASE)
_POLISH_FIRST_PASS = re.compile(r"Pierwsze oceny:(.*?)Zmienione oceny:", re.DOTALL)
_POLISH_REVISED = re.compile(r"Zmienione oceny:(.*)", re.DOTALL)
# Japanese revised heading (our design): the ja prompts word it "修正後の採点/得点/スコア/評価/点数", "修正後スコア"
# or "最終採点"; the first-pass block is everything before it.
_JAPANESE_REVISED_HEADING = re.compile(r"^[^\S\n]*(?:修正後|最終)[^\n:]{0,12}:", re.MULTILINE)

_MARKDOWN = str.maketrans("", "", "*#")

# Each pair pattern above is LABEL ":" TAIL, where no label character is a colon. `finditer` with such a pattern
# is quadratic on a long run of label characters (every start position re-scans the run), so `extract_pairs`
# finds the tails (which start at a colon: linear) and reads each label backwards from its colon instead.
# Per language: the tail, and what precedes the colon read in reverse (group 1: the label, reversed).
_PAIR_PARTS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "en": (re.compile(r":\s+(\d+)"), re.compile(r"(\w+)")),
    "de": (re.compile(r":\s*\**(\d+(?:,\d+)?)\**"), re.compile(r"([a-zA-ZäöüßÄÖÜ\s]+)")),
    "pl": (re.compile(r": *<?(\d+)>?"), re.compile(r"([\w ]+)")),
    "ja": (re.compile(r":\s*(\d+)"), re.compile(r"\s*(\w+)")),
}
_ERSTE = re.compile("Erste", re.IGNORECASE)
_UEBERARBEITETE = re.compile("Überarbeitete", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s*")
# At most this many notes per pass: a reply repeating one label 10,000 times needs one line, not 10,000.
MAX_NOTES = 20


@dataclass(frozen=True)
class ParsedAnswer:
    """The parse of one completion.

    `first_pass` / `revised` hold label -> value (labels as written) when that pass passed the validity check,
    else None; `failure_reason` / `revised_failure_reason` say why. Without revise, `revised` is None and
    `revised_failure_reason` is None. `pairs` hold what the regex found, before the check (digit strings).
    `notes` record silent losses that do not fail the item, e.g. a decimal part dropped by the regex.
    """

    first_pass: dict[str, float] | None
    revised: dict[str, float] | None
    failure_reason: str | None
    revised_failure_reason: str | None = None
    first_pass_pairs: dict[str, str] = field(default_factory=dict)
    revised_pairs: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def parseable(self) -> bool:
        """The first pass is usable (what no-revise runs and lm-eval require)."""
        return self.first_pass is not None


def _check_mode_and_language(mode: str, language: str) -> None:
    if mode not in PARSE_MODES:
        raise ValueError(f"unknown parse mode {mode!r}; expected one of {', '.join(PARSE_MODES)}")
    if language not in PARSE_LANGUAGES:
        raise ValueError(f"unsupported EQ-Bench language {language!r}; expected one of {', '.join(PARSE_LANGUAGES)}")


def prepare_text(text: str, *, mode: ParseMode = "strict_v23", language: str = "en") -> str:
    """The text the pair regex runs on: markdown-stripped in v24 mode, NFKC-normalised for ja."""
    _check_mode_and_language(mode, language)
    if mode == "v24":
        text = text.translate(_MARKDOWN)
    if language == "ja":
        text = unicodedata.normalize("NFKC", text)
    return text


def _pair_pattern(language: str) -> re.Pattern[str]:
    if language == "de":
        return _GERMAN_PAIR
    if language == "pl":
        return _POLISH_PAIR
    if language == "ja":
        return _JAPANESE_PAIR
    return _ENGLISH_PAIR


def _pair_matches(block: str, language: str) -> list[tuple[str, str, int]]:
    """(label, value, end) of every match `_pair_pattern(language).finditer(block)` gives, in linear time.

    A match's label is the run of label characters (for ja: then whitespace) just before a tail's colon, starting
    no earlier than the end of the previous match; a tail with no such run is no match.
    """
    tail_pattern, reversed_label = _PAIR_PARTS["en" if language == "jahalf" else language]
    matches: list[tuple[str, str, int]] = []
    previous_end = 0  # where the previous match ended: the next label starts there at the earliest
    previous_colon = -1  # a label never reaches back over a colon, which keeps the backward reads disjoint
    for tail in tail_pattern.finditer(block):
        colon = tail.start()
        floor = max(previous_end, previous_colon + 1)
        previous_colon = colon
        label = reversed_label.match(block[floor:colon][::-1])
        if label is None:
            continue
        matches.append((label.group(1)[::-1], tail.group(1), tail.end()))
        previous_end = tail.end()
    return matches


def extract_pairs(block: str, *, language: str = "en") -> tuple[dict[str, str], tuple[str, ...]]:
    """All non-overlapping "Label: number" matches of a (prepared) block, and notes on silent losses.

    A later duplicate label overwrites an earlier one (§4.3). de and pl labels are stripped of surrounding
    whitespace (§4.5).
    """
    pairs: dict[str, str] = {}
    notes: list[str] = []
    for label, value, end in _pair_matches(block, language):
        if language in ("de", "pl"):
            label = label.strip()
        if label in pairs:
            notes.append(f"duplicate label {shorten(label)!r}: the later value {value} replaces {pairs[label]}")
        pairs[label] = value
        tail = block[end : end + 2]
        if len(tail) == 2 and tail[0] == "." and tail[1].isdigit():
            notes.append(f"decimal part dropped: {shorten(label)!r} read as {value}")
    if len(notes) > MAX_NOTES:
        notes[MAX_NOTES:] = [f"... and {len(notes) - MAX_NOTES} more notes"]
    return pairs, tuple(notes)


def _after_colon(text: str, heading: re.Match[str] | None) -> int | None:
    """Where the text after a heading's first following colon (and whitespace) starts; None without one.

    The lazy `(Heading.*?):\\s*` of the upstream patterns: the first heading occurrence decides, since a colon
    after a later occurrence is also after the first.
    """
    if heading is None:
        return None
    colon = text.find(":", heading.end())
    if colon < 0:
        return None
    return _WHITESPACE.match(text, colon + 1).end()  # type: ignore[union-attr]


def _split_german(text: str) -> tuple[str | None, str | None]:
    """`_GERMAN_FIRST_PASS` / `_GERMAN_REVISED` group 2, found in linear time."""
    first_start = _after_colon(text, _ERSTE.search(text))
    first = None
    if first_start is not None:
        # `(.*?)(?=Überarbeitete|$)`: up to the next heading, or the end ($ also before a final newline).
        end = len(text) - 1 if text.endswith("\n") and len(text) - 1 >= first_start else len(text)
        heading = _UEBERARBEITETE.search(text, first_start)
        first = text[first_start : min(end, heading.start()) if heading else end]
    revised_start = _after_colon(text, _UEBERARBEITETE.search(text))
    return first, (text[revised_start:] if revised_start is not None else None)


def _between(text: str, start_heading: str, end_heading: str) -> tuple[str | None, str | None]:
    """`start_heading(.*?)end_heading` and `end_heading(.*)` (DOTALL) group 1, with str.find."""
    first = None
    start = text.find(start_heading)
    if start >= 0:
        end = text.find(end_heading, start + len(start_heading))
        if end >= 0:
            first = text[start + len(start_heading) : end]
    revised = text.find(end_heading)
    return first, (text[revised + len(end_heading) :] if revised >= 0 else None)


def split_revise_blocks(text: str, *, language: str = "en") -> tuple[str | None, str | None]:
    """(first-pass block, revised block) of a revise-mode answer; None where a heading is missing (§4.2)."""
    if language == "de":
        return _split_german(text)
    if language == "ja":
        heading = _JAPANESE_REVISED_HEADING.search(text)
        if heading is None:
            return None, None
        return text[: heading.start()], text[heading.end() :]
    if language == "pl":
        return _between(text, "Pierwsze oceny:", "Zmienione oceny:")
    return _between(text, "First pass scores:", "Revised scores:")


# Failure reasons that end in item-specific detail after "<kind>: "; `failure_kind` keeps only the kind.
_DETAILED_FAILURES = (
    "labels do not match references",
    "decimal comma (de) cannot be converted",
    "value cannot be converted to a number",
)


def failure_kind(reason: str) -> str:
    """The kind of a failure reason, for counting: item-specific detail dropped, the reason kept whole otherwise.

    (Cutting at the first colon would turn "no 'Label: number' pairs found" into "no 'Label".)
    """
    for kind in _DETAILED_FAILURES:
        if reason.startswith(kind + ":"):
            return kind
    return reason


def _label_mismatch_reason(pairs: Mapping[str, str], labels: list[str], *, case_insensitive: bool) -> str:
    def key(label: str) -> str:
        return label.lower() if case_insensitive else label

    found = {key(label) for label in pairs}
    expected = {key(label) for label in labels}
    missing = [label for label in labels if key(label) not in found]
    unexpected = [label for label in pairs if key(label) not in expected]
    parts = []
    if missing:
        parts.append("missing " + ", ".join(missing))
    if unexpected:
        shown = [shorten(label) for label in unexpected[:8]] + (["..."] if len(unexpected) > 8 else [])
        parts.append("unexpected " + ", ".join(shown))
    return "labels do not match references: " + "; ".join(parts or ["duplicate matches"])


def check_answers(
    pairs: Mapping[str, str],
    reference: Mapping[str, Any],
    *,
    mode: ParseMode = "strict_v23",
    language: str = "en",
    scoring: ScoringVersion = "v2",
) -> tuple[dict[str, float] | None, str | None]:
    """The §4 validity check of one pass: (answers, None) if usable, else (None, reason)."""
    labels = emotion_labels(reference)
    case_insensitive = mode == "v24"
    if not pairs:
        return None, "no 'Label: number' pairs found"
    if len(pairs) != 4:
        return None, f"found {len(pairs)} pairs, expected 4"
    if match_to_reference(pairs.keys(), labels, case_insensitive=case_insensitive) is None:
        return None, _label_mismatch_reason(pairs, labels, case_insensitive=case_insensitive)
    answers: dict[str, float] = {}
    for label, value in pairs.items():
        try:
            answers[label] = float(value)
        except ValueError:
            if language == "de" and "," in value:
                return None, f"decimal comma (de) cannot be converted: {shorten(label)}: {shorten(value)}"
            return None, f"value cannot be converted to a number: {shorten(label)}: {shorten(value)}"
    if scoring == "v1" and sum(answers.values()) <= 0:
        return None, "sum of answers is 0 (v1)"
    return answers, None


def parse_answer(
    text: str,
    reference: Mapping[str, Any],
    *,
    mode: ParseMode = "strict_v23",
    language: str = "en",
    revise: bool = False,
    scoring: ScoringVersion = "v2",
) -> ParsedAnswer:
    """Parse one completion against an item's reference (`reference_answer_fullscale` for v2,
    `reference_answer` for v1; only the labels are used, plus the v1 zero-sum rule).

    Only the first `bounds.MAX_PARSED_CHARS` characters are read; a note says when a reply was longer.
    """
    text, cut = parse_head(text)
    cut_notes = (cut,) if cut else ()
    prepared = prepare_text(text, mode=mode, language=language)
    if not revise:
        pairs, notes = extract_pairs(prepared, language=language)
        notes = cut_notes + notes
        answers, reason = check_answers(pairs, reference, mode=mode, language=language, scoring=scoring)
        return ParsedAnswer(
            first_pass=answers, revised=None, failure_reason=reason, first_pass_pairs=pairs, notes=notes
        )

    first_block, revised_block = split_revise_blocks(prepared, language=language)
    first_pairs, first_notes = extract_pairs(first_block or "", language=language)
    revised_pairs, revised_notes = extract_pairs(revised_block or "", language=language)
    first, first_reason = check_answers(first_pairs, reference, mode=mode, language=language, scoring=scoring)
    revised, revised_reason = check_answers(revised_pairs, reference, mode=mode, language=language, scoring=scoring)
    if first_block is None:
        first_reason = "first-pass block not found (its heading or the revised heading is missing)"
    if revised_block is None:
        revised_reason = "revised block not found (no revised heading)"
    return ParsedAnswer(
        first_pass=first,
        revised=revised,
        failure_reason=first_reason,
        revised_failure_reason=revised_reason,
        first_pass_pairs=first_pairs,
        revised_pairs=revised_pairs,
        notes=cut_notes + first_notes + revised_notes,
    )
