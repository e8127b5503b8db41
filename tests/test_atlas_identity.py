"""The model identity table held against every upstream's own name map, and the rules it follows where none exists:
one checkpoint one id, two checkpoints two ids, and the source that decided written on the alias."""

import pytest

from empathybench.atlas.data import shipped_atlas
from empathybench.data.parsed import assigned_literal, string_map
from empathybench.errors import DataError
from empathybench.instruments.registry import all_benchmarks
from empathybench.models.identity import gguf_base_name, identity_table, name_map_disagreements, parse_table

MAPS = sorted(name for name, b in all_benchmarks().items() if b.atlas is not None and b.atlas.name_map is not None)


def _name_map(instrument: str) -> dict[str, str]:
    source = all_benchmarks()[instrument].atlas
    assert source is not None and source.name_map is not None
    try:
        return dict(source.name_map())
    except DataError as exc:  # the pinned file is read through the fetch code; a mirror without it cannot check
        if "not found in the mirror" in str(exc):
            pytest.skip(f"{instrument}'s name map is not in the mirror: {exc}")
        raise


def test_the_upstreams_with_a_name_map_are_eqbench3_and_spiral() -> None:
    assert MAPS == ["eqbench3", "spiral"]


@pytest.mark.parametrize("instrument", MAPS)
def test_the_table_agrees_with_each_upstreams_own_name_map(mirror, instrument: str) -> None:
    name_map = _name_map(instrument)
    # EQ-bench/eqbench3@f1688609 utils/constants.py lines 73-102: 28 pairs; the Spiral-Bench notebook's: 2
    assert len(name_map) == {"eqbench3": 28, "spiral": 2}[instrument]
    assert name_map_disagreements(identity_table(), instrument, name_map) == []


def test_eqbench3s_map_splits_and_joins_the_checkpoints_it_names(mirror) -> None:
    name_map = _name_map("eqbench3")
    table = identity_table()

    def resolved(name: str) -> str | None:
        match = table.match(name, instrument="eqbench3")
        return None if match is None else match.id

    # the examples of specs/atlas-current.md §1, as upstream's map states them
    assert name_map["chatgpt-4o-latest"] == "chatgpt-4o-latest-2025-04-25"
    assert name_map["openai/chatgpt-4o-latest"] == "chatgpt-4o-latest-2025-03-27"
    assert resolved("chatgpt-4o-latest") != resolved("openai/chatgpt-4o-latest")  # two checkpoints, two ids
    assert resolved("deepseek/deepseek-r1") == table.match("deepseek-ai/DeepSeek-R1").id  # the January weights
    assert resolved("deepseek/deepseek-r1") != table.match("deepseek-ai/DeepSeek-R1-0528").id
    assert resolved("anthropic/claude-3.5-sonnet") == table.match("claude-3-5-sonnet-20241022").id
    # SAGE's GPT-4o-Latest (dated 2025-03-26) is the same March 2025 update: decided by the provider's history
    sage = table.match("GPT-4o-Latest", instrument="sage")
    assert sage is not None and sage.id == resolved("openai/chatgpt-4o-latest")
    assert sage.alias is not None and sage.alias.decided_by and "alias history" in sage.alias.decided_by


def test_a_disagreeing_table_is_named_pair_by_pair() -> None:
    source = {"name": "x", "source": "test"}
    table = parse_table(
        {
            "families": {"f": "F"},
            "models": [
                {"id": "a", "family": "f", "aliases": [{**source, "name": "run-a"}, {**source, "name": "board-a"}]},
                {"id": "b", "family": "f", "aliases": [{**source, "name": "run-b"}, {**source, "name": "board-b"}]},
            ],
        }
    )
    assert name_map_disagreements(table, "x", {"run-a": "board-a", "run-b": "board-b"}) == []
    problems = name_map_disagreements(table, "x", {"run-a": "board-b", "run-c": "board-a", "run-b": "board-a-2"})
    assert len(problems) == 3 and any("run-a" in p and "is a" in p for p in problems)
    joined = parse_table(
        {
            "families": {"f": "F"},
            "models": [{"id": "a", "family": "f", "aliases": [{**source, "name": n} for n in ("r1", "r2", "t1")]}],
        }
    )
    (merged,) = name_map_disagreements(joined, "x", {"r1": "t1", "r2": "r1"})
    assert "distinct" in merged  # two targets upstream keeps apart are two checkpoints


def test_a_name_map_is_read_never_run() -> None:
    source = "import os\nMODEL_NAME_SUBS = {'a': 'b', 'c': 'd'}\nOTHER = 1\n"
    assert string_map(assigned_literal(source, "MODEL_NAME_SUBS")) == {"a": "b", "c": "d"}
    hostile = "MODEL_NAME_SUBS = {'a': __import__('os').system('exit 3')}\n"
    assert assigned_literal(hostile, "MODEL_NAME_SUBS") is None  # not a literal: nothing evaluated
    assert assigned_literal("%pip install x\nMODEL_NAME_SUBS = {}", "MODEL_NAME_SUBS") is None  # a notebook magic
    assert string_map(["not", "a", "map"]) == {} and string_map({"a": 1, "b": "c"}) == {"b": "c"}


def test_moving_names_are_decided_by_the_runs_date_and_say_so() -> None:
    entries = {(e["instrument"], e["model"]): e for e in shipped_atlas()["entries"]}
    # EQ-Bench v2's undated gpt-3.5-turbo ran on 2024-01-14 (run_completed 1705250057), when the alias served 0613:
    # its 69.51 sits beside the dated 0613 run's 69.35 (the released files' benchmark_score)
    undated = entries[("eqbench", "gpt-3.5-turbo")]
    dated = entries[("eqbench", "gpt-3.5-turbo-0613")]
    assert undated["model_id"] == dated["model_id"] == "gpt-3.5-turbo-0613"
    assert "2024-01-14" in undated["identity"]["decided_by"] and dated["identity"]["decided_by"] is None
    assert entries[("eqbench", "gpt-3.5-turbo-16k")]["model_id"] == "gpt-3.5-turbo-16k-0613"
    # EmoBench's gpt-4 (released 2024) is gpt-4-0613; EmotionBench's (before 2023-08-08, on either side of the
    # 2023-06-27 switch) cannot be told: an id of its own, saying why
    assert entries[("emobench", "gpt-4")]["model_id"] == "gpt-4-0613"
    emotionbench = entries[("emotionbench", "gpt-4")]
    assert emotionbench["model_id"] == "gpt-4@emotionbench" and "undecided" in emotionbench["identity"]["decided_by"]
    assert entries[("emotionbench", "gpt-3.5-turbo")]["model_id"] != "gpt-3.5-turbo-0613"
    # Spiral-Bench's claude-3.5-sonnet ran anthropic/claude-3.5-sonnet: the checkpoint EQ-Bench 3's map names
    assert entries[("spiral", "claude-3.5-sonnet")]["model_id"] == "claude-3-5-sonnet-20241022"
    assert entries[("eqbench3", "anthropic/claude-3.5-sonnet")]["model_id"] == "claude-3-5-sonnet-20241022"


def test_every_entrys_identity_is_the_tables_match() -> None:
    table = identity_table()
    for entry in shipped_atlas()["entries"]:
        match = table.match(entry["model"], instrument=entry["instrument"])
        assert match is not None and match.alias is not None, entry["model"]
        assert entry["identity"] == {
            "alias": match.alias.name,
            "source": match.alias.source,
            "decided_by": match.alias.decided_by,
        }


def test_the_reproduction_check_shows_which_source_decided_the_match() -> None:
    from rich.console import Console

    from empathybench.atlas.views import render_reproduction

    entry = next(e for e in shipped_atlas()["entries"] if (e["instrument"], e["model"]) == ("eqbench", "gpt-3.5-turbo"))
    matched = {"model": entry["model"], "model_id": entry["model_id"], "status": entry["status"]}
    matched |= {"decided_by": None, "published_identity": entry["identity"]}
    result = {"matched": matched, "published_value": 69.51, "recomputed_value": entry["value"], "run_value": 69.0}
    result |= {"comparison": None, "settings": {"differs": {}, "not_recorded_by_the_run": {}}}
    result |= {"margin": {"value": 1.0, "source": "a margin"}}
    console = Console(record=True, width=400)
    render_reproduction(
        {"model": "m", "run": "r", "instruments": {"eqbench": {**result, "not_comparable_because": None}}}, console
    )
    text = console.export_text()
    assert "the same checkpoint (gpt-3.5-turbo-0613): the run's date (run_completed 2024-01-14" in text


def test_a_gguf_file_name_is_its_weights_and_its_quantisation_is_a_setting() -> None:
    table = identity_table()
    for spec in (
        "llamacpp/models/llama-2-70b-chat.Q4_K_M.gguf",
        "llamacpp//srv/w/llama-2-70b-chat-q8_0.gguf",
        "llama-2-70b-chat.Q5_K_S-00001-of-00002.gguf",
    ):
        found = table.match(spec)
        assert found is not None and found.id == "llama-2-70b-chat", spec
    assert gguf_base_name("models/mistral-7b-instruct-v0.2.Q8_0.gguf") == "mistral-7b-instruct-v0.2"
    assert table.match("mistral-7b-instruct-v0.2.Q8_0.gguf").id == "mistral-7b-instruct-v0.2"
    assert gguf_base_name("TheBloke/Llama-2-70B-Chat-GGUF") is None  # a repository, not a file
    assert table.match("llamacpp/models/no-such-model.Q4_K_M.gguf") is None


def test_an_undated_moving_name_is_a_family_for_a_run_and_its_instruments_checkpoint_with_who_decided() -> None:
    table = identity_table()
    # SAGE/README.md's date column decides its undated names; a run's same name is only the family
    for name, instrument, checkpoint, date in (
        ("GPT-4o", "sage", "gpt-4o-2024-08-06", "2024-08-06"),
        ("DeepSeek-V3", "sage", "deepseek-v3-2024-12-26", "2024-12-27"),
        ("DeepSeek-R1", "sage", "deepseek-r1-2025-01-20", "2025-01-21"),
    ):
        scoped = table.match(name, instrument=instrument)
        assert scoped is not None and scoped.id == checkpoint and scoped.alias is not None
        assert scoped.alias.decided_by is not None and date in scoped.alias.decided_by
        run = table.match(f"openai/{name.lower()}")
        assert run is not None and run.relation == "same family" and run.id is None, name
    # an OpenRouter name that moved (04-17 -> 05-20) is EQ-Bench 3's checkpoint there, a family in a run
    assert (
        table.match("google/gemini-2.5-flash-preview", instrument="eqbench3").id == "gemini-2.5-flash-preview@eqbench3"
    )
    assert table.match("google/gemini-2.5-flash-preview").id is None
    for undated in ("chatgpt-4o-latest", "gpt-3.5-turbo", "claude-3-5-sonnet", "deepseek-chat"):
        found = table.match(undated)
        assert found is None or found.id is None, undated
    # the dated names and the weights' own repositories still name one checkpoint
    assert table.match("deepseek-ai/DeepSeek-V3").id == "deepseek-v3-2024-12-26"
    assert table.match("openai/gpt-4o-2024-08-06").id == "gpt-4o-2024-08-06"
    assert table.match("anthropic/claude-3-5-sonnet-20241022").id == "claude-3-5-sonnet-20241022"


def test_every_alias_cites_an_upstream_never_the_projects_specs() -> None:
    for model in identity_table().models.values():
        for alias in model.aliases:
            assert "specs/" not in alias.source and "specs/" not in (alias.decided_by or ""), alias.name
