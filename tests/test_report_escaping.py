"""Hostile text in a run directory reaches report.html and the comparison page only escaped.

A real run of every instrument (scripted model, a few items each) is written, then every string a person, a model, a
server or a file can put there is replaced by markup: replies, reasoning, errors, parse errors, item ids, model and
judge names, option values, metric labels, units, notes and the instruments' own result strings. Both pages are
rendered again by `empathybench report`; the markup must appear escaped, never as markup, and `{{ 7*7 }}` must stay
text (no template evaluates data). A ReportSection of every chart kind with hostile labels goes the same way."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape
from typer.testing import CliRunner

from conftest import two_scripted_runs, words_joined
from empathybench.cli import app
from empathybench.instruments.protocol import (
    ChartLine,
    ChartPoint,
    FactsTable,
    GroupedBarsChart,
    HeatmapChart,
    HistogramChart,
    ItemLink,
    LineChart,
    Marked,
    NormalCurveChart,
    ReportSection,
    ScatterChart,
    StackedBarsChart,
    StripChart,
    TrajectoryChart,
    TrajectoryGroup,
)
from empathybench.report import html

INSTRUMENTS = "eqbench,seceu,emotionbench,giebench,empathetic,emobench,eqbench3"

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(2)>'
TEMPLATE = "{{ 7*7 }}"
TEXTAREA = "</textarea>"
HOSTILE = f"{SCRIPT}{IMG}{TEMPLATE}{TEXTAREA}'&"
RAW_MARKERS = ("<script>alert", "<img", "onerror=alert(2)>", "</textarea>")

# Keys whose string values come from a model, a server, a user's command line or a data file, or that an instrument
# shows as a label; the run directory's structure (statuses, names, metric keys) stays as it is so the run still reads.
TEXT_KEYS = {
    "label",
    "note",
    "notes",
    "unit",
    "method",
    "question",
    "score_name",
    "headline_note",
    "lm_eval_note",
    "validity_rule",
    "published_raters_label",
    "reply",
    "reasoning",
    "error",
    "parse_error",
    "revised_parse_error",
    "parse_notes",
    "spec",
    "model",
    "item_id",
    "p_note",
}


def _poison(value: Any, key: str = "") -> Any:
    """`value` with every string under a TEXT_KEYS key replaced by the hostile text (kept distinct per place)."""
    if isinstance(value, dict):
        out = {k: _poison(v, k) for k, v in value.items()}
        if key == "parse_failures":  # keys that an instrument shows as labels (reasons read from replies)
            out = {f"{k}{HOSTILE}": v for k, v in out.items()}
        return out
    if isinstance(value, list):
        return [_poison(v, key) for v in value]
    if isinstance(value, str) and key in TEXT_KEYS:
        return f"{value[:12]}{HOSTILE}"
    return value


def _poison_run(directory: Path, errors: int = 2) -> None:
    summary = json.loads((directory / "summary.json").read_text("utf-8"))
    summary = _poison(summary)
    summary["model"] = f"openai/{HOSTILE}"
    (directory / "summary.json").write_text(json.dumps(summary), "utf-8")
    run_info = json.loads((directory / "run.json").read_text("utf-8"))
    run_info = _poison(run_info)
    options = run_info["options"]
    # (the seed stays a number: run.json's schema says so, and the report refuses a run.json that breaks it)
    options["benchmark_options"] = {key: HOSTILE for key in options.get("benchmark_options") or {"x.y": ""}}
    run_info["judge"] = {"spec": f"openai/{HOSTILE}", "note": HOSTILE}
    run_info["created"] = HOSTILE
    (directory / "run.json").write_text(json.dumps(run_info), "utf-8")
    samples = [json.loads(line) for line in (directory / "samples.jsonl").read_text("utf-8").splitlines()]
    samples = [_poison(s) for s in samples]
    for record in samples[:errors]:  # items that ended in a server error
        record["status"], record["error"] = "error", f"HTTP 500: {HOSTILE}"
    for record in samples:
        for call in record.get("calls") or []:
            call["reply"] = f"{call.get('reply', '')[:20]}{HOSTILE}"
            call["reasoning"] = HOSTILE
    (directory / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples), "utf-8")


class _Elements(HTMLParser):
    """Every element and attribute of a page, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def _assert_only_escaped(page: str) -> None:
    for marker in RAW_MARKERS:
        assert marker not in page, marker
    assert str(escape(SCRIPT)) in page and str(escape(IMG)) in page and str(escape(TEXTAREA)) in page
    assert str(escape(HOSTILE)) in page  # all of it, {{ 7*7 }} included, as text: no template evaluated data
    elements = _Elements()
    elements.feed(page)
    assert elements.tags.count("script") == 1 and "alert" not in "".join(elements.scripts)  # the page's own one
    assert "img" not in elements.tags and "textarea" not in elements.tags
    assert not [name for name in elements.attributes if name.startswith("on")]


@pytest.fixture(scope="module")
def poisoned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("hostile")
    for run_dir in two_scripted_runs(root, "--bench", INSTRUMENTS, "--judge", "scripted/plausible", "--limit", "3"):
        _poison_run(run_dir)
    for name in ("a", "b"):
        result = CliRunner().invoke(app, ["report", str(root / name)])
        assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["report", str(root / "a"), str(root / "b"), "--out", str(root / "cmp.html")])
    assert result.exit_code == 0, result.output
    return root / "a", root / "b", root / "cmp.html"


def test_hostile_run_directory_text_is_escaped_in_report_html(poisoned: tuple[Path, Path, Path]) -> None:
    page = words_joined((poisoned[0] / "report.html").read_text("utf-8"))
    _assert_only_escaped(page)
    # The hostile text reached the places it was put: the title, the judge, a reply, an error, an instrument section.
    assert f"<title>EmpathyBench: openai/{escape(HOSTILE)}</title>" in page
    assert f"openai/{escape(HOSTILE)}</td>" in page  # the judge's spec in the run table
    assert f"HTTP 500: {escape(HOSTILE)}" in page
    sections = re.findall(r'<section data-benchmark="(\w+)">(.*?)</section>', page, flags=re.S)
    assert len(sections) == len(INSTRUMENTS.split(","))
    for name, body in sections:
        assert str(escape(HOSTILE)) in body, name  # every instrument drew some of the hostile text, escaped


def test_hostile_run_directory_text_is_escaped_in_the_comparison(poisoned: tuple[Path, Path, Path]) -> None:
    page = words_joined(poisoned[2].read_text("utf-8"))
    _assert_only_escaped(page)
    assert f"<b>openai/{escape(HOSTILE)}" in page  # the run's label in the header


def test_every_chart_kind_and_cell_of_a_section_escapes_its_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    point = ChartPoint(HOSTILE, 1.0, 0.5, 1.5)
    line = ChartLine(0.8, HOSTILE)
    section = ReportSection(
        charts=(
            StripChart((point,), (0.0, 2.0), HOSTILE, HOSTILE, (line,), HOSTILE),
            GroupedBarsChart((HOSTILE,), ((HOSTILE, (point,)),), HOSTILE, HOSTILE, HOSTILE),
            HistogramChart((1.0, 2.0, 2.5), 3, HOSTILE, HOSTILE, HOSTILE),
            NormalCurveChart(100.0, 15.0, 110.0, HOSTILE, HOSTILE, HOSTILE, (105.0, 115.0), (line,)),
            LineChart((HOSTILE, "b"), ((HOSTILE, (1.0, 2.0)),), HOSTILE, HOSTILE),
            HeatmapChart((HOSTILE,), (HOSTILE,), ((1.0,),), HOSTILE, HOSTILE, 0.0, HOSTILE),
            ScatterChart(((1.0, 2.0, HOSTILE),), HOSTILE, HOSTILE, HOSTILE, HOSTILE),
            StackedBarsChart(((HOSTILE, (40.0, 60.0)),), (HOSTILE, "b"), HOSTILE, HOSTILE),
            TrajectoryChart(
                (HOSTILE, "b"),
                (TrajectoryGroup(HOSTILE, ((1.0, 2.0), (3.0, None)), (2.0, 2.0)),),
                HOSTILE,
                HOSTILE,
                references=(line,),
                unit=HOSTILE,
            ),
        ),
        tables=(
            FactsTable(
                (HOSTILE, "n"),
                ((HOSTILE, 1.5), (ItemLink(HOSTILE, HOSTILE), Marked(2.0, "up"))),
                title=HOSTILE,
            ),
        ),
        note=HOSTILE,
        warning=HOSTILE,
        footnote=(HOSTILE, 3.14159),
    )

    class Hostile:
        def report_section(self, result: Any, samples: Any) -> ReportSection:
            return section

    monkeypatch.setattr(html, "_instrument", lambda name: Hostile())
    body = html._section_body("hostile", {}, [])
    for marker in RAW_MARKERS:
        assert marker not in body, marker
    assert body.count("<svg") == 9 and str(escape(HOSTILE)) in body and "3.14" in body
    elements = _Elements()
    elements.feed(body)
    assert "script" not in elements.tags and "img" not in elements.tags
    assert not [name for name in elements.attributes if name.startswith("on")]
