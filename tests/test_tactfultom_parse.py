"""TactfulToM's reading and scoring of replies held to upstream's own code: evaluate_non_freeform.py's `_clean` and
`_clean_reasoning`, main_table.py's `_main_result` (pinned, read through the fetch code from the mirror, compiled on
their own) give the same cleaned answer for every released reply of the development models and for replies made to
reach each branch under each model name, and the same per-category accuracy for whole files."""

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR
from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.tactfultom.parse import (
    EVERY_STEP,
    UNREAD,
    Prestep,
    apply_prestep,
    clean_reply,
    list_matches_leniently,
    prestep_for,
    read_binary,
    read_list,
    read_list_lenient,
    read_mcq,
)
from empathybench.instruments.tactfultom.rescore import file_verdicts
from empathybench.instruments.tactfultom.score import CATEGORIES, category_counts, is_correct, table_row
from upstream_code import upstream_functions_of

PACKAGE = "empathybench.instruments.tactfultom"
NON_FREEFORM_KEY = "tactfultom/code/evaluate_non_freeform.py"
MAIN_TABLE_KEY = "tactfultom/code/main_table.py"
FILE_NAMES = (
    "gpt-4o-2024-08-06-0",
    "Llama-3.3-70B-Instruct-cot-1",
    "DeepSeek-V3-0324-2",
    "QwQ-32B-3",
    "DeepSeek-R1-Turbo-4",
    "o3-mini-2025-01-31-0",
)


@pytest.fixture(scope="module")
def upstream() -> dict[str, Any]:
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    source = fetch_pinned(PACKAGE, NON_FREEFORM_KEY).path.read_text("utf-8")
    namespace: dict[str, Any] = {"re": re, "json": json, "question_categories": list(CATEGORIES)}
    upstream_functions_of(source, NON_FREEFORM_KEY, ("filter_entry", "_clean", "_clean_reasoning"), namespace)
    # main_table.py's _main_result returns every entry's verdict per category (the pooling's input)
    table: dict[str, Any] = {"json": json, "question_categories": list(CATEGORIES)}
    source = fetch_pinned(PACKAGE, MAIN_TABLE_KEY).path.read_text("utf-8")
    namespace["_main_result"] = upstream_functions_of(source, MAIN_TABLE_KEY, ("filter_entry", "_main_result"), table)[
        "_main_result"
    ]
    return namespace


def _upstream_clean(upstream: dict[str, Any], entry: dict[str, Any], file_name: str) -> Any:
    if "QwQ" in file_name or "DeepSeek-R1" in file_name:
        return upstream["_clean_reasoning"](dict(entry), file_name)
    return upstream["_clean"](dict(entry), file_name)


def _released(model_file: str) -> list[dict[str, Any]]:
    path = fetch_pinned(PACKAGE, f"tactfultom/results/clean/{model_file}.json").path
    results = json.loads(path.read_text("utf-8"))
    return [e for conversation in results for c in CATEGORIES for q in conversation[c] for e in q]


@pytest.mark.parametrize("model_file", ["gpt-4o-2024-08-06-cot-2", "Llama-3.3-70B-Instruct-3"])
def test_every_released_reply_is_read_as_upstream_reads_it(upstream: dict[str, Any], model_file: str) -> None:
    entries = _released(model_file)
    for entry in entries:
        ours = clean_reply(
            entry["original_result"], entry["question_type"], entry["mcq_mapping"], prestep_for(model_file)
        )
        assert ours == _upstream_clean(upstream, entry, model_file), entry["original_result"][:200]
        assert ours == entry["clean_result"]  # and as the released file stored it
    assert len(entries) > 400


REPLIES = {
    "binary": ["Yes", "No.", "no, not at all", "YES!", "Maybe", "I know", "\\boxed{No}", "<think>yes</think>No", ""],
    "mcq": [
        "2",
        "Option 3",
        "option: 1",
        "The answer is: 4",
        "**Answer:** 2",
        "Final answer: **3**",
        "#1",
        "5",
        "none",
        "\\boxed{3}",
        "Thinking... \\boxed{2} so \\boxed{1}",
        "<think>1</think> 4",
        "Answer: {3}",
    ],
    "list": [
        "Mica, Kuba",
        "Mica, Kuba.",
        "Mica and Kuba",
        " Mica ,Kuba ",
        "\\boxed{Mica, Kuba}",
        "<think>x</think>Mica",
    ],
    "freeform": ["Because she cared.", "<think>hmm</think> Because she cared. ", "\\boxed{kind}"],
}


@pytest.mark.parametrize("file_name", FILE_NAMES)
def test_made_up_replies_reach_every_branch_under_every_model_name(upstream: dict[str, Any], file_name: str) -> None:
    for question_format, replies in REPLIES.items():
        for reply in replies:
            entry = {"question_type": question_format, "original_result": reply, "mcq_mapping": [2, 0, 3, 1]}
            ours = clean_reply(reply, question_format, entry["mcq_mapping"], prestep_for(file_name))
            assert ours == _upstream_clean(upstream, entry, file_name), (file_name, reply)


def test_an_empty_multiple_choice_reply_is_unread_where_upstream_raised(upstream: dict[str, Any]) -> None:
    entry = {"question_type": "mcq", "original_result": "", "mcq_mapping": [0, 1]}
    with pytest.raises(IndexError):
        upstream["_clean"](entry, "gpt-4o-0")
    assert read_mcq("", [0, 1]) == UNREAD == read_mcq("   ", [0, 1])


def test_the_prestep_is_keyed_on_the_file_name_and_ours_applies_both() -> None:
    assert prestep_for("QwQ-32B-0") == Prestep(think=True) == prestep_for("DeepSeek-R1-Turbo-cot-1")
    assert prestep_for("Llama-3.3-70B-Instruct-2") == Prestep(boxed=True) == prestep_for("DeepSeek-V3-0324-0")
    assert prestep_for("gpt-4o-2024-08-06-0") == Prestep()
    assert apply_prestep("<think>\\boxed{1}</think> So \\boxed{3} or \\boxed{4}", EVERY_STEP) == "3"
    assert apply_prestep("\\boxed{2}", Prestep()) == "\\boxed{2}"


def test_the_readings_and_verdicts() -> None:
    assert read_binary("Well, yes and no") == "yes" and read_binary("No!") == "no" and read_binary("nope") == UNREAD
    assert read_mcq("3", [1, 2, 0, 3]) == 0 and read_mcq("Answer: 1", [1, 2, 0, 3]) == 1
    assert read_mcq("7", [1, 2, 0, 3]) == UNREAD  # beyond the options shown
    assert read_list("Mica, Kuba.") == ["Mica", "Kuba."]
    assert is_correct("list", ["Kuba", "Mica"], ["Mica", "Kuba"]) and not is_correct("list", ["Mica"], ["Mica", "Kuba"])
    assert not is_correct("list", [""], []) and not is_correct("list", ["Mica", "Kuba."], ["Mica", "Kuba"])
    assert is_correct("binary", "no", "No") and not is_correct("binary", UNREAD, "no")
    assert is_correct("mcq", 0, "x") and is_correct("mcq", "0", "x") and not is_correct("mcq", UNREAD, "x")
    with pytest.raises(ValueError, match="freeform"):
        is_correct("freeform", "a", "a")


@pytest.mark.parametrize("model_file", ["gpt-4o-2024-08-06-4", "Llama-3.3-70B-Instruct-cot-0"])
def test_whole_files_score_as_main_result_scores_them(
    upstream: dict[str, Any], model_file: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = fetch_pinned(PACKAGE, f"tactfultom/results/clean/{model_file}.json").path
    (tmp_path / "results" / "clean").mkdir(parents=True)
    shutil.copy(source, tmp_path / "results" / "clean" / f"{model_file}.json")
    monkeypatch.chdir(tmp_path)  # _main_result reads results/clean/<name>.json
    theirs = upstream["_main_result"](model_file)
    results = json.loads(source.read_text("utf-8"))
    for reading in ("clean", "original"):
        row = table_row(category_counts(file_verdicts(results, Path(f"{model_file}.json"), reading)))
        for category in CATEGORIES:
            expected = 100 * sum(theirs[category]) / len(theirs[category])
            assert row[category] == pytest.approx(expected, abs=1e-9), (reading, category)
            assert row["n"][category] == len(theirs[category])


@pytest.mark.parametrize(
    ("reply", "names"),
    [
        ("Mica, Kuba.", ["mica", "kuba"]),
        ("Mica and Kuba", ["mica", "kuba"]),
        ("**Mica**, **Kuba**", ["mica", "kuba"]),
        ("- Mica\n- Kuba", ["mica", "kuba"]),
        ("Mica, Kuba, and Lee.", ["mica", "kuba", "lee"]),
        ("Andy; Sandra", ["andy", "sandra"]),  # "and" inside a name stays
        ("", []),
    ],
)
def test_the_lenient_list_reading(reply: str, names: list[str]) -> None:
    assert read_list_lenient(reply) == names


def test_the_lenient_list_verdict_ignores_case_and_order_only() -> None:
    assert list_matches_leniently(read_list_lenient("kuba and MICA."), ["Mica", "Kuba"])
    assert not list_matches_leniently(read_list_lenient("Mica"), ["Mica", "Kuba"])
    assert not list_matches_leniently(read_list_lenient("Mica, Kuba, Lee"), ["Mica", "Kuba"])
    assert not list_matches_leniently([], [])
