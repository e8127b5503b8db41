"""The reproduction check and the placement say why where they cannot do more: an interval wider than 2m cannot be
`consistent` (EQ-Bench 3's 45 scenarios against m = 1.5), a figure without a direction (EmotionBench) is not ranked,
a run's report names why it has no check (no board of its judge), board metadata is no setting, and a TactfulToM run
over the revised questions names the dataset as differing from the published legacy one."""

from pathlib import Path
from typing import Any

from empathybench.atlas.analysis import leaderboards
from empathybench.atlas.data import shipped_atlas
from empathybench.atlas.place import place_run
from empathybench.atlas.reproduce import check_run as check
from empathybench.atlas.reproduce import comparison_text, standing_texts
from empathybench.rundir.reader import RunData

SONNET = "anthropic/claude-3-7-sonnet-20250219"
O3_ON_SONNET_BOARD = 88.0  # o3's rubric score on the Sonnet-judged board (eqbench.com @ e44d5e70)
TOO_WIDE = "the run's interval alone is wider than ±m: no verdict of equivalence possible with this many items"


def _summary(instrument: str, metric: str, value: float, half: float, model: str, **entry: Any) -> dict[str, Any]:
    figure = {"value": value, "ci95": [value - half, value + half], "n": 45}
    return {"model": model, "benchmarks": {instrument: {"metrics": {metric: figure}, **entry}}}


def _eqbench3(half: float, judge: str = SONNET) -> RunData:
    summary = _summary("eqbench3", "score", O3_ON_SONNET_BOARD, half, "openai/o3", judge_model=judge)
    return RunData(Path("runs/x"), summary, {"judge": {"spec": judge}})


def test_a_run_equal_to_the_published_figure_with_a_wide_interval_is_inconclusive_and_says_why() -> None:
    wide = check(shipped_atlas(), _eqbench3(half=2.5))["instruments"]["eqbench3"]
    assert wide["published_value"] == O3_ON_SONNET_BOARD and wide["comparison"]["difference"] == 0
    assert wide["verdict"] == "inconclusive"
    assert comparison_text(wide["comparison"], wide["margin"]).endswith(f"inconclusive; {TOO_WIDE}")
    narrow = check(shipped_atlas(), _eqbench3(half=1.0))["instruments"]["eqbench3"]
    assert narrow["verdict"] == "consistent" and narrow["comparison"]["notes"] == []
    # where the figure was published (the board, its source, date, the judge's words) is no setting of a run
    assert not any(key.startswith("board") for key in narrow["settings"]["not_recorded_by_the_run"])
    assert narrow["settings"]["differs"] == {}  # the same judge


def test_the_report_names_why_a_run_has_no_check() -> None:
    run = _eqbench3(half=1.0, judge="openai/gpt-4.1-2025-04-14")
    (row,) = standing_texts(run.summary, run.run_info)
    assert row["reproduction"].startswith("no published board was rated by this run's judge")
    assert "no published run of this model" not in row["reproduction"]  # o3 is on both boards


def test_a_figure_without_a_direction_is_not_ranked() -> None:
    atlas = shipped_atlas()
    assert atlas["instruments"]["emotionbench"]["higher_is_better"] is None
    run = RunData(Path("runs/x"), _summary("emotionbench", "NA_delta", 4.0, 1.0, "openai/gpt-4o"), {})
    (placed,) = place_run(atlas, run)
    assert placed["rank"] is None and placed["among"] is None
    published = [e for e in atlas["entries"] if e["instrument"] == "emotionbench" and e["primary"]]
    closest = min(abs(e["value"] - 4.0) for e in published if e["value"] is not None)
    assert len(placed["nearest"]) == 3 and abs(placed["nearest"][0]["value"] - 4.0) == closest
    (row,) = standing_texts(run.summary, run.run_info)
    assert row["rank"].startswith("no direction: not ranked") and " of " not in row["rank"]
    boards = leaderboards(atlas, [], ["emotionbench", "eqbench"])
    assert {r["rank"] for r in boards["emotionbench"]["rows"]} == {None}
    assert [r["rank"] for r in boards["eqbench"]["rows"]][:3] == [1, 2, 3]  # a direction: ranked as before


def test_a_tactfultom_run_over_the_revised_questions_names_the_dataset_and_says_the_items_differ() -> None:
    dataset = "final: nii-cl/tactful-tom@0881b0d8 dataset/final_set/ (100 conversations, 4,154 questions)"
    config = {"cot": [False], "temperature": 0.2, "max_tokens": 8192, "dataset": dataset}
    summary = _summary("tactfultom", "overall_macro", 62.3, 3.0, "openai/gpt-4o-2024-08-06", config=config)
    summary["benchmarks"]["tactfultom"]["metrics"]["overall_macro"]["items"] = {"q-1": 0.01, "q-2": 0.02}
    result = check(shipped_atlas(), RunData(Path("runs/x"), summary, {}))["instruments"]["tactfultom"]
    assert result["settings"]["differs"]["dataset"]["run"] == dataset
    assert "3,544" in result["settings"]["differs"]["dataset"]["published"]
    assert "dataset" not in result["settings"]["not_recorded_by_the_run"]
    text = comparison_text(result["comparison"], result["margin"])
    assert "the published run's items are other questions than the run's (0 shared)" in text
    assert result["comparison"]["method"].startswith("the published run's items are not the run's")
