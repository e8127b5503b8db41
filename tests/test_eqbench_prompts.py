"""EQ-Bench prompt transforms (specs/eqbench.md §2). Item files are read through the fetch code only."""

import json
from pathlib import Path
from typing import Any

import pytest

from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.eqbench.prompts import (
    emotion_labels,
    no_revise_prompt,
    reference_scores,
    revise_prompt,
)

PINS = "empathybench.instruments.eqbench"  # the package whose pins.json holds the files these tests read

# Question files and the language of their no-revise transform.
QUESTION_FILES: dict[str, str] = {
    "eqbench/v1/eq_bench_v1_questions_60.json": "en",
    "eqbench/v2/eq_bench_v2_questions_171.json": "en",
    "eqbench/v2/eq_bench_v2_questions_171_de.json": "de",
    "eqbench/v2/eq_bench_v2_questions_171_de_original_v2.1.json": "de",
    "eqbench/v2/eq_bench_v2_questions_171_pl.json": "pl",
    "eqbench/v2/eq_bench_v2_questions_171_ja_community.json": "ja",
    "eqbench/v2/eq_bench_v2_questions_171_jahalf_community.json": "jahalf",
}

# Protocol strings of §2.2 that must be gone after the transform, per language.
REMOVED_STRINGS: dict[str, tuple[str, ...]] = {
    "en": ("Then critique your answer", "First pass scores:", "Critique: <", "Revised scores:"),
    "de": ("ritisieren", "Erste Bewertung:", "Kritik: <", "Überarbeitete Bewertung:"),
    "pl": ("Następnie skrytykuj", "Pierwsze oceny:", "Weryfikacja: <", "Zmienione oceny:"),
}
END_OF_ANSWER = {"en": "[End of answer]", "de": "[Ende der Antwort]", "pl": "[Koniec odpowiedzi]", "ja": "[回答終了]"}
ANSWER_CUE = {
    "en": "\nYour answer:\n",
    "de": "\nIhre Antwort:\n",
    "pl": "\nTwoja odpowiedź:\n",
    "ja": "\nあなたの回答:\n",
}

# A made-up item in the §2.1 template (not benchmark content), and its §2.2 transform written out by hand.
SYNTHETIC_EN = (
    "\nYour task is to predict the likely emotional responses of a character in this dialogue:\n\n"
    "Ann: Hello.\nBob: Hi.\n[End dialogue]\n\n"
    "At the end of this dialogue, Bob would feel...\nCalm\nTense\nBored\nGlad\n\n"
    "Give each of these possible emotions a score from 0-10 for the relative intensity that they are likely to "
    "be feeling each. Then critique your answer by thinking it through step by step. Finally, give your revised "
    "scores.\n\n"
    "You must output in the following format, including headings (of course, you should give your own scores), "
    "with no additional commentary:\n\n"
    "First pass scores:\nCalm: <score>\nTense: <score>\nBored: <score>\nGlad: <score>\n\n"
    "Critique: <your critique here>\n\n"
    "Revised scores:\nCalm: <revised score>\nTense: <revised score>\nBored: <revised score>\n"
    "Glad: <revised score>\n\n[End of answer]\n\n"
    "Remember: zero is a valid score, meaning they are likely not feeling that emotion. You must score at least "
    "one emotion > 0.\n"
)
EXPECTED_EN = (
    "\nYour task is to predict the likely emotional responses of a character in this dialogue:\n\n"
    "Ann: Hello.\nBob: Hi.\n[End dialogue]\n\n"
    "At the end of this dialogue, Bob would feel...\nCalm\nTense\nBored\nGlad\n\n"
    "Give each of these possible emotions a score from 0-10 for the relative intensity that they are likely to "
    "be feeling each.\n\n"
    "You must output in the following format, including headings (of course, you should give your own scores), "
    "with no additional commentary:\n\n"
    "Calm: <score>\nTense: <score>\nBored: <score>\nGlad: <score>\n\n\n[End of answer]\n\n"
    "Remember: zero is a valid score, meaning they are likely not feeling that emotion. You must score at least "
    "one emotion > 0.\n\nYour answer:\n"
)

# A made-up Japanese item shaped like the community file (its wording varies per item; see prompts.py).
SYNTHETIC_JA = (
    "\nあなたの課題は、この対話における登場人物の感情的な反応を予測することです: \n\n"
    "アン: こんにちは。\nボブ: やあ。\n[対話終了]\n\n"
    "この対話の終わりで、ボブは以下のような感情を感じているでしょう...\n平静\n緊張\n退屈\n喜び\n\n"
    "これらの感情それぞれについて、感じている強さを0-10で採点してください。その後、段階的に考えて回答を検討し、"
    "最終的な採点を行ってください。\n\n"
    "以下の形式で出力してください。追加のコメントは不要です: \n\n"
    "最初の採点: \n平静: <スコア>\n緊張: <スコア>\n退屈: <スコア>\n喜び: <スコア>\n\n"
    "検討: <あなたの検討内容>\n\n"
    "修正後のスコア: \n平静: <修正スコア>\n緊張: <修正スコア>\n退屈: <修正スコア>\n喜び: <修正スコア>\n\n"
    "[回答終了]\n\n注意: 0は有効なスコアです。\n"
)
EXPECTED_JA = (
    "\nあなたの課題は、この対話における登場人物の感情的な反応を予測することです: \n\n"
    "アン: こんにちは。\nボブ: やあ。\n[対話終了]\n\n"
    "この対話の終わりで、ボブは以下のような感情を感じているでしょう...\n平静\n緊張\n退屈\n喜び\n\n"
    "これらの感情それぞれについて、感じている強さを0-10で採点してください。\n\n"
    "以下の形式で出力してください。追加のコメントは不要です: \n\n"
    "平静: <スコア>\n緊張: <スコア>\n退屈: <スコア>\n喜び: <スコア>\n\n\n"
    "[回答終了]\n\n注意: 0は有効なスコアです。\n\nあなたの回答:\n"
)


def _load(key: str) -> dict[str, Any]:
    path: Path = fetch_pinned(PINS, key).path
    return json.loads(path.read_text(encoding="utf-8"))


def test_english_transform_matches_hand_written_result() -> None:
    assert no_revise_prompt(SYNTHETIC_EN, "en") == EXPECTED_EN


def test_japanese_structural_transform_matches_hand_written_result() -> None:
    assert no_revise_prompt(SYNTHETIC_JA, "ja") == EXPECTED_JA


def test_jahalf_uses_english_anchors_when_present() -> None:
    assert no_revise_prompt(SYNTHETIC_EN, "jahalf") == EXPECTED_EN
    assert no_revise_prompt(SYNTHETIC_JA, "jahalf") == EXPECTED_JA


def test_german_replaces_the_whole_instruction_sentence() -> None:
    stored = (
        "\nDialog\n[Ende des Dialogs]\n\nA\nB\nC\nD\n\n"
        "Geben Sie jeder dieser möglichen Emotionen eine Punktzahl von 0-10 für die relative Intensität, die sie "
        "wahrscheinlich empfinden werden. Dann kritisieren Sie Ihre Antwort. Schließlich geben Sie Ihre "
        "Punktzahlen an.\n\nSie müssen ...:\n\n"
        "Erste Bewertung:\nA: <Punktzahl>\nB: <Punktzahl>\nC: <Punktzahl>\nD: <Punktzahl>\n\n"
        "Kritik: <Ihre Kritik hier>\n\nÜberarbeitete Bewertung:\nA: <x>\nB: <x>\nC: <x>\nD: <x>\n\n"
        "[Ende der Antwort]\n\nDenken Sie daran.\n"
    )
    assert no_revise_prompt(stored, "de") == (
        "\nDialog\n[Ende des Dialogs]\n\nA\nB\nC\nD\n\n"
        "Geben Sie jeder dieser möglichen Emotionen eine Punktzahl von 0-10 für die relative Intensität, die sie "
        "wahrscheinlich fühlen werden.\n\nSie müssen ...:\n\n"
        "A: <Punktzahl>\nB: <Punktzahl>\nC: <Punktzahl>\nD: <Punktzahl>\n\n\n"
        "[Ende der Antwort]\n\nDenken Sie daran.\n\nIhre Antwort:\n"
    )


def test_polish_transform_uses_polish_anchors() -> None:
    stored = (
        "\nDialog\n[Koniec dialogu]\n\nPrzypisz ... odczuwać. Następnie skrytykuj swoją odpowiedź, przemyśl ją "
        "krok po kroku. Wprowadź zmiany i na koniec podaj ostateczne oceny.\n\nMusisz:\n\n"
        "Pierwsze oceny:\nWyrzuty sumienia: <ocena>\nB: <ocena>\nC: <ocena>\nD: <ocena>\n\n"
        "Weryfikacja: <twoja opinia tutaj>\n\nZmienione oceny:\nWyrzuty sumienia: <z>\nB: <z>\nC: <z>\nD: <z>\n\n"
        "[Koniec odpowiedzi]\n\nPamiętaj."
    )
    assert no_revise_prompt(stored, "pl") == (
        "\nDialog\n[Koniec dialogu]\n\nPrzypisz ... odczuwać.\n\nMusisz:\n\n"
        "Wyrzuty sumienia: <ocena>\nB: <ocena>\nC: <ocena>\nD: <ocena>\n\n\n"
        "[Koniec odpowiedzi]\n\nPamiętaj.\nTwoja odpowiedź:\n"
    )


@pytest.mark.parametrize("language", ["en", "de", "pl", "ja", "jahalf"])
def test_missing_anchors_raise_a_value_error_naming_the_item(language: str) -> None:
    with pytest.raises(ValueError, match=r"item 42 "):
        no_revise_prompt("\nA prompt without any protocol strings.\n", language, item_id="42")


def test_an_anchor_present_twice_is_an_error() -> None:
    doubled = SYNTHETIC_EN.replace("[End of answer]", "[End of answer]\n[End of answer]")
    with pytest.raises(ValueError, match="exactly once"):
        no_revise_prompt(doubled, "en", item_id="7")


def test_unknown_language_is_rejected() -> None:
    with pytest.raises(ValueError, match="unsupported EQ-Bench language"):
        no_revise_prompt(SYNTHETIC_EN, "fr")


def test_revise_prompt_is_the_stored_prompt() -> None:
    assert revise_prompt(SYNTHETIC_EN) is SYNTHETIC_EN


def test_reference_helpers_cast_string_scores() -> None:
    reference = {
        "emotion1": "Calm",
        "emotion2": "Tense",
        "emotion3": "Bored",
        "emotion4": "Glad",
        "emotion1_score": 0,
        "emotion2_score": "6",
        "emotion3_score": 0,
        "emotion4_score": "7",
    }
    assert emotion_labels(reference) == ["Calm", "Tense", "Bored", "Glad"]
    assert reference_scores(reference) == {"Calm": 0.0, "Tense": 6.0, "Bored": 0.0, "Glad": 7.0}


@pytest.mark.parametrize("key", sorted(QUESTION_FILES))
def test_transform_is_total_on_every_item(mirror: Path, key: str) -> None:
    language = QUESTION_FILES[key]
    questions = _load(key)
    assert len(questions) in (60, 171)
    japanese_instructions = 0
    for qid, item in questions.items():
        stored = item["prompt"]
        result = no_revise_prompt(stored, language, item_id=qid)
        labels = emotion_labels(item["reference_answer_fullscale"])
        # jahalf keeps English instructions except where the whole item is Japanese.
        effective = language
        if language in ("ja", "jahalf"):
            effective = "en" if "[End of answer]" in stored else "ja"
            japanese_instructions += effective == "ja"
        end = END_OF_ANSWER[effective]
        assert result.endswith(ANSWER_CUE[effective]), qid
        assert result.count(end) == 1 and "\n\n\n" + end in result, qid
        for label in labels:
            assert result.count(f"{label}: <") == 1, (qid, label)
        # Everything up to the instruction paragraph (dialogue, character, emotions) is unchanged.
        dialogue_part = stored[: stored.index(labels[3] + "\n\n") + len(labels[3])]
        assert result.startswith(dialogue_part), qid
        instructions = result[len(dialogue_part) :]
        for removed in REMOVED_STRINGS.get(effective, ()):
            assert removed not in instructions, (qid, removed)
        if effective == "ja":
            assert "その後" not in instructions, qid
    if language == "jahalf":
        assert japanese_instructions == 1  # one item of the half file is the fully Japanese prompt
    elif language == "ja":
        assert japanese_instructions == len(questions)


def test_german_instruction_is_normalised_on_every_item(mirror: Path) -> None:
    fixed = (
        "Geben Sie jeder dieser möglichen Emotionen eine Punktzahl von 0-10 für die relative Intensität, "
        "die sie wahrscheinlich fühlen werden.\n\n"
    )
    for qid, item in _load("eqbench/v2/eq_bench_v2_questions_171_de.json").items():
        assert no_revise_prompt(item["prompt"], "de", item_id=qid).count(fixed) == 1, qid
