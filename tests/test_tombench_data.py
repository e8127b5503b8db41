"""ToMBench's data: the 20 pinned files read into 2,860 items, the taxonomy (6 categories, 31 abilities, 8 tasks)
as the upstream README states it, the data's quirks handled as documented, and the quick cut's strata."""

import math
import re
from collections import Counter
from pathlib import Path

import pytest

from empathybench.errors import DataError
from empathybench.instruments.tombench.atoms import ATOMS, CATEGORY_OF, TASKS, abilities_of
from empathybench.instruments.tombench.bench import QUICK_PER_STRATUM, configure, select_items
from empathybench.instruments.tombench.data import N_ITEMS, data_keys, load_items, parse_items, pins
from tombench_upstream import upstream_records, upstream_source


def _readme_sections(readme: str, heading: str) -> str:
    start = readme.index(heading)
    end = readme.find("\n## ", start + len(heading))
    return readme[start : end if end != -1 else None]


def test_the_pins_hold_the_20_item_files_and_the_protocol_files() -> None:
    assert len(data_keys()) == 20
    assert {"tombench/prompts.py", "tombench/run_api.py", "tombench/get_results.py"} <= set(pins())
    assert all(pin.sha256 and pin.commit == "4f491f0784ed31ef93a8837615fbc48f885cf78d" for pin in pins().values())


def test_the_files_hold_the_readmes_2860_items_with_unique_ids(mirror: Path) -> None:
    items, files = load_items()
    assert len(items) == N_ITEMS == 2860  # README: "containing 2,860 testing samples"
    assert len(files) == 20 and all(f.verified for f in files)
    assert len({item.question_id for item in items}) == N_ITEMS
    for item in items:
        assert item.key in "ABCD"[: item.n_options]
        assert all(len(p.options) == item.n_options for p in item.languages.values())


def test_the_taxonomy_is_the_readmes(mirror: Path) -> None:
    readme = upstream_source("tombench/README.md")
    abilities = _readme_sections(readme, "## Theory-of-Mind Abilities")
    found: dict[str, list[str]] = {}
    for block in abilities.split("\n### ")[1:]:
        category = re.sub(r"[^\w\- ]", "", block.splitlines()[0]).strip()
        found[category] = re.findall(r"^\d+\. \*\*(.+?):\*\*", block, re.MULTILINE)
        assert f"It includes {len(found[category])} abilities" in block
    assert found == {category: list(names) for category, names in ATOMS.items()}
    assert sum(len(names) for names in ATOMS.values()) == 31
    tasks = re.findall(r"^- \*\*(.+?):\*\*", _readme_sections(readme, "## Theory-of-Mind Tasks"), re.MULTILINE)
    assert tasks == list(TASKS.values())


def test_every_item_names_readme_abilities_and_every_ability_has_items(mirror: Path) -> None:
    items, _ = load_items()
    covered = Counter(ability for item in items for ability in item.abilities)
    assert set(covered) == set(CATEGORY_OF)
    assert set(TASKS) <= {item.task for item in items}
    second_order = [item for item in items if "Second-Order Beliefs" in item.abilities]
    assert second_order and all(len(item.abilities) == 2 for item in second_order)  # with content / location FB
    assert set(abilities_of("Desire: Desires influence on emotions (beliefs)")) == {
        "Desires Influence on Emotions and Actions"
    }
    assert abilities_of("Non-literal communication: Humor") == ("Humor",)
    with pytest.raises(ValueError, match="names no ATOMS ability"):
        abilities_of("Belief: Telepathy")


def test_the_data_quirks_are_handled_as_documented(mirror: Path) -> None:
    items, _ = load_items()
    by_id = {item.question_id: item for item in items}
    # Absent options (NaN or null in Chinese option C) give the 2-option form, counted from the raw records here.
    expected_two = 0
    for task in {item.task for item in items}:
        for record in upstream_records(task):
            value = record["选项C"]
            expected_two += value is None or (isinstance(value, float) and math.isnan(value))
    assert expected_two > 0 and sum(item.n_options == 2 for item in items) == expected_two
    # Chinese decides the form: 4 English options but 2 Chinese ones -> 2 in both languages.
    odd = by_id["strange-story-task-293"]
    assert odd.n_options == 2 and len(odd.languages["en"].options) == 2
    # The key "A. " is read as A.
    assert upstream_records("Knowledge-Attention Links")[10]["答案\nANSWER"] == "A. "
    assert by_id["knowledge-attention-links-11"].key == "A"
    # "B. " is removed wherever it stands, as run_api.py's .replace does (a leading space stays).
    assert all(
        not option.startswith(("A. ", "B. ", "C. ", "D. ")) for i in items for option in i.languages["zh"].options
    )


def test_a_broken_record_is_one_data_error() -> None:
    with pytest.raises(DataError, match="line 1 is not JSON"):
        parse_items("T", "{not json")
    line = (
        '{"能力\\nABILITY": "Belief: Location false beliefs", "故事": "s", "问题": "q", "选项A": "a", "选项B": "b",'
        ' "选项C": null, "选项D": null, "STORY": "s", "QUESTION": "q", "OPTION-A": "a", "OPTION-B": "b",'
        ' "OPTION-C": null, "OPTION-D": null, "答案\\nANSWER": "C"}'
    )
    with pytest.raises(DataError, match="answer 'C' is not one of its 2 options"):
        parse_items("T", line)


def test_quick_takes_every_stratum_round_robin(mirror: Path) -> None:
    items, _ = load_items()
    quick = select_items(items, configure("quick", {}).per_stratum)
    strata = {(item.task, item.label.strip()) for item in items}
    assert len(quick) == QUICK_PER_STRATUM * len(strata)
    assert Counter((item.task, item.label.strip()) for item in quick) == dict.fromkeys(strata, QUICK_PER_STRATUM)
    # any prefix of one item per stratum covers all of them: --limit spreads over tasks and abilities
    assert {(item.task, item.label.strip()) for item in quick[: len(strata)]} == strata
    assert {a for item in quick for a in item.abilities} == set(CATEGORY_OF)
    assert select_items(items, None) == items
    chosen = select_items(items, None, ("false-belief-task", "hinting-task-test"))
    assert {item.task for item in chosen} == {"False Belief Task", "Hinting Task Test"}
    assert len(chosen) == sum(item.task in ("False Belief Task", "Hinting Task Test") for item in items)
    demo = select_items(items, QUICK_PER_STRATUM, ("false-belief-task",))
    assert {item.label.strip() for item in demo[:4]} == {
        i.label.strip() for i in chosen if i.task == "False Belief Task"
    }
