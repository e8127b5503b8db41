"""`empathybench atlas` (leaderboards with runs placed among them, setting effects) and `empathybench atlas
agreement`: over a real run against the fake OpenAI server, and against hostile atlas files."""

import csv
import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process
from empathybench.atlas.analysis import MIN_MODELS_FOR_VERDICT, agreement, rank_agreement, setting_effects
from empathybench.atlas.data import shipped_atlas
from empathybench.testing.fake_openai import FakeOpenAIServer


@pytest.fixture(scope="module")
def eqbench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A 12-item EQ-Bench run of a model the atlas knows, against the fake server (every rating answered 5)."""
    root = tmp_path_factory.mktemp("atlas-run")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(root / "cache"), OPENAI_API_KEY="sk-test", COLUMNS="200")
    with FakeOpenAIServer() as server:
        args = ["run", "-m", "openai/Qwen/Qwen-72B-Chat", "--base-url", server.base_url, "-b", "eqbench", "-n", "12"]
        result = cli_in_process([*args, "-o", "run", "--quiet", "--no-cache"], env, cwd=root)
        assert result.returncode == 0, result.stderr
        assert server.requests_total >= 12
    return root / "run", env


def test_a_run_is_placed_among_the_published_models(eqbench_run: tuple[Path, dict[str, str]]) -> None:
    run, env = eqbench_run
    result = cli_in_process(["atlas", "--run", str(run), "--bench", "eqbench", "--json"], env, cwd=run.parent)
    assert result.returncode == 0, result.stderr
    boards = json.loads(result.stdout)
    assert list(boards) == ["eqbench"]
    board = boards["eqbench"]
    assert len(board["rows"]) == 86 and [r["rank"] for r in board["rows"]] == list(range(1, 87))
    (placed,) = board["runs"]
    summary = json.loads((run / "summary.json").read_text())
    assert placed["value"] == summary["benchmarks"]["eqbench"]["metrics"]["score"]["value"]
    values = [r["value"] for r in board["rows"]]
    assert placed["rank"] == 1 + sum(v > placed["value"] for v in values) and placed["among"] == 87
    distances = sorted(abs(v - placed["value"]) for v in values)
    assert [abs(n["value"] - placed["value"]) for n in placed["nearest"]] == distances[:3]
    # its model is an atlas model: the same checkpoint, under the name the leaderboard published
    assert placed["matches"] == [
        {
            "model": "Qwen/Qwen-72B-Chat",
            "model_id": "qwen/qwen-72b-chat",
            "relation": "same checkpoint",
            "value": 80.7,
            "status": "recomputed",
        }
    ]
    assert placed["comparable"] is True

    text = cli_in_process(["atlas", "--run", str(run), "-b", "eqbench"], env, cwd=run.parent)
    assert text.returncode == 0, text.stderr
    assert "▶ your run: openai/Qwen/Qwen-72B-Chat" in text.stdout
    assert f"your run ranks {placed['rank']} of 87" in text.stdout


def test_the_sage_simulator_effect_is_in_the_atlas_output(eqbench_run: tuple[Path, dict[str, str]]) -> None:
    _, env = eqbench_run
    result = cli_in_process(["atlas", "-b", "sage", "--json"], env)
    assert result.returncode == 0, result.stderr
    effects = json.loads(result.stdout)["sage"]["setting_effects"]
    assert len(effects) == 7  # 5 models under GPT-4o as the person, o1 also under Gemini
    deepseek = next(e for e in effects if e["model"] == "deepseek-v3-1227")
    assert deepseek["settings_changed"] == {"simulator": ["deepseek-v3-2024-12-26", "gpt-4o-2024-08-06"]}
    assert deepseek["n"] == 100 and deepseek["ci95"][0] > 0  # the person alone moves the score
    assert abs(deepseek["difference"] - (deepseek["other_setting_value"] - deepseek["published_setting_value"])) < 0.1
    text = cli_in_process(["atlas", "-b", "sage"], env)
    # the recomputed means (37.55: the README's 37.6 is its rounding), to two decimals
    assert "simulator deepseek-v3-2024-12-26 → gpt-4o-2024-08-06: 37.55 → 65.60" in text.stdout


def test_the_judge_effect_on_eqbench3_is_in_the_atlas_output(eqbench_run: tuple[Path, dict[str, str]]) -> None:
    _, env = eqbench_run
    result = cli_in_process(["atlas", "-b", "eqbench3", "--json"], env)
    assert result.returncode == 0, result.stderr
    board = json.loads(result.stdout)["eqbench3"]
    assert [(b["board"], b["n"]) for b in board["boards"]] == [
        ("eqbench.com @ e44d5e70", 46),
        ("eqbench.com @ 04a8066b", 79),
    ]
    assert len(board["rows"]) == 27 and board["other_settings"] == []  # the boards are not ranked with the Elos
    (effect,) = board["board_effects"]
    rubric = next(f for f in effect["figures"] if f["figure"] == "rubric_0_100")
    assert effect["n"] == 46 and rubric["difference"] == -22.05  # specs/atlas-current.md §2
    assert effect["without_judges"]["n"] == 45  # without claude-3-7-sonnet, judged by itself on its board
    # the reproduction check's margin, as the atlas holds it: 1.5 rubric points (eqbench.com about.html's sd 0.75)
    assert board["reproduction_margin"]["value"] == 1.5
    text = cli_in_process(["atlas", "-b", "eqbench3"], {**env, "COLUMNS": "250"})
    assert "judge claude-3-7-sonnet-20250219 → claude-opus-4-6" in text.stdout
    assert "rubric_0_100: mean 75.0 → 53.0, change -22.05" in text.stdout


def test_setting_effects_need_the_same_checkpoint_and_shared_items() -> None:
    effects = setting_effects(shipped_atlas())
    assert {e["instrument"] for e in effects} == {"sage", "tactfultom"}  # another simulator; CoT
    assert all(len(e["settings_changed"]) == 1 for e in effects)


def test_agreement_gives_rho_with_n_and_interval_and_no_verdict_below_five(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200"}
    result = cli_in_process(["atlas", "agreement", "--json", "--csv", "matrix.csv"], env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert len(report["pairs"]) == 21  # 7 instruments with an atlas
    for row in report["pairs"] + report["capability"]:
        assert row["n"] == len(row["models"])
        if row["n"] < MIN_MODELS_FOR_VERDICT:
            assert row["verdict"] is None
        if row["rho"] is not None:
            assert -1 <= row["rho"] <= 1 and row["ci95"] is not None and row["n"] >= MIN_MODELS_FOR_VERDICT
    # EmotionBench's shift has no direction (higher_is_better None): no rho with it, and the reason given
    emotionbench = [p for p in report["pairs"] + report["capability"] if "emotionbench" in p.get("instruments", [])]
    emotionbench += [r for r in report["capability"] if r["instrument"] == "emotionbench"]
    assert len(emotionbench) == 7 and all(p["rho"] is None and "no direction" in p["left_out"] for p in emotionbench)
    pair = next(p for p in report["pairs"] if p["instruments"] == ["eqbench3", "sage"])
    # 11 shared checkpoints: the 9 of before, and deepseek-r1 and chatgpt-4o-latest of March 2025, which EQ-Bench 3's
    # own MODEL_NAME_SUBS names (EQ-bench/eqbench3@f1688609 utils/constants.py) and SAGE's README dates
    assert pair["n"] == 11 and pair["verdict"] in ("agree", "disagree", "inconclusive")
    tactful = next(p for p in report["pairs"] if p["instruments"] == ["sage", "tactfultom"])
    assert tactful["n"] == 5 and tactful["verdict"] == "inconclusive"  # every released TactfulToM model in the atlas
    few = next(p for p in report["pairs"] if p["instruments"] == ["emotionbench", "tactfultom"])
    assert (few["n"], few["rho"], few["verdict"]) == (0, None, None)  # EmotionBench has no direction: left out
    arena = next(r for r in report["capability"] if r["instrument"] == "sage")
    assert arena["n"] == 18 and arena["verdict"] == "agree"  # the README's own Sentient and Arena columns
    rows = list(csv.reader((tmp_path / "matrix.csv").open()))
    assert rows[0][:4] == ["first", "second", "n", "rho"] and len(rows) == 1 + 21 + len(report["capability"])
    family = agreement(shipped_atlas(), family=True)
    wider = next(p for p in family["pairs"] if p["instruments"] == ["eqbench3", "sage"])
    assert wider["n"] == 12  # the same family where not the same checkpoint (specs/atlas.md: 12 models)
    text = cli_in_process(["atlas", "agreement"], env, cwd=tmp_path)
    assert "n < 5: no verdict" in text.stdout


def test_rank_agreement_follows_scipy_and_is_exactly_one_for_the_same_order() -> None:
    first = {f"m{i}": float(i) for i in range(8)}
    same = rank_agreement(first, {k: 10 * v + 3 for k, v in first.items()})
    assert same["rho"] == 1.0 and same["verdict"] == "agree" and same["n"] == 8
    reversed_ = rank_agreement(first, {k: -v for k, v in first.items()})
    assert reversed_["rho"] == -1.0 and reversed_["verdict"] == "disagree"
    few = rank_agreement({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 1.0, "b": 3.0, "c": 2.0})
    assert few["n"] == 3 and few["verdict"] is None and few["rho"] is None and few["ci95"] is None  # no rho at n < 5


def _hostile_atlas(tmp_path: Path) -> Path:
    document: dict[str, Any] = json.loads(json.dumps(shipped_atlas()))
    document["entries"][0]["model"] = "\x1b[31mevil\x07 [bold]markup[/bold]"
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(document))
    return path


def test_hostile_atlas_text_is_printed_literally_without_control_characters(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "250"}
    result = cli_in_process(["atlas", "--atlas", str(_hostile_atlas(tmp_path)), "-b", "eqbench"], env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "?[31mevil? [bold]markup[/bold]" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["atlas", "--atlas", "missing.json"], "no such file"),
        (["atlas", "-b", "nope"], "the atlas has no instrument 'nope'"),
        (["atlas", "--run", "no-such-run"], "no such run directory"),
        (["atlas", "agreement", "--atlas", "missing.json"], "no such file"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = cli_in_process(args, {**os.environ, "COLUMNS": "200"}, cwd=tmp_path)
    assert result.returncode != 0 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_run_with_another_simulator_is_placed_apart(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200", "EMPATHYBENCH_CACHE_DIR": str(tmp_path / "cache")}
    args = ["run", "-m", "scripted/plausible", "--simulator", "scripted/plausible", "-b", "sage", "-n", "3"]
    run = cli_in_process([*args, "-o", "run", "-q"], env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    result = cli_in_process(["atlas", "--run", "run", "-b", "sage", "--json"], env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (placed,) = json.loads(result.stdout)["sage"]["runs"]
    assert placed["comparable"] is False and "not comparable" in placed["not_comparable_because"]
    assert placed["among"] == 1 + 18  # 12 recomputed + 6 published-only with the published simulator
    text = cli_in_process(["atlas", "--run", "run", "-b", "sage"], env, cwd=tmp_path)
    assert "; not comparable: " in text.stdout


def test_runs_under_other_settings_are_listed_once_each(tmp_path: Path) -> None:
    """EmoBench's other task and language have no paired effect (other questions): each is a line of its own; SAGE's
    other simulated person is its paired effect, not listed twice."""
    env = {**os.environ, "COLUMNS": "200"}
    emobench = cli_in_process(["atlas", "-b", "emobench"], env, cwd=tmp_path)
    assert emobench.returncode == 0, emobench.stderr
    lines = emobench.stdout.splitlines()
    assert "  36 released run(s) under other settings, not ranked:" in lines
    assert sum(" over 200" in line and ("(language zh" in line or "(task EA" in line) for line in lines) == 36
    assert any(line.startswith("  gpt-4 (language zh, task EA): 73.75 [") for line in lines)  # specs/emobench.md 6.2
    sage = cli_in_process(["atlas", "-b", "sage"], env, cwd=tmp_path).stdout.splitlines()
    assert sum("paired difference" in line for line in sage) == 7
    assert not any(" over 100" in line and "paired" not in line for line in sage)
