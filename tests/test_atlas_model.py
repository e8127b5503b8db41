"""`empathybench atlas model NAME`: one checkpoint across instruments, resolved through the identity table (a family
lists its checkpoints, an unknown name is one line with the nearest names), in the terminal, as JSON and as a page
of the atlas site."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process
from empathybench.atlas.data import shipped_atlas
from empathybench.atlas.model import model_view, page_names
from empathybench.errors import UserError


def _cli(args: list[str], tmp_path: Path, columns: int = 200) -> Any:
    env = {**os.environ, "COLUMNS": str(columns), "EMPATHYBENCH_CACHE_DIR": str(tmp_path / "cache")}
    return cli_in_process(["atlas", "model", *args], env, cwd=tmp_path)


def test_a_checkpoint_under_another_instruments_name_shows_every_instrument_and_the_simulator_effect(
    tmp_path: Path,
) -> None:
    result = _cli(["gpt-4o-0808", "--json"], tmp_path)  # SAGE's name for gpt-4o-2024-08-06
    assert result.returncode == 0, result.stderr
    view = json.loads(result.stdout)
    profile = view["model"]
    assert view["relation"] == "same checkpoint" and profile["id"] == "gpt-4o-2024-08-06"
    assert profile["family"] == "gpt-4o"
    by = {(e["instrument"], e["primary"]): e for e in profile["entries"]}
    assert set(by) == {("sage", True), ("sage", False), ("tactfultom", True), ("tactfultom", False)}
    sage = by[("sage", True)]
    # SAGE README's Sentient leaderboard publishes 31.8 for gpt-4o-0808 under the DeepSeek-V3 person
    assert sage["published"]["value"] == 31.8 and sage["settings"]["simulator"].startswith("deepseek-v3")
    assert sage["rank"] is not None and sage["among"] >= 18 and sage["files"][0]["repo"] == "Tencent/digitalhuman"
    assert by[("sage", False)]["settings"]["simulator"] == "gpt-4o-2024-08-06" and by[("sage", False)]["rank"] is None
    # the effect of the simulated person on this checkpoint: both figures and a paired difference above 0
    effect = next(e for e in profile["setting_effects"] if e["instrument"] == "sage")
    assert list(effect["settings_changed"]) == ["simulator"] and effect["n"] == 100
    assert effect["ci95"][0] > 0 and effect["published_setting_value"] == sage["value"]
    assert any(row["label"].startswith("Arena score") for row in profile["capability"])


def test_the_terminal_never_cuts_a_model_name(tmp_path: Path) -> None:
    name = "TheBloke/Nous-Hermes-2-Mixtral-8x7B-SFT-GGUF"  # 44 characters, in a 40-column terminal
    result = _cli([name], tmp_path, columns=40)
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout and name in result.stdout.replace("\n", "")
    wide = _cli(["claude-3-7-sonnet-20250219"], tmp_path).stdout
    assert "EQ-Bench 3:" in wide and "SAGE:" in wide and "judge " in wide and "file: " in wide


def test_a_family_lists_its_checkpoints_and_an_unknown_name_is_one_line(tmp_path: Path) -> None:
    family = model_view(shipped_atlas(), "gpt-4-turbo")
    assert family["relation"] == "same family" and "model" not in family
    ids = [row["id"] for row in family["checkpoints"]]
    assert "gpt-4-1106-preview" in ids and len(ids) >= 2
    text = _cli(["gpt-4-turbo"], tmp_path).stdout
    assert all(model_id in text for model_id in ids)
    # a name that is a checkpoint's and its family's (o1): the checkpoint, the family's others named where any
    both = model_view(shipped_atlas(), "o1")
    assert both["model"]["id"] == "o1-2024-12-17" and both["relation"] == "same checkpoint"
    unknown = _cli(["gtp-4o-2024-08"], tmp_path)
    assert unknown.returncode != 0 and len(unknown.stderr.strip().splitlines()) == 1
    assert "gpt-4o-2024-08-06" in unknown.stderr
    with pytest.raises(UserError, match="no model"):
        model_view(shipped_atlas(), "\x1b[31mnothing-like-it-at-all-0000")


def test_page_names_are_safe_and_distinct() -> None:
    names = page_names(["a/b", "a_b", "A_B", "x@y", "../up"])
    assert len(set(names.values())) == 5
    assert all("/" not in n and n.endswith(".html") and not n.startswith("..") for n in names.values())


def test_eqbench3_board_rows_are_labelled_by_their_board_with_the_rubric_and_the_judge_change(tmp_path: Path) -> None:
    result = _cli(["o3", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    profile = json.loads(result.stdout)["model"]
    boards = {e["settings"].get("board"): e for e in profile["entries"] if e["instrument"] == "eqbench3"}
    # eqbench.com's two boards (the extracts of e44d5e70 and 04a8066b): o3's rubric 88.0 under Sonnet 3.7, 74.7 under
    # Opus 4.6; the recomputed Elo (no board) keeps the leaderboard's metric, judged by Sonnet 3.7
    opus, sonnet = boards["eqbench.com @ 04a8066b"], boards["eqbench.com @ e44d5e70"]
    assert "judge claude-opus-4-6" in opus["metric"] and "Claude 3.7 Sonnet" not in opus["metric"]
    assert "judge claude-3-7-sonnet-20250219" in sonnet["metric"] and "Claude 3.7 Sonnet" in boards[None]["metric"]
    assert opus["figures"] == {"rubric_0_100": 74.7} and sonnet["figures"] == {"rubric_0_100": 88.0}
    (change,) = profile["board_changes"]
    assert change["settings_changed"] == {"judge": ["claude-3-7-sonnet-20250219", "claude-opus-4-6"]}
    rubric = next(f for f in change["figures"] if f["figure"] == "rubric_0_100")
    assert (rubric["first"], rubric["second"], rubric["change"]) == (88.0, 74.7, -13.3) and rubric["n"] == 46
    assert not change["judges_a_board"]
    text = _cli(["o3"], tmp_path, columns=250).stdout
    assert "on the published board eqbench.com @ 04a8066b, judge claude-opus-4-6" in text
    assert "rubric_0_100 74.70" in text and "rubric_0_100 88.00 → 74.70 (-13.30" in text
    sonnet_text = _cli(["claude-3-7-sonnet-20250219"], tmp_path, columns=250).stdout
    assert "judged by itself" in sonnet_text and "rated by itself there" in sonnet_text


def test_one_value_settings_print_plainly_and_a_long_name_says_its_length(tmp_path: Path) -> None:
    text = _cli(["gpt-4o-0808"], tmp_path, columns=250).stdout
    assert "cot False → True" in text and "[False]" not in text  # TactfulToM's setting, stored as a list
    long = _cli(["x" * 5000], tmp_path)
    assert long.returncode != 0 and "5000 characters" in long.stderr and "of 200" not in long.stderr


def test_a_name_meaning_different_checkpoints_lists_each_with_its_instrument(tmp_path: Path) -> None:
    # SAGE/README.md prints "Gemini2.5-Pro" dated 2025-03-25 (the March preview); a run's gemini-2.5-pro is the June
    # model Spiral-Bench ran: both listed, each with whose name it is
    result = _cli(["Gemini2.5-Pro", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    view = json.loads(result.stdout)
    scopes = {row["id"]: row["scope"] for row in view["checkpoints"]}
    assert scopes == {"gemini-2.5-pro-preview-03-25": ["sage"], "gemini-2.5-pro": []}
    text = _cli(["Gemini2.5-Pro"], tmp_path).stdout
    assert "gemini-2.5-pro-preview-03-25 (as sage's name)" in text and "gemini-2.5-pro (as a run's model)" in text
    # chatgpt-4o-latest: EQ-Bench 3's two updates (its map: 03-27 and 04-25), Spiral-Bench's own; a run's is a gpt-4o
    latest = model_view(shipped_atlas(), "chatgpt-4o-latest")
    ids = {row["id"] for row in latest["checkpoints"]}
    assert {"chatgpt-4o-latest-2025-03-26", "chatgpt-4o-latest-2025-04-25", "chatgpt-4o-latest@spiral"} <= ids
    assert latest["run_family"] == "gpt-4o"
    # SAGE's GPT-4o (dated 2024-08-06), EmotionBench's undated one: two checkpoints; a run's gpt-4o only the family
    gpt4o = model_view(shipped_atlas(), "GPT-4o")
    scopes = {row["id"]: row["scope"] for row in gpt4o["checkpoints"]}
    assert scopes["gpt-4o-2024-08-06"] == ["sage"] and scopes["gpt-4o@emotionbench"] == ["emotionbench"]
    assert gpt4o["run_family"] == "gpt-4o"
