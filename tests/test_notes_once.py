"""One sentence per fact: a status reason, an instrument's note and a skipped instrument's reason are each said once,
and a card says one short thing (the details stay under its section and in the terminal)."""

import html
import re
from pathlib import Path

from typer.testing import CliRunner

from empathybench.cli import app


def _text(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_each_fact_is_said_once(tmp_path: Path, mirror: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    # scripted/refuse answers nothing readable: EQ-Bench falls below its gate, empathetic judges itself.
    args = ["run", "-m", "scripted/refuse", "--bench", "eqbench,empathetic,giebench", "--limit", "3", "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "-q", "--no-cache"])
    assert result.exit_code == 1, result.output  # nothing could be scored: a line each, and why said once above
    terminal = " ".join(result.output.split())
    assert "eqbench: no item could be scored" in terminal and "empathetic: no item could be scored" in terminal
    assert "invalid run: invalid" not in terminal and "invalid (below gate): invalid run" not in terminal
    assert terminal.count("below the upstream 83.33% gate") == 1
    assert terminal.lower().count("no --judge") == 1  # self-judged, said once

    page = (out / "report.html").read_text("utf-8")
    eqbench = _text(page.split('id="bench-eqbench"', 1)[1].split('id="bench-', 1)[0])
    assert eqbench.count("below the upstream 83.33% gate") == 1
    assert _text(page).lower().count("no --judge given") == 1
    markdown = (out / "report.md").read_text("utf-8")
    assert markdown.count("below the upstream 83.33% gate") <= 2  # the profile row's status and the section's

    # GIEBench has no data offline: its card says so in a few words, its section and the terminal say the rest.
    card = page.split('data-benchmark="giebench"', 1)[1].split('<div class="card"', 1)[0]
    card_text = _text("<div " + card)
    assert "GIEBench data unavailable" in card_text and str(mirror) not in card_text
    assert len(card_text) < 400
    section = _text(page.split('id="bench-giebench"', 1)[1].split('id="bench-', 1)[0])
    assert "giebench.data_dir" in section
    assert "giebench.data_dir" in terminal
