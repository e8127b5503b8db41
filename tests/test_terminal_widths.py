"""Model names are never cut in the terminal: at 80 columns the other columns wrap between words (a header, an
interval) or, where even that leaves no room, each model's figures move under its name."""

import io
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from empathybench.atlas.analysis import leaderboards
from empathybench.atlas.data import shipped_atlas
from empathybench.atlas.views import render_leaderboards
from empathybench.formatting import fit_columns, number
from empathybench.instruments.emobench.rescore import print_rows

LONG_RUN_MODEL = "openrouter/nousresearch/hermes-3-llama-3.1-405b"  # a 47-character name, as a user's run may have


def _printed(draw: Any, width: int) -> list[str]:
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    draw(console)
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert max(cell_len(line) for line in lines) <= width  # nothing runs past the terminal's edge
    return lines


def _boards_with_a_run() -> dict[str, Any]:
    boards = leaderboards(shipped_atlas(), [], None)
    top = boards["eqbench"]["rows"][0]
    boards["eqbench"]["runs"].append(
        {
            "rank": 87,
            "among": 87,
            "model": LONG_RUN_MODEL,
            "run": "runs/today",
            "comparable": True,
            "not_comparable_because": None,
            "value": 1.38,
            "ci95": [-25.1, 43.8],
            "n": 5,
            "nearest": [{"model": top["model"], "value": top["value"]}],
            "matches": [],
        }
    )
    return boards


def test_every_model_name_of_the_atlas_is_whole_at_80_columns() -> None:
    boards = _boards_with_a_run()
    lines = _printed(lambda console: render_leaderboards(boards, console), 80)
    names = {row["model"] for board in boards.values() for row in board["rows"]} | {LONG_RUN_MODEL}
    assert len(names) > 100 and max(len(name) for name in names) >= 46
    cut = sorted(name for name in names if not any(name in line for line in lines))
    assert cut == []
    assert not any("…" in line for line in lines)


def test_a_wide_terminal_keeps_one_column_per_figure() -> None:
    """At 200 columns every row is one line: its model, figure and published figure side by side."""
    boards = leaderboards(shipped_atlas(), [], ["eqbench"])
    lines = _printed(lambda console: render_leaderboards(boards, console), 200)
    for row in boards["eqbench"]["rows"]:
        line = next(line for line in lines if f" {row['model']} " in line)
        assert number(row["value"], 2) in line and number(row["published"], 2) in line


def test_fit_columns_wraps_a_note_before_it_cuts_a_name_or_a_number() -> None:
    names = ["cognitivecomputations/dolphin-2.2.1-mistral-7b", "gpt-4-1106-preview"]

    def table() -> Table:
        drawn = Table("model", "score", "95% interval", "note")
        for name in names:
            drawn.add_row(Text(name), "86.05", "[83.75, 88.23]", "a note of several words " * 3)
        return drawn

    def fitted(console: Console) -> None:
        drawn = table()
        assert fit_columns(drawn, console, {0: names})
        console.print(drawn)

    # rich alone cuts the longest name at 80 columns; fitted, every name and number is whole
    assert not any(names[0] in line for line in _printed(lambda console: console.print(table()), 80))
    lines = _printed(fitted, 80)
    assert all(any(name in line for line in lines) for name in names)
    assert all(any("86.05" in line for line in lines) for _ in names) and not any("…" in line for line in lines)
    narrow = Console(width=40, file=io.StringIO())
    assert fit_columns(table(), narrow, {0: names}) is False  # the name alone is wider: the caller decides


def test_the_emobench_rescore_table_keeps_its_model_names_whole() -> None:
    rows = [
        {
            "task": "EU",
            "model": model,
            "language": "en",
            "cot": False,
            "accuracy": 41.25,
            "emotion_accuracy": 55.5,
            "cause_accuracy": 60.75,
            "n_files": 2,
        }
        for model in ("Qwen/Qwen2.5-72B-Instruct-long-name", "gpt-4-1106-preview")
    ]
    lines = _printed(lambda console: print_rows(rows, console), 80)
    assert all(any(row["model"] in line for line in lines) for row in rows)
    assert sum("41.25" in line for line in lines) == 2


def test_the_run_summary_title_keeps_a_long_model_name_whole() -> None:
    """The table's title wraps at the table's width, which was narrower than a 66-character name ("exten" / "ded")."""
    from empathybench.report.terminal import print_summary

    model = "openrouter/nousresearch/hermes-3-llama-3.1-405b-instruct:extended"
    summary = {"model": model, "preset": "quick", "benchmarks": {}, "usage": {}}
    lines = _printed(lambda console: print_summary(console, summary), 80)
    assert any(model in line for line in lines)


def test_the_judge_evidence_keeps_every_judge_name_whole() -> None:
    """`empathybench judges` at 80 columns: the judge names whole (rich's own layout gave "claude… menta…"), the
    figures under each name; a wide terminal keeps one column per figure."""
    from empathybench.judges.views import render_evidence

    judges = ("claude-3-7-sonnet-20250219", "gemini-2.5-flash-preview-04-17", LONG_RUN_MODEL)
    rows = [
        {
            "judge": judge,
            "source": "judge-validation",
            "against": "crowd workers (Good/Okay/Bad)",
            "aspect": "empathetic responding: every rated reply",
            "statistic": "quadratic-weighted kappa",
            "value": 0.61,
            "ci95": [0.55, 0.67],
            "n": 2000,
            "unit": "item",
        }
        for judge in judges
    ]
    document = {"headline": rows, "sources": {}, "detail": {}, "evidence": rows}
    narrow = _printed(lambda console: render_evidence(document, console), 80)
    assert not any("…" in line for line in narrow)
    assert all(any(line.strip() == judge for line in narrow) for judge in judges)
    assert sum("0.61 [0.55, 0.67]" in line for line in narrow) == 3
    wide = _printed(lambda console: render_evidence(document, console), 250)
    assert all(any(judge in line and "0.61 [0.55, 0.67]" in line for line in wide) for judge in judges)
