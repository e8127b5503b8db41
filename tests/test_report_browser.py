"""The reports in a real browser: Debian's Chromium, headless, driven by Playwright (which downloads no browser).

A run of all five instruments and a comparison of two runs open without console errors or page errors, every chart
is an SVG with a visible size, the link from a profile number opens the collapsed sample table, and a screenshot is
taken (kept in EMPATHYBENCH_SCREENSHOT_DIR when set, for CI artefacts).

`.ci/run` installs Chromium; elsewhere the test is skipped when no Chromium is found, unless CI is set.
"""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import two_scripted_runs
from empathybench.cli import app

# Without the background-networking flags Chromium keeps trying to reach Google's hosts, which this network refuses.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str | None:
    return os.environ.get("EMPATHYBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """Chromium through Playwright, closed after; skipped where there is none, a failure on CI (which installs it)."""
    executable = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        executable = None
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have Chromium (apt-get install chromium) and playwright for the browser test")
        pytest.skip("no Chromium or playwright here")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def browser(reports: dict[str, Path]) -> Any:
    """Started after the reports are written: Playwright's sync API holds an event loop that `run` cannot share."""
    with launched_chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("browser")
    first, second = two_scripted_runs(root)
    result = CliRunner().invoke(app, ["report", str(first), str(second), "--out", str(root / "cmp.html")])
    assert result.exit_code == 0, result.output
    # A run in which GIEBench is skipped (no data given): its card carries the reason, with a long path behind it.
    skipped = root / "skipped"
    args = ["run", "-m", "scripted/plausible", "--bench", "eqbench,giebench", "--limit", "2", "-o", str(skipped)]
    result = CliRunner().invoke(app, [*args, "-q", "--no-cache"])
    assert result.exit_code == 0, result.output
    return {"run": first / "report.html", "comparison": root / "cmp.html", "skipped": skipped / "report.html"}


def _open(browser: Any, path: Path, screenshot: Path) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("requestfailed", lambda request: problems.append(f"request failed: {request.url}"))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    page.screenshot(path=str(screenshot), full_page=True)
    return page, problems


def _screenshot_dir(tmp_path: Path) -> Path:
    directory = Path(os.environ.get("EMPATHYBENCH_SCREENSHOT_DIR", tmp_path))
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _chart_sizes(page: Any) -> list[dict[str, Any]]:
    return page.eval_on_selector_all(
        "svg.chart",
        "charts => charts.map(c => ({kind: c.dataset.chart, w: c.getBoundingClientRect().width,"
        " h: c.getBoundingClientRect().height, marks: c.querySelectorAll('rect,circle,path,line').length}))",
    )


# Every <text> of every chart, as Chromium lays it out (its own font metrics, its rotate()), against its viewBox.
_TEXTS_OUTSIDE = """() => { const out = [];
for (const chart of document.querySelectorAll('svg.chart')) { const box = chart.viewBox.baseVal;
  for (const text of chart.querySelectorAll('text')) { const b = text.getBBox();
    const turn = text.transform.baseVal.consolidate();
    let corners = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]];
    if (turn) { const m = turn.matrix; corners = corners.map(([x, y]) => [m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f]); }
    if (corners.some(([x, y]) => x < -1 || x > box.width + 1 || y < -1 || y > box.height + 1))
      out.push([chart.dataset.chart, text.textContent, Math.round(b.x), Math.round(b.width), box.width]); } }
return out; }"""


def test_run_report_renders_cleanly(browser: Any, reports: dict[str, Path], tmp_path: Path) -> None:
    screenshot = _screenshot_dir(tmp_path) / "report.png"
    page, problems = _open(browser, reports["run"], screenshot)
    assert problems == []
    charts = _chart_sizes(page)
    kinds = {c["kind"] for c in charts}
    assert {
        "interval_strip",
        "histogram",
        "normal_curve",
        "line_chart",
        "grouped_bars",
        "heatmap",
        "stacked_bars",
    } <= kinds
    for chart in charts:
        assert chart["w"] > 100 and chart["h"] > 30 and chart["marks"] > 0, chart
    assert page.evaluate(_TEXTS_OUTSIDE) == []  # no label cut off at a chart's edge
    assert page.locator(".profile .card").count() == 5
    # A profile number links to its samples: following it opens the collapsed table.
    assert page.eval_on_selector("#samples-eqbench", "d => d.open") is False
    page.locator('.card[data-benchmark="eqbench"] a.big').click()
    page.wait_for_function("document.getElementById('samples-eqbench').open === true")
    assert screenshot.stat().st_size > 20_000
    page.close()


def test_comparison_renders_cleanly(browser: Any, reports: dict[str, Path], tmp_path: Path) -> None:
    screenshot = _screenshot_dir(tmp_path) / "comparison.png"
    page, problems = _open(browser, reports["comparison"], screenshot)
    assert problems == []
    charts = _chart_sizes(page)
    assert len(charts) == 5 and all(c["w"] > 100 and c["marks"] > 0 for c in charts)
    assert page.evaluate(_TEXTS_OUTSIDE) == []
    text = page.inner_text("body")
    assert "scripted/plausible-2" in text and "Paired differences" in text
    assert page.locator("table").nth(1).locator("tbody tr").count() >= 5
    assert readability_problems(page, 1280) == []
    page.close()


def test_long_and_cjk_chart_labels_stay_inside_their_charts_in_chromium(browser: Any, tmp_path: Path) -> None:
    """The width estimate the charts lay out with holds for Chromium's real font metrics."""
    from test_report_svg_labels import LABELS, _charts

    charts = [draw() for label in LABELS for draw in _charts(label).values()]
    page_file = tmp_path / "charts.html"
    page_file.write_text(
        "<!doctype html><html><head><meta charset='utf-8'></head><body>" + "".join(charts) + "</body></html>", "utf-8"
    )
    page, problems = _open(browser, page_file, _screenshot_dir(tmp_path) / "labels.png")
    assert problems == [] and len(_chart_sizes(page)) == len(charts)
    assert page.evaluate(_TEXTS_OUTSIDE) == []
    page.close()


# Every element whose text runs outside its card, or any element wider than the page (a horizontal scroll).
_TEXT_OUTSIDE_ITS_BOX = """() => { const out = []; const width = document.documentElement.clientWidth;
for (const card of document.querySelectorAll('.card, .banner')) { const box = card.getBoundingClientRect();
  for (const element of [card, ...card.querySelectorAll('*')]) { const r = element.getBoundingClientRect();
    if (r.width && (r.right > box.right + 1 || r.left < box.left - 1 || element.scrollWidth > element.clientWidth + 1))
      out.push([card.className, element.tagName, element.textContent.slice(0, 60)]); } }
const scrolled = document.documentElement.scrollWidth;
if (scrolled > width + 1) out.push(['page', 'scrollWidth', scrolled]);
return out; }"""


# Every word (a run of non-space characters) of a table cell that Chromium laid out over more than one line: "84."
# above "79", "1 7 1" down a column. Each word is a Range, and its client rects on different lines give it away.
# A reply in its <pre> is the model's text, wrapped as it comes; it is left out.
_WORDS_SPLIT_IN_CELLS = """() => { const out = [];
for (const cell of document.querySelectorAll('td, th')) {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest('pre')) continue;
    for (const word of node.data.matchAll(/\\S+/g)) { const range = document.createRange();
      range.setStart(node, word.index); range.setEnd(node, word.index + word[0].length);
      const lines = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (lines.size > 1) out.push(word[0]); } } }
return out; }"""


def readability_problems(page: Any, width: int) -> list[Any]:
    """What makes a page hard to read at `width` px, every <details> opened first (their tables too): words of table
    cells split over lines, a page wider than the window (a wide table scrolls in its own box instead), and on a
    desktop (1280 px and over) a table that needs that scroll bar at all."""
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    problems: list[Any] = [f"split: {word}" for word in page.evaluate(_WORDS_SPLIT_IN_CELLS)]
    scrolled = page.evaluate("document.documentElement.scrollWidth")
    if scrolled > width:
        problems.append(f"the page is {scrolled} px wide")
    if width >= 1280:
        boxes = "boxes => boxes.filter(b => b.scrollWidth > b.clientWidth + 1).map(b => b.textContent.slice(0, 60))"
        problems += [f"scrolls: {text}" for text in page.eval_on_selector_all(".scroll", boxes)]
    return problems


@pytest.mark.parametrize("width", [1280, 390])
def test_no_text_leaves_its_box(browser: Any, reports: dict[str, Path], width: int) -> None:
    for name in ("skipped", "run"):
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(reports[name].as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate(_TEXT_OUTSIDE_ITS_BOX) == [], (name, width)
        assert readability_problems(page, width) == [], (name, width)
        if name == "skipped":
            card = page.inner_text('[data-benchmark="giebench"]')
            assert "GIEBench data unavailable" in card and "/" not in card.split("unavailable", 1)[1][:40]
        page.close()
