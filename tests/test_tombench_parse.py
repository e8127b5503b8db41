"""ToMBench's answer reading and vote: every branch of get_results.py's extract_answer, the strict parser, the majority
with its ties, each held to the upstream functions themselves (read from the mirror through the fetch code)."""

import random
from pathlib import Path
from typing import Any

import pytest

from empathybench.instruments.bounds import MAX_PARSED_CHARS
from empathybench.instruments.tombench.parse import extract_answer, majority, vote_of
from tombench_upstream import upstream_functions


@pytest.fixture
def upstream(mirror: Path) -> dict[str, Any]:
    return upstream_functions("tombench/get_results.py", ("extract_answer", "most_common_element"), {})


@pytest.mark.parametrize(
    ("reply", "letter", "method"),
    [
        ("[[C]]", "C", "[[X]]"),
        ("I think [[D]] but maybe [[B]]", "B", "[[X]]"),  # letter order, not position, decides among [[X]]
        ("Reasoning ... so [[A]] is out, the answer is [[C]]", "A", "[[X]]"),
        ("[[D]] or [B]", "D", "[[X]]"),  # [[X]] before [X]
        ("The answer: [C]", "C", "[X]"),
        ("[D] ... [B]", "B", "[X]"),
        ("Answer D", "D", "last letter"),
        ("Because of the story", "B", "last letter"),  # the capital B of "Because": upstream's quirk kept
        ("C, not D. Surely", "D", "last letter"),  # the last of A-D anywhere
        ("选项 B", "B", "last letter"),
        ("it is hard to tell", "A", "fallback"),
        ("", "A", "fallback"),
        ("ｂ／Ｂ (full-width)", "A", "fallback"),  # only ASCII A-D count
    ],
)
def test_every_branch_of_the_upstream_extraction(reply: str, letter: str, method: str, upstream: Any) -> None:
    extracted = extract_answer(reply)
    assert (extracted.letter, extracted.method) == (letter, method)
    assert extracted.letter == upstream["extract_answer"](reply)


def test_extraction_equals_upstream_on_random_replies(upstream: Any) -> None:
    draw = random.Random(7)
    alphabet = [*"ABCDabcd[] xyzZ.。选项答案\n", "[[", "]]", "[A]", "[[B]]", "[C]", "[[D]]"]
    for _ in range(5000):
        reply = "".join(draw.choice(alphabet) for _ in range(draw.randint(0, 30)))
        assert extract_answer(reply).letter == upstream["extract_answer"](reply), reply


def test_a_huge_reply_is_read_from_its_head_and_says_so() -> None:
    reply = "[[B]]" + "x" * MAX_PARSED_CHARS + "[[A]]"
    extracted = extract_answer(reply)
    assert extracted.letter == "B" and extracted.note is not None and "cut" in extracted.note


def test_the_strict_parser_votes_none_where_upstream_falls_back_to_a() -> None:
    assert vote_of("C", "fallback", "upstream") == "C"  # the shown A, mapped back to its original letter
    assert vote_of("C", "fallback", "strict") is None
    for method in ("[[X]]", "[X]", "last letter"):
        assert vote_of("C", method, "strict") == vote_of("C", method, "upstream") == "C"
    assert vote_of("", "[[X]]", "strict") == ""  # C/D on a 2-option item: an answer, and a wrong one


@pytest.mark.parametrize(
    ("votes", "winner"),
    [
        (["A", "B", "B", "C", "A"], "A"),  # a tie of 2 and 2: the one seen first
        (["B", "A", "A", "B", "C"], "B"),
        (["C", "D", "A", "B", "D"], "D"),
        (["", "", "A"], ""),
        ([None, "B", None], None),
        (["D"], "D"),
        ([], None),
    ],
)
def test_majority_breaks_ties_by_first_occurrence(votes: list[str | None], winner: str | None, upstream: Any) -> None:
    assert majority(votes) == winner
    if votes:
        assert upstream["most_common_element"](votes) == winner


def test_majority_equals_upstream_on_random_votes(upstream: Any) -> None:
    draw = random.Random(11)
    for _ in range(5000):
        votes = [draw.choice(["A", "B", "C", "D", ""]) for _ in range(draw.randint(1, 10))]
        assert majority(votes) == upstream["most_common_element"](votes), votes
