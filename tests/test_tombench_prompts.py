"""ToMBench's prompts and shuffles: every item's prompt and letter map equal run_api.py's own format_prompt_4 /
format_prompt_2 given the same shuffle, the system prompts are the ones run_api.py picks, and no prompt text is in
our code (it is read from the pinned prompts.py at run time)."""

import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from empathybench.errors import DataError
from empathybench.instruments.tombench.data import LANGUAGES, Presentation, load_items
from empathybench.instruments.tombench.prompts import load_prompts, prompts_from_source, shuffle_options, try_rng
from tombench_upstream import upstream_functions, upstream_prompt_namespace, upstream_records

FOLDER = Path(__file__).resolve().parents[1] / "src" / "empathybench" / "instruments" / "tombench"


@pytest.fixture
def upstream(mirror: Path) -> dict[str, Any]:
    return upstream_functions(
        "tombench/run_api.py", ("format_prompt_4", "format_prompt_2"), upstream_prompt_namespace()
    )


def test_every_prompt_and_map_equals_run_api_given_the_same_shuffle(upstream: dict[str, Any]) -> None:
    prompts, _ = load_prompts()
    items, _ = load_items()
    records = {task: upstream_records(task) for task in {item.task for item in items}}
    for item in items:
        record = records[item.task][item.number - 1]
        for language in LANGUAGES:
            for try_index in range(2):
                ours = shuffle_options(item.languages[language], try_rng(42, item.question_id, try_index))
                # run_api.py shuffles with the module `random`; give it the same generator in the same state
                upstream["random"] = try_rng(42, item.question_id, try_index)
                # It picks the 2-option form by `d['选项C'] != None`, which the data's NaN passes (and then fails
                # on NaN.replace): the 2-option items go to format_prompt_2, as upstream meant.
                build = upstream["format_prompt_4" if item.n_options == 4 else "format_prompt_2"]
                mapping, prompt = build(record, SimpleNamespace(language=language))
                assert prompts.user(language, ours.shown) == prompt, (item.question_id, language)
                assert ours.mapping == mapping, (item.question_id, language)


def test_the_system_prompt_is_the_one_run_api_picks(mirror: Path) -> None:
    prompts, _ = load_prompts()
    names = upstream_prompt_namespace()
    for language in LANGUAGES:
        assert prompts.system(language, False) == names[f"SystemEvaluatePrompt_{language}"]
        assert prompts.system(language, True) == names[f"SystemEvaluatePrompt_{language}_cot"]


def test_no_upstream_prompt_text_is_in_our_code(mirror: Path) -> None:
    names = upstream_prompt_namespace()
    ours = "\n".join(path.read_text("utf-8") for path in FOLDER.rglob("*.py"))
    lines = {line.strip() for text in names.values() if isinstance(text, str) for line in text.splitlines()}
    assert not [line for line in lines if len(line) >= 12 and line in ours]


def test_shuffles_depend_on_seed_item_and_try_only() -> None:
    options = Presentation("story", "question", ("w", "x", "y", "z"))
    orders = {shuffle_options(options, try_rng(0, "q-1", k)).order for k in range(20)}
    assert len(orders) > 5  # the tries see different orders
    assert shuffle_options(options, try_rng(0, "q-1", 3)) == shuffle_options(options, try_rng(0, "q-1", 3))
    assert {shuffle_options(options, try_rng(1, "q-1", k)).order for k in range(20)} != orders


def test_the_map_sends_each_shown_letter_back_to_its_option() -> None:
    options = Presentation("s", "q", ("w", "x", "y", "z"))
    for k in range(50):
        shuffled = shuffle_options(options, random.Random(k))
        for shown, original in shuffled.mapping.items():
            assert options.options["ABCD".index(original)] == shuffled.shown.options["ABCD".index(shown)]
        assert "".join(shuffled.mapping[letter] for letter in "ABCD") == shuffled.order
    two = shuffle_options(Presentation("s", "q", ("yes", "no")), random.Random(1))
    assert set(two.mapping) == set("ABCD") and two.mapping["C"] == two.mapping["D"] == ""
    # Two options with one text (Unexpected Outcome Test lines 166, 168 in English) both map to the first.
    same = Presentation("s", "q", ("Angry", "Thrilled", "Angry", "Surprise"))
    for k in range(20):
        shuffled = shuffle_options(same, random.Random(k))
        assert sorted(shuffled.mapping.values()) == ["A", "A", "B", "D"]


def test_a_prompts_file_without_a_needed_name_is_one_data_error() -> None:
    with pytest.raises(DataError, match="lacks SystemEvaluatePrompt_en"):
        prompts_from_source('SystemEvaluatePrompt_zh = "x"\n')
    with pytest.raises(DataError, match="does not parse"):
        prompts_from_source("x = (")
