"""GIEBench verdict parsers against the cases of specs/giebench.md §2.3."""

import pytest

from empathybench.instruments.giebench.parse import parse_legacy, parse_recommended

# The prompt's own format line, as a model might echo it before its verdict.
ECHO = (
    'Output "[[A]]" if assistant A is better, "[[B]]" if assistant B is better, '
    '"[[C]]" if assistant C is better, "[[D]]" if assistant D is better.'
)

# (reply, legacy letter, recommended letter) — the legacy column is the spec's table.
SPEC_TABLE = [
    ("Assistant B gives the most fitting reply. [[B]]", "B", "B"),
    (f"{ECHO} Final verdict: [[C]]", "A", "C"),
    (f"{ECHO}\nVerdict: [[A]]", "B", "A"),
    ("I first thought [[A]] but actually [[B]]", "A", "B"),
    ("[[E]]", "E", None),
]


@pytest.mark.parametrize(("reply", "legacy", "recommended"), SPEC_TABLE)
def test_parsers_follow_the_spec_table(reply: str, legacy: str | None, recommended: str | None) -> None:
    assert parse_legacy(reply).letter == legacy
    assert parse_recommended(reply).letter == recommended


@pytest.mark.parametrize("reply", ["[[b]]", "[B]", "The answer is B."])
def test_legacy_regex_misses_near_verdicts(reply: str) -> None:
    verdict = parse_legacy(reply)
    assert verdict.letter is None
    assert not verdict.valid
    assert verdict.failure is not None and verdict.failure.startswith("no_match")


def test_legacy_accepts_letters_outside_a_to_d_but_marks_them_invalid() -> None:
    verdict = parse_legacy("My verdict: [[E]]")
    assert verdict.letter == "E"
    assert not verdict.valid
    assert verdict.failure is not None and verdict.failure.startswith("out_of_range")


@pytest.mark.parametrize(
    ("reply", "letter", "method"),
    [
        ("[[b]]", "B", "token"),
        ("[B]", "B", "fallback_lone_letter"),
        ("The answer is B.", "B", "fallback_answer_is"),
        ("Reasons...\n\nAssistant C is better.", "C", "fallback_assistant"),
        ("Reasons...\n**Final verdict: D**", "D", "fallback_lone_letter"),
        ("Explanation first.\nD", "D", "fallback_lone_letter"),
    ],
)
def test_recommended_fallbacks(reply: str, letter: str, method: str) -> None:
    verdict = parse_recommended(reply)
    assert (verdict.letter, verdict.method) == (letter, method)
    assert verdict.valid


def test_fallbacks_can_be_switched_off() -> None:
    verdict = parse_recommended("The answer is B.", fallbacks=False)
    assert verdict.letter is None
    assert verdict.failure is not None and verdict.failure.startswith("no_verdict")


def test_an_echoed_prompt_alone_is_no_verdict() -> None:
    # An echo of the whole prompt ends with "[The End of Assistant D's Answer]": not a choice of D.
    reply = f"{ECHO}\n\n[The Start of Assistant D's Answer]\n\"text\"\n [The End of Assistant D's Answer]"
    verdict = parse_recommended(reply)
    assert verdict.letter is None
    assert verdict.failure is not None and verdict.failure.startswith("echo_only")
    assert parse_legacy(reply).letter == "A"  # the released regex takes the echoed first token


def test_verdict_before_an_echo_is_kept() -> None:
    assert parse_recommended(f"[[B]] because it fits best. (Format was: {ECHO})").letter == "B"


def test_letters_far_apart_are_not_an_echo() -> None:
    filler = " ".join(["This reply is considered carefully."] * 12)
    reply = f"[[A]] is vague. {filler} [[B]] is rude. {filler} [[C]] is off-topic. {filler} [[D]] fits. Verdict: [[D]]"
    verdict = parse_recommended(reply)
    assert verdict.letter == "D"
    assert verdict.method == "token"


@pytest.mark.parametrize(
    ("reply", "kind"),
    [("", "empty"), ("I cannot decide between them.", "no_verdict"), ("[[E]] and [[F]]", "out_of_range")],
)
def test_recommended_failures_say_why(reply: str, kind: str) -> None:
    verdict = parse_recommended(reply)
    assert verdict.letter is None
    assert verdict.failure is not None and verdict.failure.startswith(kind)
