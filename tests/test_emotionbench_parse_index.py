"""EmotionBench's reply parser tries each line only against the names it can start with (issue 13: harness CPU).

The grouped lookup must pick exactly the name the plain scan over every presented name picks: the first in
presented order that starts the line as a whole word. Checked against that plain scan on replies built from
names that share prefixes and first letters, repeated names, an empty name, and lines of every form.
"""

import random
import re

from empathybench.instruments.emotionbench import parse


def plain_scan(lowered: str, presented_items: list[str]) -> int | None:
    """The name lookup as a direct scan: every presented name, in order, as a whole word at the line's start."""
    names = {name.strip().lower(): position for position, name in enumerate(presented_items, start=1)}
    for name, position in names.items():
        if re.match(rf"{re.escape(name)}\b", lowered):
            return position
    return None


def grouped_lookup(lowered: str, presented_items: list[str]) -> int | None:
    return parse._named_position(lowered, parse._name_index(tuple(presented_items)))


WORDS = ["upset", "upsetting", "up", "at ease", "at", "alert", "Afraid", " scared ", "Scared", "strong", "s"]


def test_the_grouped_lookup_picks_the_name_a_plain_scan_picks() -> None:
    rng = random.Random(13)
    checked = 0
    for _ in range(300):
        items = rng.sample(WORDS, rng.randint(1, len(WORDS)))
        if rng.random() < 0.2:
            items.append(rng.choice(items))  # a repeated name
        if rng.random() < 0.1:
            items.append("")  # an empty name fits any line that starts with a word character
        for _ in range(10):
            start = rng.choice([*WORDS, "", "3.", "xyz"])
            line = f"{start}{rng.choice(['', ' ', ': ', 'ly', '-'])}{rng.randint(1, 5)}"
            lowered = line.strip().lower()
            assert grouped_lookup(lowered, items) == plain_scan(lowered, items), (items, line)
            checked += 1
    assert checked == 3000


def test_replies_parse_by_name_with_shared_prefixes() -> None:
    items = ["Up", "Upset", "At ease", "At"]
    reply = "upset: 4\nAt ease - 2\nat 5\n**Up** 1"
    assert parse.parse_reply(reply, items, 1, 5).values == {2: 4, 3: 2, 4: 5, 1: 1}
    numbered = "1. 3\n2) 4\n3: 1\n4. 2"
    assert parse.parse_reply(numbered, items, 1, 5).values == {1: 3, 2: 4, 3: 1, 4: 2}
    missing = parse.parse_reply("upset: 4", items, 1, 5)
    assert missing.values is None and missing.failure is not None and "3/4" in missing.failure


def regex_last_in_range(text: str, low: int, high: int) -> int | None:
    """The answer of a line's tail by the two regular expressions alone (no shortcut for a lone number)."""
    numbers = [int(m) for m in parse._INTEGER.findall(parse._SCALE_MAXIMUM.sub("", text))]
    return numbers[-1] if numbers and low <= numbers[-1] <= high else None


def test_the_lone_number_shortcut_reads_what_the_regular_expressions_read() -> None:
    rng = random.Random(5)
    pieces = [" ", "\t", ":", "-", "=", "3", "4", "12", "123", "0", ".", "/", "/5", " out of 5", "x", "٣", "³", "**"]
    texts = [": 4", " - 3 -", "=12", "4.5", "3/5", "2 out of 5", "--7", "123", ":0", "", " ", "٣", "³", "1.", ".5"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(20_000)]
    for text in texts:
        for low, high in ((1, 5), (0, 99)):
            assert parse._last_in_range(text, low, high) == regex_last_in_range(text, low, high), repr(text)
