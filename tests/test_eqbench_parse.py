"""EQ-Bench answer parsing (specs/eqbench.md §4). Labels here are made up, except where items are fetched."""

import json
from pathlib import Path
from typing import Any

import pytest

from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.eqbench.parse import (
    extract_pairs,
    parse_answer,
    prepare_text,
    split_revise_blocks,
)
from empathybench.instruments.eqbench.prompts import emotion_labels

PINS = "empathybench.instruments.eqbench"  # the package whose pins.json holds the files these tests read


def make_reference(labels: list[str], scores: list[Any] | None = None) -> dict[str, Any]:
    scores = scores or [0, "6", 0, "7"]
    reference: dict[str, Any] = {}
    for index, (label, score) in enumerate(zip(labels, scores, strict=True), start=1):
        reference[f"emotion{index}"] = label
        reference[f"emotion{index}_score"] = score
    return reference


REFERENCE = make_reference(["Anger", "Joy", "Fear", "Pride"])
GOOD = "Anger: 7\nJoy: 0\nFear: 2\nPride: 5"


def test_plain_answer_parses() -> None:
    parsed = parse_answer(GOOD, REFERENCE)
    assert parsed.parseable
    assert parsed.first_pass == {"Anger": 7.0, "Joy": 0.0, "Fear": 2.0, "Pride": 5.0}
    assert parsed.revised is None and parsed.failure_reason is None and parsed.notes == ()


def test_no_space_after_colon_does_not_match() -> None:
    parsed = parse_answer("Anger:7\nJoy: 0\nFear: 2\nPride: 5", REFERENCE)
    assert parsed.first_pass is None
    assert parsed.failure_reason == "found 3 pairs, expected 4"


def test_decimal_part_is_silently_dropped() -> None:
    parsed = parse_answer("Anger: 7.5\nJoy: 0\nFear: 2\nPride: 5", REFERENCE)
    assert parsed.first_pass is not None and parsed.first_pass["Anger"] == 7.0
    assert parsed.notes == ("decimal part dropped: 'Anger' read as 7",)


@pytest.mark.parametrize("bold", ["**Anger**: 7", "Anger: **7**"])
def test_markdown_fails_strict_but_parses_in_v24(bold: str) -> None:
    text = GOOD.replace("Anger: 7", bold)
    strict = parse_answer(text, REFERENCE, mode="strict_v23")
    assert strict.first_pass is None
    assert strict.failure_reason == "found 3 pairs, expected 4"
    v24 = parse_answer(text, REFERENCE, mode="v24")
    assert v24.first_pass is not None and v24.first_pass["Anger"] == 7.0


def test_a_markdown_heading_prefix_does_not_matter() -> None:
    text = GOOD.replace("Anger: 7", "## Anger: 7")
    assert parse_answer(text, REFERENCE, mode="strict_v23").parseable
    assert parse_answer(text, REFERENCE, mode="v24").parseable


def test_an_extra_word_number_pair_invalidates_the_item() -> None:
    parsed = parse_answer(GOOD + "\nTotal: 14", REFERENCE)
    assert parsed.first_pass is None
    assert parsed.failure_reason == "found 5 pairs, expected 4"
    assert parsed.first_pass_pairs["Total"] == "14"


def test_newline_between_label_and_number_matches() -> None:
    parsed = parse_answer("Anger:\n7\nJoy: 0\nFear: 2\nPride: 5", REFERENCE)
    assert parsed.first_pass is not None and parsed.first_pass["Anger"] == 7.0


def test_later_duplicate_overwrites_earlier() -> None:
    parsed = parse_answer("Anger: 3\n" + GOOD, REFERENCE)
    assert parsed.first_pass is not None and parsed.first_pass["Anger"] == 7.0
    assert parsed.notes == ("duplicate label 'Anger': the later value 7 replaces 3",)


def test_case_mismatch_fails_strict_and_passes_v24() -> None:
    text = GOOD.replace("Anger", "anger")
    strict = parse_answer(text, REFERENCE, mode="strict_v23")
    assert strict.failure_reason == "labels do not match references: missing Anger; unexpected anger"
    v24 = parse_answer(text, REFERENCE, mode="v24")
    assert v24.first_pass == {"anger": 7.0, "Joy": 0.0, "Fear": 2.0, "Pride": 5.0}  # labels as written


def test_wrong_label_is_named() -> None:
    parsed = parse_answer(GOOD.replace("Pride", "Shame"), REFERENCE)
    assert parsed.failure_reason == "labels do not match references: missing Pride; unexpected Shame"


def test_no_pairs_reason() -> None:
    parsed = parse_answer("I cannot rate these emotions.", REFERENCE)
    assert parsed.failure_reason == "no 'Label: number' pairs found"
    assert parse_answer("", REFERENCE).failure_reason == "no 'Label: number' pairs found"


def test_out_of_range_values_are_accepted() -> None:
    parsed = parse_answer(GOOD.replace("Anger: 7", "Anger: 15"), REFERENCE)
    assert parsed.first_pass is not None and parsed.first_pass["Anger"] == 15.0


def test_v1_rejects_all_zero_answers() -> None:
    zeros = "Anger: 0\nJoy: 0\nFear: 0\nPride: 0"
    assert parse_answer(zeros, REFERENCE, scoring="v2").parseable
    v1 = parse_answer(zeros, REFERENCE, scoring="v1")
    assert v1.first_pass is None and v1.failure_reason == "sum of answers is 0 (v1)"


REVISE_ANSWER = (
    "First pass scores:\nAnger: 7\nJoy: 0\nFear: 2\nPride: 5\n\n"
    "Critique: Anger seems right.\n\n"
    "Revised scores:\nAnger: 8\nJoy: 0\nFear: 1\nPride: 5\n\n[End of answer]"
)


def test_revise_mode_splits_the_two_passes() -> None:
    parsed = parse_answer(REVISE_ANSWER, REFERENCE, revise=True)
    assert parsed.first_pass == {"Anger": 7.0, "Joy": 0.0, "Fear": 2.0, "Pride": 5.0}
    assert parsed.revised == {"Anger": 8.0, "Joy": 0.0, "Fear": 1.0, "Pride": 5.0}
    assert parsed.failure_reason is None and parsed.revised_failure_reason is None


def test_revise_mode_counts_critique_pairs_in_the_first_block() -> None:
    text = REVISE_ANSWER.replace("Critique: Anger seems right.", "Critique: Anger: 9 would be too high.")
    parsed = parse_answer(text, REFERENCE, revise=True)
    assert parsed.first_pass is not None and parsed.first_pass["Anger"] == 9.0  # a later duplicate wins


def test_revise_mode_without_revised_heading_loses_both_passes() -> None:
    truncated = REVISE_ANSWER.split("Revised scores:")[0]
    parsed = parse_answer(truncated, REFERENCE, revise=True)
    assert parsed.first_pass is None and parsed.revised is None
    assert parsed.failure_reason is not None and "first-pass block not found" in parsed.failure_reason
    assert parsed.revised_failure_reason == "revised block not found (no revised heading)"


def test_no_revise_mode_reads_the_whole_text() -> None:
    # Without revise the whole text is one block; the revised values overwrite the first-pass ones.
    parsed = parse_answer(REVISE_ANSWER, REFERENCE, revise=False)
    assert parsed.first_pass == {"Anger": 8.0, "Joy": 0.0, "Fear": 1.0, "Pride": 5.0}


GERMAN = make_reference(["Reuevoll", "Gleichgültig", "Zuneigend", "Verärgert"])


def test_german_pairs_strip_labels_and_accept_bold_digits() -> None:
    text = "Reuevoll: 1\nGleichgültig: **6**\nZuneigend:0\nVerärgert:  7"
    parsed = parse_answer(text, GERMAN, language="de")
    assert parsed.first_pass == {"Reuevoll": 1.0, "Gleichgültig": 6.0, "Zuneigend": 0.0, "Verärgert": 7.0}


def test_german_decimal_comma_is_matched_but_cannot_be_converted() -> None:
    parsed = parse_answer("Reuevoll: 1\nGleichgültig: 6,5\nZuneigend: 0\nVerärgert: 7", GERMAN, language="de")
    assert parsed.first_pass is None
    assert parsed.failure_reason == "decimal comma (de) cannot be converted: Gleichgültig: 6,5"


def test_german_revise_headings_are_case_insensitive() -> None:
    text = (
        "ERSTE Bewertung:\nReuevoll: 1\nGleichgültig: 6\nZuneigend: 0\nVerärgert: 7\n\n"
        "überarbeitete Bewertung:\nReuevoll: 0\nGleichgültig: 5\nZuneigend: 0\nVerärgert: 8\n"
    )
    first, revised = split_revise_blocks(text, language="de")
    assert first is not None and revised is not None
    parsed = parse_answer(text, GERMAN, language="de", revise=True)
    assert parsed.first_pass is not None and parsed.first_pass["Verärgert"] == 7.0
    assert parsed.revised is not None and parsed.revised["Verärgert"] == 8.0


POLISH = make_reference(["Wyrzuty sumienia", "Apatia", "Czułość", "Zirytowanie"])
POLISH_ANSWER = "Wyrzuty sumienia: 1\nApatia: <6>\nCzułość: 0\nZirytowanie: 7"


def test_polish_multi_word_labels_need_the_polish_pattern() -> None:
    parsed = parse_answer(POLISH_ANSWER, POLISH, language="pl")
    assert parsed.first_pass == {"Wyrzuty sumienia": 1.0, "Apatia": 6.0, "Czułość": 0.0, "Zirytowanie": 7.0}
    english = parse_answer(POLISH_ANSWER.replace("<6>", "6"), POLISH, language="en")
    assert english.first_pass is None
    assert english.failure_reason == "labels do not match references: missing Wyrzuty sumienia; unexpected sumienia"


def test_polish_revise_headings() -> None:
    text = f"Pierwsze oceny:\n{POLISH_ANSWER}\n\nWeryfikacja: ok\n\nZmienione oceny:\n{POLISH_ANSWER}\n"
    parsed = parse_answer(text, POLISH, language="pl", revise=True)
    assert parsed.first_pass is not None and parsed.revised is not None


JAPANESE = make_reference(["後悔", "無関心", "愛情", "いらだち"])


def test_japanese_accepts_full_width_colon_and_digits_without_space() -> None:
    parsed = parse_answer("後悔：０\n無関心: 6\n愛情:0\nいらだち：７点", JAPANESE, language="ja")
    assert parsed.first_pass == {"後悔": 0.0, "無関心": 6.0, "愛情": 0.0, "いらだち": 7.0}


def test_japanese_revise_split_on_the_revised_heading() -> None:
    text = (
        "最初の採点:\n後悔: 0\n無関心: 6\n愛情: 0\nいらだち: 7\n\n批評: 妥当。\n\n"
        "修正後のスコア：\n後悔: 1\n無関心: 5\n愛情: 0\nいらだち: 8\n"
    )
    parsed = parse_answer(text, JAPANESE, language="ja", revise=True)
    assert parsed.first_pass is not None and parsed.first_pass["いらだち"] == 7.0
    assert parsed.revised is not None and parsed.revised["いらだち"] == 8.0


def test_prepare_text_and_extract_pairs() -> None:
    assert prepare_text("**A**: 1 #", mode="v24") == "A: 1 "
    assert prepare_text("**A**: 1", mode="strict_v23") == "**A**: 1"
    assert extract_pairs("A: 1 B: 2 C:3")[0] == {"A": "1", "B": "2"}


def test_unknown_mode_or_language_is_rejected() -> None:
    with pytest.raises(ValueError, match="parse mode"):
        parse_answer(GOOD, REFERENCE, mode="loose")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="language"):
        parse_answer(GOOD, REFERENCE, language="xx")


def _load(key: str) -> dict[str, Any]:
    path: Path = fetch_pinned(PINS, key).path
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("key", "language", "separator"),
    [
        ("eqbench/v2/eq_bench_v2_questions_171.json", "en", ": "),
        ("eqbench/v2/eq_bench_v2_questions_171_de.json", "de", ": "),
        ("eqbench/v2/eq_bench_v2_questions_171_pl.json", "pl", ": "),
        ("eqbench/v2/eq_bench_v2_questions_171_ja_community.json", "ja", "："),
        ("eqbench/v2/eq_bench_v2_questions_171_jahalf_community.json", "jahalf", ": "),
    ],
)
def test_every_item_label_set_is_parseable_in_its_language(
    mirror: Path, key: str, language: str, separator: str
) -> None:
    """An answer in the prompt's own format parses for every item, so no label breaks its language's regex."""
    for qid, item in _load(key).items():
        reference = item["reference_answer_fullscale"]
        labels = emotion_labels(reference)
        answer = "\n".join(f"{label}{separator}{n}" for n, label in enumerate(labels, start=3))
        parsed = parse_answer(answer, reference, language=language)
        assert parsed.first_pass == {label: float(n) for n, label in enumerate(labels, start=3)}, qid


def test_english_regex_fails_on_polish_multi_word_items(mirror: Path) -> None:
    questions = _load("eqbench/v2/eq_bench_v2_questions_171_pl.json")
    failing = 0
    for item in questions.values():
        reference = item["reference_answer_fullscale"]
        answer = "\n".join(f"{label}: 5" for label in emotion_labels(reference))
        failing += not parse_answer(answer, reference, language="en").parseable
    # SOURCE.md: 95 of the 684 Polish labels are multi-word; each such item fails with the English regex.
    assert failing > 0
