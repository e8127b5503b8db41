"""EmoBench data: the instrument's own pins, fetched and verified by the project's fetch code (specs/emobench.md §1)."""

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from conftest import MIRROR
from empathybench.data.fetch import fetch_entry, git_blob_sha1_of, sha256_of
from empathybench.errors import DataError
from empathybench.instruments.emobench.data import (
    EU_CATEGORY_QIDS,
    EU_ITEMS_KEY,
    N_PAPER_ORDERS,
    fetch_pinned,
    load_ea_items,
    load_eu_items,
    load_paper_order,
    parse_eu_items,
    pins,
)

SPEC_MANIFEST = MIRROR.parent / "specs" / "emobench.manifest.json"


def test_pins_are_the_spec_manifest() -> None:
    entries = pins()
    assert all(e.sha256 and e.git_blob_sha1 and e.repo == "Sahandfer/EmoBench" for e in entries.values())
    if not SPEC_MANIFEST.is_file():
        pytest.skip("specs/emobench.manifest.json is not beside the repository")
    manifest = json.loads(SPEC_MANIFEST.read_text("utf-8"))
    assert {(m["commit"], m["path"], m["sha256"], m["git_blob_sha1"], m["bytes"]) for m in manifest} == {
        (e.commit, e.path, e.sha256, e.git_blob_sha1, e.size) for e in entries.values()
    }
    urls = {m["url"] for m in manifest}
    assert {e.url for e in entries.values()} == urls


def test_every_pin_fetches_and_verifies_against_both_hashes(mirror: Path) -> None:
    for entry in pins().values():
        fetched = fetch_entry(entry)
        data = fetched.path.read_bytes()
        assert fetched.verified and sha256_of(data) == entry.sha256 and git_blob_sha1_of(data) == entry.git_blob_sha1


def test_a_tampered_mirror_copy_is_refused(mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = pins()[EU_ITEMS_KEY]
    copy = tmp_path / entry.repo / entry.commit / entry.path
    copy.parent.mkdir(parents=True)
    shutil.copy(mirror / entry.repo / entry.commit / entry.path, copy)
    copy.write_bytes(copy.read_bytes() + b"\n")
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", str(tmp_path))
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(DataError, match=r"checksum mismatch for emobench/2025/data/EU\.jsonl"):
        fetch_entry(entry)
    assert not fetch_entry(entry, allow_unverified=True).verified
    with pytest.raises(DataError, match="unknown data file 'emobench/nosuch'"):
        fetch_pinned("empathybench.instruments.emobench", "emobench/nosuch")


def test_items_parse_into_records_with_the_spec_counts(mirror: Path) -> None:
    eu, ea = load_eu_items(), load_ea_items()
    for items in (eu, ea):
        assert Counter(i.language for i in items) == {"en": 200, "zh": 200}
        for language in ("en", "zh"):
            assert [i.qid for i in items if i.language == language] == [str(n) for n in range(1, 201)]
    en_eu = [i for i in eu if i.language == "en"]
    assert Counter(i.coarse_category for i in en_eu) == {
        "complex_emotions": 49,
        "personal_beliefs_and_experiences": 56,
        "emotional_cues": 28,
        "perspective_taking": 67,
    }
    for item in eu:  # the qid blocks rescoring relies on
        first, last = EU_CATEGORY_QIDS[item.coarse_category]
        assert first <= int(item.qid) <= last
        assert len(item.emotion_choices) == 6
        assert item.emotion_choices[item.emotion_label_index] == item.emotion_label
    cause_counts = Counter(len(i.cause_choices) for i in eu if i.language == "zh")
    assert cause_counts == {4: 139, 6: 60, 7: 1}  # zh qid 74 has 7 (spec §8.1)
    assert Counter(len(i.cause_choices) for i in en_eu) == {4: 140, 6: 60}
    assert Counter(i.category for i in ea if i.language == "en") == {
        "Personal-Others": 50,
        "Social-Others": 50,
        "Personal-Self": 50,
        "Social-Self": 50,
    }
    assert {i.question_type for i in ea} == {"Action", "Response"}
    assert all(len(i.choices) == 4 and i.choices[i.label_index] == i.label for i in ea)


def test_paper_orders_load_with_their_own_labels(mirror: Path) -> None:
    current = {i.qid: i for i in load_eu_items() if i.language == "en"}
    original = load_paper_order("EU", 0, "en")
    assert len(original) == 200
    # the original order equals today's items (spec §1)
    assert all(o.choices == current[o.qid].emotion_choices for o in original)
    assert all(o.cause_choices == current[o.qid].cause_choices for o in original)
    for order in range(1, N_PAPER_ORDERS):
        permuted = load_paper_order("EU", order, "en")
        for o in permuted:
            item = current[o.qid]
            assert sorted(o.choices) == sorted(item.emotion_choices)
            assert o.choices[o.label_index] == item.emotion_label
            assert o.cause_choices[o.cause_label_index] == item.cause_label
    zh = {o.qid: o for o in load_paper_order("EU", 1, "zh")}
    assert (len(zh["73"].cause_choices), len(zh["74"].cause_choices)) == (4, 6)  # silently trimmed (spec §8.1)
    ea_zh = load_paper_order("EA", 2, "zh")
    assert {o.question_word for o in ea_zh} == {"行动", "回复"}  # paper-era zh question words (spec §8.4)


def test_broken_item_file_is_a_clear_error() -> None:
    with pytest.raises(DataError, match="line 1 is not JSON"):
        parse_eu_items("{not json")
    with pytest.raises(DataError, match="lacks field"):
        parse_eu_items('{"qid": "1"}')
