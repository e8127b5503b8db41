"""Every answer parser is bounded and linear-ish; stored and rendered replies are bounded (issue 11 item 5).

The linear rewrites must give exactly what the original regexes give: they are compared on random texts built
from the characters and headings that matter to each pattern.
"""

import json
import os
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import run_in_process
from empathybench.engine.engine import MAX_STORED_REPLY_CHARS, Generation
from empathybench.instruments.bounds import MAX_PARSED_CHARS
from empathybench.instruments.emotionbench import parse as emotionbench_parse
from empathybench.instruments.empathetic import judge as empathetic_judge
from empathybench.instruments.eqbench import parse as eqbench_parse
from empathybench.instruments.giebench import parse as giebench_parse
from empathybench.instruments.seceu.parse import parse_allocation
from empathybench.models.base import ChatRequest, Sampling
from empathybench.testing.fake_openai import FakeOpenAIServer

REFERENCE = {f"emotion{i}": label for i, label in enumerate(("Joy", "Anger", "Fear", "Relief"), start=1)}
REFERENCE.update({f"emotion{i}_score": i for i in range(1, 5)})
FIVE_MB = 5_000_000
PARSERS: dict[str, Callable[[str], Any]] = {
    "eqbench en": lambda text: eqbench_parse.parse_answer(text, REFERENCE),
    "eqbench en revise": lambda text: eqbench_parse.parse_answer(text, REFERENCE, revise=True),
    "eqbench de revise v24": lambda text: eqbench_parse.parse_answer(
        text, REFERENCE, language="de", revise=True, mode="v24"
    ),
    "eqbench de": lambda text: eqbench_parse.parse_answer(text, REFERENCE, language="de"),
    "eqbench pl": lambda text: eqbench_parse.parse_answer(text, REFERENCE, language="pl"),
    "eqbench ja revise": lambda text: eqbench_parse.parse_answer(text, REFERENCE, language="ja", revise=True),
    "seceu": lambda text: parse_allocation(text, ["Joyful", "Sad", "Angry", "Calm"], ignore=("a story",)),
    "giebench recommended": giebench_parse.parse_recommended,
    "giebench legacy": giebench_parse.parse_legacy,
    "emotionbench": lambda text: emotionbench_parse.parse_reply(text, ["Excited", "Upset", "Calm"], 1, 5),
    "empathetic judge": empathetic_judge.parse_rating,
}
HOSTILE_SHAPES = {
    "one word": "a" * FIVE_MB,
    "digits": "7" * FIVE_MB,
    "spaces then a letter": "Joyful" + " " * FIVE_MB + "x",
    "open brackets": "[" * FIVE_MB,
    "tokens": "[[A]] " * (FIVE_MB // 6),
    "headings without colon": "Erste" * (FIVE_MB // 5),
    "pairs": "Joy: 5 " * (FIVE_MB // 7),
}


@pytest.mark.parametrize("parser_name", list(PARSERS))
def test_a_5_mb_single_word_parses_quickly(parser_name: str) -> None:
    started = time.perf_counter()
    PARSERS[parser_name]("a" * FIVE_MB)
    assert time.perf_counter() - started < 2.0  # the EQ-Bench parser took ~30 h on this before


@pytest.mark.parametrize("shape", list(HOSTILE_SHAPES))
def test_every_parser_is_quick_on_hostile_shapes(shape: str) -> None:
    text = HOSTILE_SHAPES[shape]
    slow = {}
    for name, parse in PARSERS.items():
        started = time.perf_counter()
        parse(text)
        elapsed = time.perf_counter() - started
        if elapsed >= 2.0:
            slow[name] = round(elapsed, 2)
    assert slow == {}


def test_each_parser_says_when_it_cut_a_reply() -> None:
    long_text = "x" * (MAX_PARSED_CHARS + 10)
    cut = f"cut at {MAX_PARSED_CHARS} of {MAX_PARSED_CHARS + 10} characters"
    assert any(cut in note for note in PARSERS["eqbench en"](long_text).notes)
    assert any(cut in note for note in PARSERS["eqbench en revise"](long_text).notes)
    assert cut in PARSERS["seceu"](long_text).note
    assert cut in PARSERS["giebench recommended"](long_text).failure
    assert cut in PARSERS["giebench legacy"](long_text).failure
    assert cut in PARSERS["emotionbench"](long_text).failure
    # A normal reply is read whole, with no note.
    parsed = PARSERS["eqbench en"]("Joy: 1\nAnger: 2\nFear: 3\nRelief: 4")
    assert parsed.first_pass == {"Joy": 1.0, "Anger": 2.0, "Fear": 3.0, "Relief": 4.0}
    assert parsed.notes == ()


def test_failure_reasons_quote_a_huge_label_briefly() -> None:
    parsed = PARSERS["eqbench en"]("Joy: 1\nAnger: 2\nFear: 3\n" + "b" * 50_000 + ": 4")
    assert parsed.failure_reason is not None and len(parsed.failure_reason) < 300


def _random_texts(alphabet: list[str], seed: int, n: int = 4000, length: int = 30) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, length))) for _ in range(n)]


def test_linear_eqbench_pairs_and_blocks_equal_the_upstream_regexes() -> None:
    alphabet = [
        *"ab5 :\n*#<>,_.ä7\t",
        "First pass scores:",
        "Revised scores:",
        "Erste",
        "erste Punkte",
        "Überarbeitete",
        "ÜBERARBEITETE Werte",
        "Pierwsze oceny:",
        "Zmienione oceny:",
        "Joy",
    ]
    for text in _random_texts(alphabet, seed=11):
        for language in ("en", "de", "pl", "ja", "jahalf"):
            expected = [(m.group(1), m.group(2), m.end()) for m in eqbench_parse._pair_pattern(language).finditer(text)]
            assert eqbench_parse._pair_matches(text, language) == expected, (language, text)
        for language, first_pattern, revised_pattern in (
            ("en", eqbench_parse._ENGLISH_FIRST_PASS, eqbench_parse._ENGLISH_REVISED),
            ("pl", eqbench_parse._POLISH_FIRST_PASS, eqbench_parse._POLISH_REVISED),
        ):
            first, revised = first_pattern.search(text), revised_pattern.search(text)
            expected_blocks = (first.group(1) if first else None, revised.group(1) if revised else None)
            assert eqbench_parse.split_revise_blocks(text, language=language) == expected_blocks, (language, text)
        first, revised = eqbench_parse._GERMAN_FIRST_PASS.search(text), eqbench_parse._GERMAN_REVISED.search(text)
        expected_blocks = (first.group(2) if first else None, revised.group(2) if revised else None)
        assert eqbench_parse.split_revise_blocks(text, language="de") == expected_blocks, text


def test_linear_giebench_legacy_equals_the_released_regex() -> None:
    alphabet = ["[[A]]", "[[B]]", "[[E]]", "[", "]", "x", " ", "[[", "]]", "[[a]]", "A"]
    for text in _random_texts(alphabet, seed=12, length=14):
        match = giebench_parse.LEGACY_VERDICT.search(text)
        assert giebench_parse.legacy_letter(text) == (match.group(1) if match else None), text


def test_linear_judge_and_emotionbench_patterns_equal_the_originals() -> None:
    decoration = re.compile(r"""^[\s*_"'`]+|[\s*_"'`.!]+$""")
    alphabet = [" ", "\n", "*", "_", '"', "'", "`", ".", "!", "Good", "okay", "BAD", "x", "\t"]
    for text in _random_texts(alphabet, seed=13, length=10):
        expected = empathetic_judge.LABEL_RATINGS.get(decoration.sub("", text).lower())
        assert empathetic_judge.parse_rating(text) == expected, text
    scale = re.compile(r"\s*(?:/|out of)\s*\d+")
    for text in _random_texts([" ", "\n", "/", "5", "out of", "x", "12", "\t"], seed=14, length=12):
        assert emotionbench_parse._SCALE_MAXIMUM.sub("", text) == scale.sub("", text), text


def test_a_stored_call_keeps_the_head_of_a_huge_reply() -> None:
    generation = Generation(
        text="z" * FIVE_MB,
        cached=False,
        finish_reason="stop",
        prompt_tokens=1,
        completion_tokens=1,
        attempt=0,
        repetition=0,
    )
    request = ChatRequest.of("quote: " + "q" * (MAX_STORED_REPLY_CHARS + 1), Sampling(temperature=0, max_tokens=5))
    record = generation.as_record(request)
    assert record["reply"] == "z" * MAX_STORED_REPLY_CHARS
    assert record["reply_chars"] == FIVE_MB
    assert f"of {FIVE_MB} characters" in record["reply_cut"]
    [message] = record["messages"]
    assert len(message["content"]) == MAX_STORED_REPLY_CHARS
    assert message["content_chars"] == MAX_STORED_REPLY_CHARS + 8


def test_a_run_of_5_mb_replies_makes_bounded_files(tmp_path: Path, mirror: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"), EMPATHYBENCH_MIRROR=str(mirror), OPENAI_API_KEY="sk-x")
    run_dir, n_items = tmp_path / "run", 4
    with FakeOpenAIServer(answer=lambda request: "a" * FIVE_MB) as server:
        command = [sys.executable, "-m", "empathybench", "run", "--model", "openai/fake", "--base-url"]
        command += [server.base_url, "--bench", "eqbench", "--preset", "paper", "--limit", str(n_items), "--quiet"]
        # Replies this large are refused by default (models/reply_bounds.py); allowed here, their records and the
        # report still stay small.
        command += ["--out", str(run_dir), "--no-cache", "--max-reply-bytes", str(2 * FIVE_MB)]
        started = time.monotonic()
        result = run_in_process(command, env)
        elapsed = time.monotonic() - started
    # 5 MB of "a" rates nothing: the run says so in one line and exits 1, its files written and bounded
    assert result.returncode == 1 and "eqbench: no item could be scored" in result.stderr, result.stderr
    records = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines()]
    assert len(records) == n_items
    calls = [call for record in records for call in record["calls"]]
    assert all(call["reply_chars"] == FIVE_MB for call in calls)
    assert (run_dir / "samples.jsonl").stat().st_size < len(calls) * (MAX_STORED_REPLY_CHARS + 20_000)
    html = (run_dir / "report.html").read_text("utf-8")
    assert len(html) < 1_000_000  # before: every reply in full, 26 MB for such a run
    assert f"cut at 4000 of {FIVE_MB} characters" in html
    assert elapsed < 120
