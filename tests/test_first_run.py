"""Issue 11 items 14-16: the bare run is a short demo with a readable 80-column table and an ETA in plain
progress lines; invalid / insufficient / self-judged results are labelled everywhere a number is shown; comparisons
say what weakens them, never print `p = None` or a library warning, keep run labels apart and say where they wrote."""

import io
import json
import re
import time
import warnings
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

from empathybench.cli import app
from empathybench.engine.engine import RunStats
from empathybench.engine.progress import RunProgress
from empathybench.report.compare import RunData, paired_difference, unique_labels
from empathybench.report.profile import title_of
from empathybench.report.terminal import print_summary
from empathybench.run.options import default_preset, demo_selection, left_out_of_demo
from empathybench.schema.files import checked_in


def _invoke(*args: str, exit_code: int = 0) -> Any:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == exit_code, result.output
    return result


def _run(out: Path, model: str, *extra: str, exit_code: int = 0) -> Any:
    """A run (exit_code 1: one in which an instrument could score no item, outside the demo)."""
    return _invoke("run", "--model", model, "--out", str(out), "--quiet", "--no-cache", *extra, exit_code=exit_code)


def _summary(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "summary.json").read_text("utf-8"))


def _calls(directory: Path) -> int:
    lines = (directory / "samples.jsonl").read_text("utf-8").splitlines()
    return sum(len(json.loads(line).get("calls") or []) for line in lines)


# ------------------------------------------------------------------------------------------------------ item 14


def test_bare_run_is_the_demo_only_on_the_embedded_model_with_no_selection() -> None:
    assert default_preset("local", None, None) == "demo"
    assert default_preset("local", ["eqbench"], None) == "quick"
    assert default_preset("local", None, 5) == "quick"
    assert default_preset("openai/gpt-4o", None, None) == "quick"


def test_demo_touches_every_instrument_with_a_fraction_of_the_quick_calls(tmp_path: Path, mirror: Path) -> None:
    # scripted/echo never parses, so every instrument makes all its re-asks: the worst case for the call count.
    demo = _run(tmp_path / "demo", "scripted/echo", "--preset", "demo")
    _run(tmp_path / "quick", "scripted/echo", "--preset", "quick", exit_code=1)  # echo never parses
    summary = _summary(tmp_path / "demo")
    assert summary["preset"] == "demo"
    ran = {name for name, result in summary["benchmarks"].items() if result["status"] != "skipped"}
    # Every built-in instrument (GIEBench's data is not in the mirror) but TactfulToM and Spiral-Bench, which say
    # why; EmoBench, EQ-Bench 3, ToMBench and SAGE, which a run without --bench leaves out, too; EQ-Bench 3 with the
    # model as its own judge and SAGE with the model as its own simulated person, labelled so.
    assert ran == {"eqbench", "seceu", "emotionbench", "empathetic", "emobench", "eqbench3", "tombench", "sage"}
    assert set(summary["benchmarks"]) == set(demo_selection())
    assert summary["benchmarks"]["eqbench3"]["judge"]["self_judging"] is True
    assert "self-judged" in " ".join(summary["benchmarks"]["eqbench3"]["validity"]["reasons"])
    assert summary["benchmarks"]["sage"]["validity"]["status"] == "self-simulated"
    left_out = left_out_of_demo()
    assert [name for name, _ in left_out] == ["tactfultom", "spiral", "mindeval"]
    # the quick presets without --bench, plus EmoBench's and EQ-Bench 3's own quick presets
    _run(tmp_path / "quick-more", "scripted/echo", "--preset", "quick", "--bench", "emobench")
    demo_calls = _calls(tmp_path / "demo")
    quick_calls = _calls(tmp_path / "quick") + _calls(tmp_path / "quick-more")
    assert demo_calls * 10 <= quick_calls, (demo_calls, quick_calls)
    assert demo_calls <= 30
    lines = demo.stdout.strip().splitlines()
    assert lines[-1].startswith("Demo done:") and "--preset paper" in lines[-1]  # what it showed, what next
    # one line per instrument above it: what the model did; then one per instrument left out, saying why
    account = lines[-1 - len(summary["benchmarks"]) - len(left_out) : -1]
    for (name, why), line in zip(left_out, account[len(summary["benchmarks"]) :], strict=True):
        assert (
            line
            == f"{title_of(name)}: not in this demo ({why}); on its own: empathybench run --bench {name} --preset demo"
        )
    for (name, result), line in zip(summary["benchmarks"].items(), account, strict=False):
        assert line.startswith(f"{title_of(name)}: "), line
        if result["status"] == "skipped":
            assert "skipped (GIEBench data unavailable)" in line and str(mirror) not in line
        else:
            assert f"{result['n_parsed']} of {result['n_items']} parsed" in line, line
            assert line.endswith(f", {result['validity']['status']}"), line


@pytest.mark.model
def test_bare_run_on_the_embedded_model_is_a_short_demo(
    tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's main job, `empathybench run` with no options: 245 calls and 848 s before the demo preset."""
    pytest.importorskip("llama_cpp")
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    shown = CliRunner().invoke(app, ["run"])
    elapsed = time.monotonic() - started
    assert shown.exit_code == 0, shown.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    summary = _summary(run_dir)
    assert summary["preset"] == "demo" and summary["model"] == "local"
    assert {n for n, r in summary["benchmarks"].items() if r["status"] != "skipped"} == set(demo_selection()) - {
        "giebench"
    }
    assert summary["usage"]["calls"] <= 30
    assert elapsed < 180, elapsed  # the measured figure (<= 60 s on 2 cores) is bench/results/first_run.md
    assert shown.stdout.strip().splitlines()[-1].startswith("Demo done:")


def test_summary_table_fits_80_columns_with_notes_below(tmp_path: Path, mirror: Path) -> None:
    _run(
        tmp_path / "echo",
        "scripted/echo",
        "--bench",
        "eqbench,seceu,emotionbench,empathetic",
        "--limit",
        "3",
        exit_code=1,
    )
    summary = _summary(tmp_path / "echo")
    summary["benchmarks"]["seceu"]["headline_note"] = "a long note " * 30  # was wrapped inside a cell
    console = Console(width=80, record=True, file=io.StringIO())
    print_summary(console, summary)
    lines = console.export_text().splitlines()
    table = [line for line in lines if line[:1] in "┏┃┡│└"]
    assert all(len(line) <= 80 for line in lines)
    # top border, header, separator, one line per benchmark, bottom border: no row spans two lines
    assert len(table) == 4 + len(summary["benchmarks"]), "\n".join(table)
    assert all("a long note" not in line for line in table)
    below = "\n".join(lines[lines.index(table[-1]) + 1 :])
    assert "  seceu: " in below and "a long note" in below


def test_plain_progress_lines_show_done_total_and_eta() -> None:
    buffer = io.StringIO()
    stats = RunStats()
    stats.items_total = 10
    progress = RunProgress(Console(file=buffer, force_terminal=False, width=200), stats)
    assert not progress.live
    progress._last_plain -= 11  # the first line comes after 10 s
    progress.update()
    assert "0/10 items" in buffer.getvalue() and "ETA unknown" in buffer.getvalue()
    progress._started = time.monotonic() - 20  # 4 items in 20 s: 6 left at 5 s each
    progress._last_plain -= 11
    stats.items_done = 4
    progress.update()
    last = buffer.getvalue().strip().splitlines()[-1]
    assert "4/10 items" in last and re.search(r"ETA 30s$", last), last


# ------------------------------------------------------------------------------------------------------ item 15


def test_invalid_insufficient_and_self_judged_are_labelled_everywhere(tmp_path: Path, mirror: Path) -> None:
    echo, plausible = tmp_path / "echo", tmp_path / "plausible"
    shown = _run(echo, "scripted/echo", "--bench", "eqbench,emotionbench", "--limit", "3", exit_code=1)
    _run(plausible, "scripted/plausible", "--bench", "empathetic", "--limit", "3")
    expected = {(echo, "eqbench"): "invalid", (echo, "emotionbench"): "insufficient"}
    expected[(plausible, "empathetic")] = "self-judged"
    for (directory, name), status in expected.items():
        summary = _summary(directory)
        jsonschema.validate(summary, checked_in("summary.schema.json"))
        assert summary["benchmarks"][name]["validity"]["status"] == status
        assert next(r for r in summary["profile"] if r["benchmark"] == name)["validity"]["status"] == status
        label = summary["benchmarks"][name]["validity"]["label"]
        assert label in (directory / "report.md").read_text("utf-8")
        html = (directory / "report.html").read_text("utf-8")
        assert f'<span class="status {status}">' in html
    rows = {line.split("│")[1].strip(): line for line in shown.stdout.splitlines() if line.startswith("│")}
    assert "invalid" in rows["eqbench"] and "complete" not in rows["eqbench"]
    assert "insufficient" in rows["emotionbench"]
    assert "eqbench: invalid (below gate)" in shown.stdout
    assert "insufficient (0 of 3 parsed)" in shown.stdout


# ------------------------------------------------------------------------------------------------------ item 16


def test_no_p_value_is_said_in_words_without_library_warnings() -> None:
    first = {"items": {"a": 1.0, "b": 2.0, "c": 3.0}, "scale": 1.0, "paired_test": "paired_t"}
    second = {"items": {"a": 0.5, "b": 1.5, "c": 2.5}, "scale": 1.0, "paired_test": "paired_t"}
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"):
        warnings.simplefilter("always")
        row = paired_difference(first, second)
    assert not caught, [str(w.message) for w in caught]
    assert row is not None and row["p"] is None and row["difference"] == pytest.approx(0.5)
    assert "no p-value" in row["p_note"]
    one = paired_difference({**first, "items": {"a": 1.0}}, {**second, "items": {"a": 0.0}})
    assert one is not None and one["p"] is None and "at least 2" in one["p_note"]


def test_report_of_two_runs_warns_keeps_labels_apart_and_says_where(
    tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    _run(first, "scripted/plausible", "--bench", "empathetic,eqbench", "--limit", "4")
    _run(
        second,
        "scripted/plausible-2",
        "--bench",
        "empathetic,eqbench",
        "--limit",
        "4",
        "-O",
        "eqbench.sigmoid_rule=lt5",
    )
    monkeypatch.chdir(tmp_path)
    shown = _invoke("report", str(first), str(second)).stdout
    assert "p = None" not in shown
    for text in ("self-judged", "different judges", "configurations differ (sigmoid_rule)"):
        assert f"warning: Empathetic responding: {text}" in shown or f"warning: EQ-Bench: {text}" in shown, text
    assert f"comparison written to: {tmp_path / 'comparison.html'}" in shown
    comparison = json.loads((tmp_path / "comparison.json").read_text("utf-8"))
    assert any("different judges" in w for w in comparison["warnings"])
    assert all(
        r.get("p") is not None or r.get("p_note") or r.get("note")
        for e in comparison["benchmarks"].values()
        for r in e["paired"]
    )
    markdown = (tmp_path / "comparison.md").read_text("utf-8")
    assert "## Warnings" in markdown and "different judges" in markdown
    html = (tmp_path / "comparison.html").read_text("utf-8")
    assert "different judges" in html
    assert "A = <b>scripted/plausible</b>" in html and "B = <b>scripted/plausible-2</b>" in html
    assert "scripted/plau…" not in html  # chart labels are the keys, not cut names


def test_run_labels_stay_unique_for_same_model_and_same_directory_name(tmp_path: Path) -> None:
    runs = [RunData(tmp_path / where / "run", {"model": "scripted/plausible"}, {}) for where in ("x", "y")]
    runs.append(RunData(tmp_path / "z", {"model": "scripted/plausible-2"}, {}))
    labels = unique_labels(runs)
    assert len(set(labels)) == 3 and labels[2] == "scripted/plausible-2"
    assert str(tmp_path / "x" / "run") in labels[0]
