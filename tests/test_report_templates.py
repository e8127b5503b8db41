"""The report templates ship with the package: importlib.resources finds every template the renderer asks for, and
a wheel built from this checkout carries the whole templates folder."""

import importlib.resources
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from jinja2 import UndefinedError

from empathybench.report import html

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "src" / "empathybench" / "report" / "templates"


def _used_templates() -> set[str]:
    """Every template name html.py renders, includes, extends or imports."""
    names = set(re.findall(r'"([\w.]+\.(?:html\.j2|css|js))"', Path(html.__file__).read_text("utf-8")))
    for template in TEMPLATES.iterdir():
        names |= set(re.findall(r'\{%-?\s*(?:include|extends|from|import)\s+"([^"]+)"', template.read_text("utf-8")))
    return names


def test_importlib_resources_finds_every_template_the_renderer_uses() -> None:
    folder = importlib.resources.files("empathybench.report") / "templates"
    used = _used_templates()
    assert {"run_report.html.j2", "comparison.html.j2", "section.html.j2", "macros.html.j2", "report.css"} <= used
    for name in used:
        assert (folder / name).is_file(), name
        assert html.environment().get_template(name) is not None


def test_the_environment_escapes_everything_and_refuses_missing_names() -> None:
    environment = html.environment()
    assert environment.autoescape is True  # every template, whatever its name
    assert environment.from_string("{{ x }}").render(x="<b>'") == "&lt;b&gt;&#39;"
    with pytest.raises(UndefinedError):  # a renamed field fails loudly instead of vanishing from the page
        environment.from_string("{{ page.missing }}").render(page={})


@pytest.mark.slow
def test_a_built_wheel_carries_the_templates(tmp_path: Path) -> None:
    pytest.importorskip("hatchling")  # the build backend, from the dev environment; builds offline
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = tmp_path.glob("empathybench-*.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    for template in TEMPLATES.iterdir():
        assert f"empathybench/report/templates/{template.name}" in inside, template.name


def test_a_new_part_of_a_page_is_data_a_block_of_tables_and_sections() -> None:
    """How a cost line, an Elo table or an instrument's comparison section lands: as data, drawn by the templates."""
    from empathybench.instruments.protocol import FactsTable, ReportSection
    from empathybench.report.page import Block, ComparisonPage, Piece, RunRef, Table

    elo = html.draw_section(ReportSection(tables=(FactsTable(("model", "Elo"), (("<m>", 1512.345),), digits=1),)))
    page = ComparisonPage(
        title="t",
        runs=(RunRef("A", "<a>", "dir"),),
        warnings=(),
        overlay=(),
        blocks=(
            Block("cost", "Cost", intro="<why>", tables=(Table(("run", "USD"), (((Piece("A"),), (Piece("0.12"),)),)),)),
            Block("elo", "Elo ratings", sections=(elo,)),
        ),
    )
    rendered = html.environment().get_template("comparison.html.j2").render(page=page)
    assert '<h2 id="cost">Cost</h2>' in rendered and "&lt;why&gt;" in rendered and '<td class="">0.12</td>' in rendered
    assert '<h2 id="elo">Elo ratings</h2>' in rendered and "&lt;m&gt;" in rendered and "1512.3" in rendered
    assert "<b>&lt;a&gt;</b>" in rendered and "<m>" not in rendered
