"""A model's reply to one SECEU item -> 4 numbers -> the paper's normalised allocation (specs/seceu.md §3.1).

Pure functions. The paper leaves the parsing details open (§3.1 "left unspecified"); the choices made here:

1. JSON first: the first JSON value in the reply that gives all 4 options by name (`{"Emotion": [{"name": ...,
   "score": ...}]}`, `{name: score}`, or a list of such entries); names match case-insensitively. A JSON list of
   exactly 4 numbers, or of 4 entries whose recognised names sit in their own positions, is taken in order.
2. Then `name: number` pairs in the text ("Joyful: 3", "**Joyful** - 3", 'emotion "Joyful" a score of 3'), the
   option word matched whole and case-insensitively, the last mention of each option winning (models revise).
3. Then the first 4 numbers of the reply, after removing what is not a score: the story if echoed, option
   markers "(1)".."(4)" and "2. <option 2>", "Option 2", "step1", "/10", "out of 10", "sum up to 10" and the like.

Bounded work: the first `bounds.MAX_PARSED_CHARS` characters are read (the note says when a reply was cut), at
most `MAX_JSON_ATTEMPTS` bracket positions that are not JSON are tried, and the patterns use possessive
quantifiers where two whitespace runs meet, so no reply makes parsing slow.

Fewer than 4 options or numbers is no response, except that named scores already summing to 10 are a complete
answer (the options not named get 0). Non-integers are allowed: the paper's rescaling makes them anyway.
"""

import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from empathybench.instruments.bounds import parse_head

N_OPTIONS = 4
TOTAL_POINTS = 10.0
PARTIAL_SUM_TOLERANCE = 0.5  # named scores within this of 10 are a complete allocation

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_JSON_START = re.compile(r"[\[{]")
# Bracket positions tried as JSON that turn out not to be: a real reply has a handful; "[[[[..." has millions.
MAX_JSON_ATTEMPTS = 64
_NAME_KEYS = ("name", "emotion", "option", "label")
_SCORE_KEYS = ("score", "value", "points", "rating", "intensity")
# Between an option word and its score: quotes/markdown, an optional separator or verb, an optional "a score of".
# Possessive runs (*+): what follows each run starts with a character outside it, so giving characters back can
# never make a match, only cost time (quadratic on a long run of spaces).
_BETWEEN_NAME_AND_SCORE = (
    r"""[\s"'*_`]*+(?:[:=\-–—]|\bis\b|\bgets?\b|\breceives?\b|\bhas\b)?[\s"'*_`]*+"""
    r"""(?:(?:a\s+)?(?:score|rating|points?)(?:\s+of)?\s*+[:=]?\s*+)?"""
)
# Text that is not a score, removed before taking the first 4 numbers.
_NOT_SCORES = (
    re.compile(r"\(\s*[1-4]\s*\)"),
    re.compile(r"^\s*[1-4][.)]\s", re.MULTILINE),
    re.compile(r"\b(?:option|item|step|emotion)\s*+#?\s*+\d+", re.IGNORECASE),
    re.compile(r"/\s*10\b"),
    re.compile(r"\bout\s+of\s+10\b", re.IGNORECASE),
    re.compile(
        r"\b(?:sum(?:s|med)?(?:\s+up)?\s+to|add(?:s|ed)?\s+up\s+to|totals?(?:\s+score)?(?:\s+(?:of|is))?|"
        r"equals?|exactly)\s*:?\s*10(?:\.0+)?\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b\d+\s+remaining\b", re.IGNORECASE),
    re.compile(r"\b0\s*(?:to|-|–)\s*10\b"),
)


@dataclass(frozen=True)
class ParsedAllocation:
    values: tuple[float, ...] | None  # 4 raw numbers in option order, or None for no response
    method: str  # json | json_positional | names | names_partial | first_numbers | none
    note: str | None = None


@dataclass(frozen=True)
class NormalisedAllocation:
    vector: tuple[float, ...]  # 4 non-negative numbers summing to 10, or the zero vector for no response
    no_response: bool
    shifted: bool = False  # negatives were lifted by |min|
    rescaled: bool = False  # the sum was not 10
    note: str | None = None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        return float(value.strip())
    return None


def _json_values(text: str) -> Iterator[Any]:
    """Every JSON object or array embedded in the text, left to right."""
    decoder = json.JSONDecoder()
    index = 0
    failures = 0
    while failures < MAX_JSON_ATTEMPTS:
        found = _JSON_START.search(text, index)
        if found is None:
            return
        start = found.start()
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested deeper than Python recurses
            failures += 1
            index = start + 1
            continue
        yield value
        index = end


def _entry_pair(entry: dict[str, Any]) -> tuple[str | None, float] | None:
    lowered = {str(key).lower(): value for key, value in entry.items()}
    name = next((str(lowered[key]) for key in _NAME_KEYS if key in lowered), None)
    score = next((n for key in _SCORE_KEYS if key in lowered and (n := _number(lowered[key])) is not None), None)
    if score is not None:
        return name, score
    if len(entry) == 1:  # [{"Joyful": 3}, ...]
        key, value = next(iter(entry.items()))
        number = _number(value)
        return (str(key), number) if number is not None else None
    return None


def _json_pairs(value: Any) -> list[tuple[str | None, float]] | None:
    """(name or None, score) pairs from one JSON value, or None when it is not an allocation."""
    if isinstance(value, dict):
        for inner in value.values():  # a wrapper such as {"Emotion": [...]}
            if isinstance(inner, list | dict) and (pairs := _json_pairs(inner)):
                return pairs
        pairs = [(str(key), n) for key, item in value.items() if (n := _number(item)) is not None]
        return pairs or None
    if isinstance(value, list) and value:
        if all(isinstance(entry, dict) for entry in value):
            entry_pairs = [_entry_pair(entry) for entry in value]
            return None if any(pair is None for pair in entry_pairs) else entry_pairs  # type: ignore[return-value]
        numbers = [_number(entry) for entry in value]
        if all(number is not None for number in numbers):
            return [(None, number) for number in numbers]  # type: ignore[misc]
    return None


def option_index(name: str, options: Sequence[str]) -> int | None:
    """The position of the option a name refers to: equal ignoring case and decoration, else the only option
    word it contains."""
    cleaned = re.sub(r"^\s*\(?[1-4][.):]?\s*", "", name).strip(" \t\"'*_`:;,.").lower()
    lowered = [option.lower() for option in options]
    if cleaned in lowered:
        return lowered.index(cleaned)
    contained = [
        i for i, option in enumerate(lowered) if re.search(rf"(?<![a-z]){re.escape(option)}(?![a-z])", cleaned)
    ]
    return contained[0] if len(contained) == 1 else None


def _complete_partial(found: dict[int, float]) -> tuple[float, ...] | None:
    """Named scores that already share out the 10 points: the options not named get 0."""
    if found and abs(sum(found.values()) - TOTAL_POINTS) <= PARTIAL_SUM_TOLERANCE:
        return tuple(found.get(i, 0.0) for i in range(N_OPTIONS))
    return None


def _from_json(text: str, options: Sequence[str]) -> ParsedAllocation | None:
    for value in _json_values(text):
        pairs = _json_pairs(value)
        if not pairs:
            continue
        found: dict[int, float] = {}
        positions_agree = True
        for position, (name, number) in enumerate(pairs):
            index = option_index(name, options) if name is not None else None
            if index is None:
                continue
            found.setdefault(index, number)
            positions_agree = positions_agree and index == position
        if len(found) == N_OPTIONS:
            return ParsedAllocation(tuple(found[i] for i in range(N_OPTIONS)), "json")
        if len(pairs) == N_OPTIONS and positions_agree:
            note = f"JSON names matched {len(found)} of 4 options; taken in order"
            return ParsedAllocation(tuple(number for _, number in pairs), "json_positional", note)
        if (values := _complete_partial(found)) is not None:
            return ParsedAllocation(values, "names_partial", f"JSON named {len(found)} options summing to 10")
    return None


def _from_names(text: str, options: Sequence[str]) -> ParsedAllocation | None:
    found: dict[int, float] = {}
    for index, option in enumerate(options):
        pattern = rf"(?<![A-Za-z]){re.escape(option)}(?![A-Za-z]){_BETWEEN_NAME_AND_SCORE}(-?\d+(?:\.\d+)?)"
        matches = re.findall(pattern, text, flags=re.IGNORECASE)
        if matches:
            found[index] = float(matches[-1])
    if len(found) == N_OPTIONS:
        return ParsedAllocation(tuple(found[i] for i in range(N_OPTIONS)), "names")
    if (values := _complete_partial(found)) is not None:
        return ParsedAllocation(values, "names_partial", f"{len(found)} options named, summing to 10; others 0")
    return None


def _from_first_numbers(text: str, options: Sequence[str], ignore: Sequence[str]) -> ParsedAllocation | None:
    for passage in ignore:
        if passage:
            text = text.replace(passage, " ")
    for position, option in enumerate(options, start=1):
        # "2. Satisfied" where Satisfied is option 2: an enumeration, not a score
        text = re.sub(rf"(?<![\d.]){position}[.):]\s*(?={re.escape(option)}(?![A-Za-z]))", " ", text, flags=re.I)
    for pattern in _NOT_SCORES:
        text = pattern.sub(" ", text)
    numbers = [float(match) for match in _NUMBER.findall(text)]
    if len(numbers) < N_OPTIONS:
        return None
    note = f"first 4 of {len(numbers)} numbers" if len(numbers) > N_OPTIONS else None
    return ParsedAllocation(tuple(numbers[:N_OPTIONS]), "first_numbers", note)


def parse_allocation(text: str, options: Sequence[str], *, ignore: Sequence[str] = ()) -> ParsedAllocation:
    """The 4 raw numbers a reply gives to `options` (in option order); `ignore`: echoed text such as the story."""
    if len(options) != N_OPTIONS:
        raise ValueError(f"SECEU items have 4 options, got {len(options)}")
    if not text or not text.strip():
        return ParsedAllocation(None, "none", "empty reply")
    text, cut = parse_head(text)
    parsed = _from_json(text, options) or _from_names(text, options) or _from_first_numbers(text, options, ignore)
    parsed = parsed or ParsedAllocation(None, "none", "fewer than 4 scores found")
    if cut:
        parsed = replace(parsed, note=f"{parsed.note}; {cut}" if parsed.note else cut)
    return parsed


def normalise_allocation(values: Sequence[float] | None) -> NormalisedAllocation:
    """The paper's rules (§3.1): no response -> (0,0,0,0), counted; negatives -> add |min|; then rescale to 10."""
    if values is None or len(values) == 0:
        return NormalisedAllocation((0.0,) * N_OPTIONS, no_response=True, note="no response")
    if len(values) != N_OPTIONS:
        raise ValueError(f"an answer needs 4 numbers, got {len(values)}")
    numbers = [float(v) for v in values]
    if not all(math.isfinite(v) for v in numbers):
        raise ValueError(f"an answer must hold finite numbers, got {list(values)}")
    shifted = min(numbers) < 0
    if shifted:
        lift = -min(numbers)
        numbers = [v + lift for v in numbers]
    total = sum(numbers)
    if total <= 0:
        # Nothing to rescale: an all-zero answer scores exactly as the paper's no-response vector and is one.
        return NormalisedAllocation((0.0,) * N_OPTIONS, no_response=True, shifted=shifted, note="all scores equal 0")
    rescaled = not math.isclose(total, TOTAL_POINTS, rel_tol=0, abs_tol=1e-9)
    if rescaled:
        numbers = [v * TOTAL_POINTS / total for v in numbers]
    return NormalisedAllocation(tuple(numbers), no_response=False, shifted=shifted, rescaled=rescaled)
