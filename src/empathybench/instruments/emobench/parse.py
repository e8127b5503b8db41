"""Answer parsers, pure functions: each returns the chosen option index or None with a reason (spec §4, §9).

- `legacy_letter`: the 2024 protocol's heuristic letter finder, restated with its known bugs (paper fidelity).
- `json_exact`: the 2025 protocol's JSON reading and exact letter comparison.
- `robust`: our default: JSON first, then letter markers from the last line, letters limited to the item's real
  option count, several different answers flagged invalid.
"""

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_REPLY_CHARS = 100_000  # untrusted text: bound the work


@dataclass(frozen=True)
class ParsedAnswer:
    index: int | None  # 0-based option, or None when no answer could be read
    reason: str  # how it was found ("marker", "json", ...) or why it failed ("no_answer", "not_json", ...)

    @property
    def ok(self) -> bool:
        return self.index is not None


def _letters(count: int) -> str:
    return "abcdefghijklmnopqrstuvwxyz"[:count]


# ---------------------------------------------------------------- legacy (2024) letter finder, spec §4.2

_LEGACY_FAMILIES = ("({x})", "[{x}]", ": {x}", "option {x}", "option ({x})", "choice {x}", "choice ({x})")
_LEGACY_FAMILIES_ZH = ("选项 {x}", "选项 ({x})")


def legacy_letter(reply: str, options: tuple[str, ...] | list[str], *, letters: int, language: str) -> ParsedAnswer:
    """The upstream heuristic (S2 generate.py), bugs kept: `letters` is 6 for both EU questions (so e/f are accepted
    on 4-option cause questions) and 4 for EA; lines are scanned from the last, unstripped; ': x' matches prose;
    '&' in options is rewritten before matching, so a verbatim copy does not match. Checked against the stored
    predictions of the released CSVs (tests/test_emobench_parse.py). Unlike spec §4.2 says, a one-character line
    that is not an in-range letter does not stop the search in the released code: the next line up is tried."""
    text = reply[:MAX_REPLY_CHARS].strip().lower().replace("（", "(").replace("）", ")").replace(".", "")
    in_range = _letters(letters)
    joiner = " and " if language == "en" else "和"
    option_texts = [option.lower().replace(" & ", joiner) for option in options]
    for line in reversed(text.split("\n")):
        if not line:  # only truly empty lines are skipped; lines are not stripped
            continue
        for family in _LEGACY_FAMILIES + _LEGACY_FAMILIES_ZH:
            for position, letter in enumerate(in_range):
                if family.format(x=letter) in line:
                    return ParsedAnswer(position, "marker")
        for position, option in enumerate(option_texts):
            if option in line:
                return ParsedAnswer(position, "option_text")
        if len(line) == 1 and line in in_range:
            return ParsedAnswer(in_range.index(line), "bare_letter")
        if len(line) > 1 and line[0] in in_range and line[1] in "<[():":
            return ParsedAnswer(in_range.index(line[0]), "letter_prefix")
    return ParsedAnswer(None, "no_answer")


# ---------------------------------------------------------------- exact JSON (2025), spec §4.1

_FENCED_JSON = re.compile(r"```json(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class JsonReading:
    fields: dict[str, Any] | None  # the parsed object, or None
    reason: str  # "json" | "unclosed_fence" | "not_json" | "not_object"


def read_json_exact(reply: str) -> JsonReading:
    """The 2025 reading: the first ```json fenced block if the reply has that marker, else the whole reply."""
    text = reply[:MAX_REPLY_CHARS]
    if "```json" in text:
        match = _FENCED_JSON.search(text)
        if match is None:
            return JsonReading(None, "unclosed_fence")
        text = match.group(1)
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return JsonReading(None, "not_json")
    if not isinstance(value, dict):
        return JsonReading(None, "not_object")  # upstream crashed on this; we report it
    return JsonReading(value, "json")


def json_exact(reply: str, field: str, *, options: int) -> ParsedAnswer:
    """Field `field` compared as upstream does: only the exact upper-case letter string counts ("A", not "a",
    "A)" or " A"). A letter beyond the options is read but can never equal the label."""
    reading = read_json_exact(reply)
    if reading.fields is None:
        return ParsedAnswer(None, reading.reason)
    if field not in reading.fields:
        return ParsedAnswer(None, "missing_field")
    value = reading.fields[field]
    if not isinstance(value, str) or len(value) != 1 or not "A" <= value <= "Z":
        return ParsedAnswer(None, "not_exact_letter")
    index = ord(value) - ord("A")
    return ParsedAnswer(index, "json") if index < options else ParsedAnswer(None, "out_of_range")


# ---------------------------------------------------------------- robust (ours)

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL | re.IGNORECASE)
_LETTER_VALUE = re.compile(r"^\s*[(\[]?\s*([A-Za-z])\s*[)\].:]?(?:\s+.*)?$", re.DOTALL)
_OPTION_LINE = re.compile(r"^\s*\**[(\[]?[a-z][)\].:](?:\s|$)")
_ANSWER_CUE = r"(?:answer|option|choice|final choice|选项|答案)"


def _letter_in_value(value: Any, options: int) -> ParsedAnswer:
    if not isinstance(value, str):
        return ParsedAnswer(None, "json_value_not_text")
    match = _LETTER_VALUE.match(value.strip())
    if not match:
        return ParsedAnswer(None, "json_value_not_a_letter")
    index = ord(match.group(1).lower()) - ord("a")
    return ParsedAnswer(index, "json") if index < options else ParsedAnswer(None, "out_of_range")


def _json_object(text: str) -> dict[str, Any] | None:
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def _line_letters(line: str, in_range: str) -> set[str]:
    """Letters a line names as an answer: (x), [x], 'x)' / 'x.' / 'x:' at the start, a bare x, or after a cue."""
    lowered = line.strip().lower()
    found = set(re.findall(rf"[(\[]([{in_range}])[)\]]", lowered))
    bare = re.fullmatch(rf"\**([{in_range}])\**", lowered)
    if bare:
        found.add(bare.group(1))
    prefix = re.match(rf"^\**([{in_range}])[).:](?:\s|$)", lowered)
    if prefix:
        found.add(prefix.group(1))
    # "C and D", "answer: (b) or (c)": a list of letters names several answers
    letter_list = (
        rf"(?:^|[\s:(\[])([{in_range}])[)\]]?\s*(?:and|or|,|&|/|和|或)\s*"
        rf"[(\[]?([{in_range}])(?:[)\]]|\s*$|\s*[.,;!?。，])"
    )
    for first, second in re.findall(letter_list, lowered):
        found.update((first, second))
    for cue in re.finditer(rf"{_ANSWER_CUE}\s*(?:is)?\s*[:：]?\s*\**\s*([{in_range}])\b", lowered):
        found.add(cue.group(1))
    return found


def robust(reply: str, *, options: int, field: str | None = None) -> ParsedAnswer:
    """Our parser: a JSON object (fenced or bare) with `field` (default "answer") first; otherwise, for a single
    question, letter markers scanned from the last line. Letters beyond `options` do not count, and a reply that
    names two different letters as its answer is invalid ("multiple_answers")."""
    text = _THINK.sub("", reply[:MAX_REPLY_CHARS]).strip()
    if not text:
        return ParsedAnswer(None, "empty_reply")
    key = field or "answer"
    obj = _json_object(text)
    if obj is not None and key in obj:
        return _letter_in_value(obj[key], options)
    if field is not None and field != "answer":
        return ParsedAnswer(None, "missing_field" if obj is not None else "not_json")
    in_range = _letters(options)
    lines = [line for line in text.split("\n") if line.strip()]
    # A reply ending in several option lines ("(c) Pride" then "(d) Delight") gives several answers, not the last.
    trailing: set[str] = set()
    for line in reversed(lines):
        if not _OPTION_LINE.match(line.lower()):
            break
        trailing |= _line_letters(line, in_range)
    if len(trailing) > 1:
        return ParsedAnswer(None, "multiple_answers")
    for line in reversed(lines):
        letters = _line_letters(line, in_range)
        if len(letters) > 1:
            return ParsedAnswer(None, "multiple_answers")
        if letters:
            return ParsedAnswer(in_range.index(letters.pop()), "letter")
    return ParsedAnswer(None, "no_answer")
