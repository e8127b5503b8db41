"""Reading a questionnaire reply: by item number or name, range-checked (spec §6, our recommendation).

At most `bounds.MAX_PARSED_CHARS` characters of a reply are read (a failure says when a reply was cut).
"""

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from empathybench.instruments.bounds import parse_head

_NUMBERED = re.compile(r"^\s*(?:[-*•]\s*)?(?:\*\*)?\(?(\d{1,3})\s*[.):]\s*(.*)$")
# (?<!\s): start at the beginning of a whitespace run only (where the leftmost match starts anyway); without it
# every position of a long run of spaces re-scans the run.
_SCALE_MAXIMUM = re.compile(r"(?<!\s)\s*(?:/|out of)\s*\d+")
_INTEGER = re.compile(r"(?<![\d.])(\d{1,2})(?![\d.]\d)")


@dataclass(frozen=True)
class ParsedReply:
    values: dict[int, int] | None  # presented position (1-based) -> answer; None on failure
    failure: str | None = None


@functools.lru_cache(maxsize=1024)
def _name_pattern(name: str) -> re.Pattern[str]:
    """The item name as a whole word (followed by a word boundary)."""
    return re.compile(rf"{re.escape(name)}\b")


def _clean(line: str) -> str:
    return line.replace("**", "").replace("__", "").strip()


# What may surround a lone answer ("Excited: 4", "- 4 -"): a text made of these and one or two ASCII digits has
# those digits as its only integer, the regular expressions' answer too (tested against them).
_SEPARATORS = " \t:-="


def _last_in_range(text: str, low: int, high: int) -> int | None:
    bare = text.strip(_SEPARATORS)
    if 0 < len(bare) <= 2 and bare.isascii() and bare.isdigit():
        value = int(bare)  # the common line, without the two regular expressions below
    else:
        if "/" in text or "out of" in text:
            text = _SCALE_MAXIMUM.sub("", text)  # "2/5", "2 out of 5": the 5 is the scale, not the answer
        numbers = _INTEGER.findall(text)
        if not numbers:
            return None
        value = int(numbers[-1])
    return value if low <= value <= high else None


def parse_reply(reply: str, presented_items: Sequence[str], low: int, high: int) -> ParsedReply:
    """Map a reply to presented positions.

    Lines are matched by their number ("3. Excited: 4", "3) 4") or by the item name ("Excited - 4"); a reply of
    bare numbers, one per line and exactly as many as there are items, is read in presented order. Every item
    must be answered once, with a value in [low, high].
    """
    reply, cut = parse_head(reply)
    parsed = _parse_reply(reply, presented_items, low, high)
    if cut and parsed.failure:
        return ParsedReply(None, f"{parsed.failure} ({cut})")
    return parsed


NameEntry = tuple[str, int, Callable[[str], object]]  # lower-cased name, position, its whole-word match
NameIndex = tuple[tuple[NameEntry, ...], dict[str, tuple[NameEntry, ...]] | None]


@functools.lru_cache(maxsize=256)
def _name_index(presented_items: tuple[str, ...]) -> NameIndex:
    """The (lower-cased name, position) pairs in presented order (a repeated name keeps its first place and its
    last position, as a dict built from the items does), and the same pairs grouped by first character, so that a
    line is only tried against the names it can start with. No grouping when a name is empty (it fits any line).
    Made once per presented order: every reply of a run is parsed against a few of them."""
    names = {name.strip().lower(): position for position, name in enumerate(presented_items, start=1)}
    pairs = tuple((name, position, _name_pattern(name).match) for name, position in names.items())
    if "" in names:
        return pairs, None
    by_first: dict[str, list[NameEntry]] = {}
    for entry in pairs:
        by_first.setdefault(entry[0][0], []).append(entry)
    return pairs, {first: tuple(group) for first, group in by_first.items()}


def _named_position(lowered: str, index: NameIndex) -> int | None:
    """The position of the first presented name (in presented order) that starts the line as a whole word. Only
    the names starting with the line's first character are tried; `startswith` before the compiled pattern."""
    pairs, by_first = index
    for name, position, match in pairs if by_first is None else by_first.get(lowered[:1], ()):
        if lowered.startswith(name) and match(lowered) is not None:
            return position
    return None


def _parse_reply(reply: str, presented_items: Sequence[str], low: int, high: int) -> ParsedReply:
    n = len(presented_items)
    index = _name_index(tuple(presented_items))
    by_position: dict[int, int] = {}
    bare: list[int] = []
    lines = [cleaned for cleaned in map(_clean, reply.splitlines()) if cleaned]
    for line in lines:
        numbered = _NUMBERED.match(line)
        rest = numbered.group(2) if numbered else line
        named = _named_position(rest.lower(), index)  # this loop runs for every line of every reply
        if named is not None:
            value = _last_in_range(rest[len(presented_items[named - 1]) :], low, high)
            if value is not None:
                by_position.setdefault(named, value)
            continue
        if numbered:
            position = int(numbered.group(1))
            value = _last_in_range(rest, low, high)
            if 1 <= position <= n and value is not None:
                by_position.setdefault(position, value)
            continue
        if re.fullmatch(r"\d{1,2}", line) and low <= int(line) <= high:
            bare.append(int(line))
    if len(by_position) < n and not by_position and len(bare) == n:
        by_position = {position: value for position, value in enumerate(bare, start=1)}
    missing = [p for p in range(1, n + 1) if p not in by_position]
    if missing:
        shown = ", ".join(str(p) for p in missing[:5]) + ("…" if len(missing) > 5 else "")
        return ParsedReply(None, f"missing or out-of-range answers for {len(missing)}/{n} items ({shown})")
    return ParsedReply(by_position)
