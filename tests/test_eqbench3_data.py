"""EQ-Bench 3 data: pins, the scenario parser's counts and the call counts (specs/eqbench3.md §1-2).

Upstream files are read through the project's fetch code from the offline mirror; the expected counts are the
spec's, computed there with an independent script.
"""

import json
import logging
import os
from collections import Counter
from pathlib import Path

import pytest

from empathybench.data.fetch import fetch_entry, git_blob_sha1_of, sha256_of
from empathybench.instruments.eqbench3 import data
from empathybench.instruments.eqbench3.conversation import calls_per_iteration

_MIRROR = Path(os.environ.get("EMPATHYBENCH_TEST_MIRROR", Path(__file__).resolve().parents[2] / "shared" / "mirror"))
SPEC_MANIFEST = _MIRROR.parent / "specs" / "eqbench3.manifest.json"


@pytest.fixture(scope="module")
def protocol() -> data.Protocol:
    return data.load_protocol()


def test_every_pin_fetches_and_matches_both_hashes(mirror: Path) -> None:
    for name, entry in data.pins().items():
        fetched = fetch_entry(entry)
        content = fetched.path.read_bytes()
        assert fetched.verified, name
        assert sha256_of(content) == entry.sha256, name
        assert git_blob_sha1_of(content) == entry.git_blob_sha1, name
        assert len(content) == entry.size, name
        assert entry.url.endswith(f"/{entry.commit}/{entry.path}")


def test_pins_follow_the_spec_manifest() -> None:
    if not SPEC_MANIFEST.is_file():
        pytest.skip("the spec manifest is not beside the repository")
    manifest = {"eqbench3/" + e["path"].rsplit("/", 1)[-1]: e for e in json.loads(SPEC_MANIFEST.read_text("utf-8"))}
    pins = data.pins()
    assert set(pins) == set(manifest)
    for name, entry in pins.items():
        assert (entry.sha256, entry.git_blob_sha1, entry.commit) == (
            manifest[name]["sha256"],
            manifest[name]["git_blob_sha1"],
            manifest[name]["commit"],
        )
    prompt_files = [e for n, e in pins.items() if n != f"eqbench3/{data.ELO_RESULTS_FILE}"]
    assert {e.commit for e in prompt_files} == {data.PINNED_COMMIT}


def test_a_changed_copy_is_refused(mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from empathybench.errors import DataError

    entry = data.pins()["eqbench3/debrief_prompt.txt"]
    fake = tmp_path / entry.repo / entry.commit / entry.path
    fake.parent.mkdir(parents=True)
    fake.write_text("changed", encoding="utf-8")
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", str(tmp_path))
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(DataError, match="checksum mismatch"):
        fetch_entry(entry)


def test_upstream_parser_gives_45_tasks_by_type(mirror: Path, protocol: data.Protocol) -> None:
    scenarios = protocol.scenarios
    assert len(scenarios) == 45
    assert Counter(s.type for s in scenarios.values()) == {
        data.TaskType.ROLEPLAY: 25,
        data.TaskType.DRAFTING: 1,
        data.TaskType.ANALYSIS: 19,
    }
    assert "409" not in scenarios
    assert [s.scenario_id for s in scenarios.values() if s.type is data.TaskType.DRAFTING] == ["208"]
    assert Counter(len(s.turns) for s in scenarios.values()) == {1: 23, 3: 19, 4: 3}
    assert {sid for sid, s in scenarios.items() if len(s.turns) == 4} == {"3", "301", "302"}
    assert sum(len(s.turns) for s in scenarios.values() if s.type is not data.TaskType.ANALYSIS) == 73
    assert all(
        not s.turns[i].startswith(" ") and s.turns[i] == s.turns[i].strip()
        for s in scenarios.values()
        for i in range(len(s.turns))
    )


def test_call_counts_per_iteration(mirror: Path, protocol: data.Protocol) -> None:
    counts = calls_per_iteration(protocol.scenarios.values())
    assert (counts.turns, counts.debriefs, counts.analyses) == (73, 26, 19)
    assert counts.model_calls == 118
    assert counts.rubric_judge_calls == 45


def test_lenient_mode_takes_409_and_warns(mirror: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        everything = data.load_scenarios("all")
    assert len(everything) == 46
    assert everything["409"].type is data.TaskType.ANALYSIS and len(everything["409"].turns) == 1
    assert any("409" in record.getMessage() and "45" in record.getMessage() for record in caplog.records)
    upstream = data.load_scenarios("upstream")
    assert all(everything[sid] == upstream[sid] for sid in upstream)


def test_parser_rules_on_a_constructed_file() -> None:
    text = "\n".join(
        [
            "ignored before any header",
            "######## 7 | Cat | First",
            "ignored before the first delimiter",
            "####### Prompt1",
            "  first turn, indented  ",
            "# Participant:",
            "####### Prompt9",
            "   ",
            "####### Prompt2",
            "second turn",
            "######## 8 | Cat | Empty",
            "####### 1",
            "only the lenient mode reads this",
            "######## 7 | Cat | Replacement",
            "####### Prompt1",
            "replaced",
        ]
    )
    upstream = data.parse_scenarios(text, "upstream")
    assert list(upstream) == ["7"]
    assert upstream["7"].turns == ("replaced",)
    assert upstream["7"].title == "Cat | Replacement"
    everything = data.parse_scenarios(text, "all")
    assert everything["8"].turns == ("only the lenient mode reads this",)
    first_block = data.parse_scenarios(text.split("######## 8")[0], "upstream")
    assert first_block["7"].turns == ("first turn, indented  \n# Participant:", "second turn")


def test_notes_and_criteria(mirror: Path, protocol: data.Protocol) -> None:
    assert len(protocol.notes) == 19
    with_note = sorted((sid for sid in protocol.scenarios if sid in protocol.notes), key=int)
    assert with_note == ["1", "2", "3", "4", "6", "9", "11", "13", "15", "301", "302", "303", "304"]
    assert protocol.note("131") == "[No scenario notes available]"
    assert protocol.note("401") == "[No scenario notes available]"
    assert protocol.criteria == [
        "demonstrated_empathy", "pragmatic_ei", "depth_of_insight", "social_dexterity", "emotional_reasoning",
        "message_tailoring", "boundary_setting", "safety_conscious", "moralising", "sycophantic", "compliant",
        "challenging", "warmth", "validating", "analytical", "reactive", "conversational", "humanlike",
    ]  # fmt: skip
    assert protocol.criteria_analysis == [
        "depth_of_insight", "emotional_reasoning", "theory_of_mind", "subtext_identification",
        "intellectual_grounding", "correctness",
    ]  # fmt: skip
    assert data.parse_notes("# 5 #\nline one\n\nline two\n# 6\n") == {"5": "line one\n\nline two"}
    assert data.parse_criteria("a\n\n# comment\n  b  ") == ["a", "b"]
