"""TactfulToM's items and prompts: the final set's question counts per set and category are the spec's (and the
6,636 requests of a paper pass), every prompt is built as get_user_prompt / get_llm_input build it, the system prompts
are the spec's quotes of get_original_results.py, and the multiple-choice shuffle is seeded and mapped back."""

import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import MIRROR
from empathybench.instruments.tactfultom.data import SETS, Question, load_questions
from empathybench.instruments.tactfultom.parse import read_mcq
from empathybench.instruments.tactfultom.prompts import (
    COT_SYSTEM_PROMPTS,
    SYSTEM_PROMPTS,
    options_of,
    question_rng,
    second_pass,
    shown_options,
    user_prompt,
)
from empathybench.instruments.tactfultom.score import CATEGORIES

SPEC = MIRROR.parent / "specs" / "tactfultom.md"
# specs/tactfultom.md section 2: questions per set (0-4) of the final set, in upstream's category order.
COUNTS = {
    "comprehensionQA": (36, 9, 14, 16, 25),
    "fact_reasonQA": (36, 9, 14, 16, 25),
    "fact_truthQA": (22, 5, 8, 16, 17),
    "beliefQAs": (696, 168, 264, 384, 504),
    "infoAccessibilityQA_list": (58, 14, 8, 32, 42),
    "infoAccessibilityQAs_binary": (154, 28, 48, 90, 126),
    "answerabilityQA_list": (58, 14, 22, 32, 42),
    "answerabilityQAs_binary": (174, 42, 66, 96, 126),
    "lieabilityQAs": (78, 28, 12, 38, 42),
    "liedetectabilityQAs_list": (36, 9, 14, 16, 25),
    "liedetectabilityQAs_binary": (108, 27, 42, 48, 75),
}


@pytest.fixture(scope="module")
def questions() -> list[Question]:
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    return load_questions()[0]


def test_question_counts_and_requests_are_the_specs(questions: list[Question]) -> None:
    counts = Counter((q.category, q.set_id) for q in questions)
    assert {c: tuple(counts[(c, s)] for s in SETS) for c in CATEGORIES} == COUNTS
    assert sum(len(q.formats) for q in questions) == 6636  # requests per model and prompt, section 2
    assert len({q.question_id for q in questions}) == len(questions)
    assert sum(len(options_of(dict(q.fields))) == 2 for q in questions if q.category == "beliefQAs") == 68


def test_the_system_prompts_are_the_specs_quotes() -> None:
    if not SPEC.is_file():
        pytest.skip(f"the spec is not beside the repository ({SPEC})")
    section = SPEC.read_text("utf-8").split("## 3a ")[1].split("## 4 ")[0]
    quoted = re.findall(r"^  - (binary|freeform|mcq|list): `([^`]+)`", section, re.MULTILINE)
    assert [name for name, _ in quoted] == ["binary", "freeform", "mcq", "list"] * 2
    assert dict(quoted[:4]) == SYSTEM_PROMPTS and dict(quoted[4:]) == COT_SYSTEM_PROMPTS


def test_every_prompt_holds_context_information_question_and_options_as_upstream(questions: list[Question]) -> None:
    kinds: Counter[str] = Counter()
    for question in questions:
        fields = dict(question.fields)
        options = shown_options(options_of(fields), question_rng(0, question.question_id))
        for question_format in question.formats:
            shown = options.texts if question_format == "mcq" else None
            for cot in (False, True):
                text = user_prompt(question.context, fields, shown, cot)
                assert text.startswith(f"# Context:\n{question.context}\n\n")
                assert f"# Question:\n{fields['question']}\n\n" in text
                assert text.endswith("Let's think step by step:\n") == cot
            if "information" in fields:
                kinds["information"] += 1
                assert f"\n\n# Information:\n{fields['information']}\n\n# Question:" in text
            elif "# Target Question:\n" in text:
                kinds["target"] += 1
            else:
                kinds["none"] += 1
                assert "# Information:" not in text
            if shown is not None:
                block = text.split("# Options:\n")[1].removesuffix("Let's think step by step:\n")
                assert block == "\n".join(f"{n + 1}. {o}" for n, o in enumerate(shown)) + "\n\n"
                gold_number = options.mapping.index(0) + 1
                assert shown[gold_number - 1] == fields["correct_answer"]
                assert read_mcq(str(gold_number), options.mapping) == 0
    assert kinds["information"] and kinds["target"] and kinds["none"]


def test_the_target_question_is_the_first_key_present() -> None:
    fields = {"question": "Q?", "correct_answer": "a", "comprehension_q": "C?", "fact_question_truth": "T?"}
    assert "# Target Question:\nC?\n\n# Question:\nQ?\n\n" in user_prompt("ctx", fields, None, False)
    both = {**fields, "information": "I."}
    assert "# Information:\nI.\n\n# Question:" in user_prompt("ctx", both, None, False)


def test_options_unwrap_strings_and_nested_lists_and_the_shuffle_is_seeded() -> None:
    assert options_of({"correct_answer": "g", "wrong_answer": "w"}) == ["g", "w"]
    assert options_of({"correct_answer": "g", "wrong_answers": [["w1", "w2"], "w3"]}) == ["g", "w1", "w2", "w3"]
    four = ["g", "a", "b", "c"]
    first = shown_options(four, question_rng(3, "q-1"))
    assert first == shown_options(four, question_rng(3, "q-1"))
    assert sorted(first.mapping) == [0, 1, 2, 3] and list(first.texts) == [four[i] for i in first.mapping]
    orders = {shown_options(four, question_rng(seed, "q-1")).mapping for seed in range(20)}
    assert len(orders) > 5


def test_the_second_pass_carries_the_first_reply() -> None:
    user = user_prompt("ctx", {"question": "Q?"}, None, True)
    assert second_pass(user, "Step 1 ...") == user + "Step 1 ...\n\nTherefore, the final answer is: "


def test_no_item_text_is_in_the_instruments_code(questions: list[Question]) -> None:
    folder = Path(__file__).resolve().parents[1] / "src" / "empathybench" / "instruments" / "tactfultom"
    code = "\n".join(path.read_text("utf-8") for path in folder.glob("*.py"))
    samples = [q.context[:60] for q in questions[::400]] + [q.fields["question"] for q in questions[::97]]
    assert not [s for s in samples if len(s) > 30 and s in code]
