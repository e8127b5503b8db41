"""GIEBench data: rendering from structured items with a seeded shuffle, and the official-file loaders."""

import json
from pathlib import Path

import pytest

from empathybench.errors import DataError
from empathybench.instruments.giebench.data import (
    OFFICIAL_FILENAMES,
    fetch_official,
    identity_from_prompt,
    items_from_official,
    items_from_structured,
    load_official_dir,
    load_structured_file,
    normalize_dimension,
)
from empathybench.instruments.giebench.render import (
    CONDITIONS,
    gold_letter,
    option_permutation,
    render_prompt,
)

FIXTURES = Path(__file__).parent / "fixtures" / "giebench"
ANSWERS = ["first reply", "second reply", "third reply", "fourth reply"]
OPENING = (
    "Please act as a judge and evaluate the responses provided by four AI assistants to the user question "
    "displayed below."
)


def test_three_headers_differ_only_in_the_first_line() -> None:
    prompts = {c: render_prompt(c, identity="chef", question="Is it fine?", answers=ANSWERS) for c in CONDITIONS}
    first_lines = {c: p.split("\n", 1)[0] for c, p in prompts.items()}
    assert first_lines["Raw"] == OPENING
    assert first_lines["ID"] == OPENING + " The user belongs to the chef group."
    assert first_lines["COT"] == (
        OPENING + " You should choose the assistant that best fits the user's position and values. "
        "The user belongs to the chef group."
    )
    rests = {p.split("\n", 1)[1] for p in prompts.values()}
    assert len(rests) == 1


def test_rendered_layout() -> None:
    prompt = render_prompt("Raw", identity="x", question="Is it fine?", answers=ANSWERS)
    assert '\n\n[User Question]\n"Is it fine?"\n[The Start of Assistant A\'s Answer]\n"first reply"\n' in prompt
    assert prompt.endswith("[The Start of Assistant D's Answer]\n\"fourth reply\"\n [The End of Assistant D's Answer]")
    assert '"[[A]]" if assistant A is better, "[[B]]" if assistant B is better,"[[C]]"' in prompt


def test_render_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="condition"):
        render_prompt("CoT2", identity="x", question="q", answers=ANSWERS)
    with pytest.raises(ValueError, match="4 answers"):
        render_prompt("Raw", identity="x", question="q", answers=ANSWERS[:3])


def test_seeded_shuffle_is_stable_and_varies() -> None:
    assert option_permutation(0, "item-1") == option_permutation(0, "item-1")
    assert sorted(option_permutation(0, "item-1")) == [0, 1, 2, 3]
    permutations = {option_permutation(0, f"item-{i}") for i in range(40)}
    assert len(permutations) > 5
    golds = {gold_letter(option_permutation(0, f"item-{i}"), 0) for i in range(40)}
    assert golds == {"A", "B", "C", "D"}
    assert [option_permutation(1, f"item-{i}") for i in range(10)] != [
        option_permutation(0, f"item-{i}") for i in range(10)
    ]


def test_structured_items_render_with_a_recorded_permutation() -> None:
    data = json.loads((FIXTURES / "items.json").read_text("utf-8"))
    items = items_from_structured(data, seed=7, shuffle=True)
    assert len(items) == len(data["items"])
    for item, raw in zip(items, data["items"], strict=True):
        assert item.permutation is not None
        assert set(item.gold.values()) == {gold_letter(item.permutation, raw["correct_index"])}
        letter = item.gold["COT"]
        correct_text = raw["answers"][raw["correct_index"]]
        for condition in CONDITIONS:
            assert f'[The Start of Assistant {letter}\'s Answer]\n"{correct_text}"' in item.prompts[condition]
        assert f"The user belongs to the {raw['identity']} group." in item.prompts["ID"]
        assert "belongs to" not in item.prompts["Raw"]
    assert items[5].dimension == "Orientation"  # "Orentation" in the fixture, as in the source
    assert [i.permutation for i in items] == [i.permutation for i in items_from_structured(data, seed=7, shuffle=True)]


def test_structured_items_without_shuffle_keep_the_source_order() -> None:
    data = json.loads((FIXTURES / "items.json").read_text("utf-8"))
    items = items_from_structured(data, seed=7, shuffle=False)
    assert all(item.gold["Raw"] == "A" and item.permutation == (0, 1, 2, 3) for item in items)


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ({"answers": ["a", "b", "c"]}, "answers"),
        ({"correct_index": 4}, "correct_index"),
        ({"identity": ""}, "identity"),
    ],
)
def test_structured_items_are_validated(broken: dict[str, object], message: str) -> None:
    item = {"id": "x", "dimension": "Age", "identity": "young", "question": "q", "answers": ANSWERS, "correct_index": 0}
    with pytest.raises(DataError, match=message):
        items_from_structured([{**item, **broken}], seed=0, shuffle=True)


def test_structured_file_is_recorded_as_unverified() -> None:
    items, fetched = load_structured_file(FIXTURES / "items.json", seed=0, shuffle=True)
    assert items and not fetched.verified and len(fetched.sha256) == 64


def _official(records: dict[str, dict[str, str]]) -> dict[str, dict[str, dict[str, str]]]:
    return {condition: records for condition in CONDITIONS}


def test_official_files_join_by_key_and_name_the_identity() -> None:
    items, fetched = load_official_dir(FIXTURES / "official", allow_unverified=True)
    assert len(items) == 12 and not any(f.verified for f in fetched)
    first = items[0]
    assert first.item_id == "0" and first.identity == "chef" and first.gold == dict.fromkeys(CONDITIONS, "A")
    assert {i.dimension for i in items} >= {"Orientation", "Occupation"}
    assert "belongs to" not in first.prompts["Raw"]


def test_official_files_need_the_pinned_hash(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="git blob sha1"):
        load_official_dir(FIXTURES / "official", allow_unverified=False)
    target = tmp_path / "partial"
    target.mkdir()
    (target / "Raw-Prompt.json").write_text("{}")
    with pytest.raises(DataError, match=r"ID-Prompt\.json is missing"):
        load_official_dir(target, allow_unverified=True)


def test_official_records_are_validated() -> None:
    good = {"prompt": "p", "correct": "B", "category": "Orentation"}
    assert items_from_official(_official({"k": good}))[0].dimension == "Orientation"
    with pytest.raises(DataError, match="correct"):
        items_from_official(_official({"k": {**good, "correct": "E"}}))
    with pytest.raises(DataError, match="prompt"):
        items_from_official(_official({"k": {"correct": "A", "category": "Age"}}))
    mismatched = {"Raw": {"k": good}, "ID": {"k": good}, "COT": {"other": good}}
    with pytest.raises(DataError, match="different item keys"):
        items_from_official(mismatched)


def test_an_identity_field_wins_over_the_header() -> None:
    record = {"prompt": "The user belongs to the teacher group.", "correct": "A", "category": "Occupation"}
    assert items_from_official(_official({"k": record}))[0].identity == "teacher"
    with_field = {**record, "identity": "Teacher"}
    assert items_from_official(_official({"k": with_field}))[0].identity == "Teacher"
    assert identity_from_prompt("no header") is None
    assert normalize_dimension(" party ") == "Party"


def test_official_files_are_not_in_the_offline_mirror() -> None:
    with pytest.raises(DataError, match=r"giebench\.data_dir"):
        fetch_official(allow_unverified=False)


def test_fixture_files_have_the_documented_names() -> None:
    assert sorted(p.name for p in (FIXTURES / "official").glob("*.json")) == sorted(OFFICIAL_FILENAMES.values())
