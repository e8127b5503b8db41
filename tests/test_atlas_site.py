"""`empathybench atlas --html DIR`: a self-contained static page (no network) with every instrument's leaderboard,
charts, the simulator effects, the agreement matrix (heat map and CSV), runs placed among the models, hostile
text escaped; in Chromium at 1280 and 390 px where Chromium is installed."""

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process, words_joined
from empathybench.atlas.data import shipped_atlas
from test_report_browser import launched_chromium, readability_problems


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("atlas-site")
    document: dict[str, Any] = json.loads(json.dumps(shipped_atlas()))
    document["entries"][0]["model"] = "<script>alert(1)</script>"
    (root / "hostile.json").write_text(json.dumps(document))
    env = {**os.environ, "COLUMNS": "200", "EMPATHYBENCH_CACHE_DIR": str(root / "cache")}
    run = cli_in_process(
        ["run", "-m", "scripted/plausible", "-b", "eqbench", "-n", "5", "-o", "run", "-q"], env, cwd=root
    )
    assert run.returncode == 0, run.stderr
    args = ["atlas", "--atlas", "hostile.json", "--run", "run", "--html", "site"]
    result = cli_in_process(args, env, cwd=root)
    assert result.returncode == 0, result.stderr
    assert "wrote site/index.html, site/agreement.csv, site/models" in result.stderr
    return root / "site"


def test_the_site_is_one_self_contained_page_with_every_instrument(site: Path) -> None:
    html = (site / "index.html").read_text("utf-8")
    for name in shipped_atlas()["instruments"]:
        assert f'id="atlas-{name}"' in html
    assert 'id="agreement"' in html and 'data-chart="heatmap"' in html
    assert html.count('data-chart="interval_strip"') >= 6  # a strip per instrument, and the simulator effects
    # nothing is fetched: no script, style, image or link from elsewhere
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    # the run's label, its words apart from the spans that keep each on one line
    assert "▶ your run: scripted/plausible" in words_joined(html)
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert (site / "agreement.csv").read_text().startswith("first,second,n,rho,ci95_low,ci95_high,verdict")
    # today's boards beside the recomputed leaderboards, and what the judge changes between EQ-Bench 3's two
    assert 'id="atlas-eqbench3-boards"' in html and 'id="atlas-spiral-boards"' in html
    joined = words_joined(html)
    assert "eqbench.com @ 04a8066b" in joined and "judge claude-3-7-sonnet-20250219 → claude-opus-4-6" in joined
    assert "-22.05" in html and "What changes between the boards" in html
    # the judge effect also without the board's own judge (45 models), and the rows it judged marked
    assert "45 (without judges)" in joined and "without claude-3-7-sonnet-20250219, a board" in joined
    assert "judged by itself" in joined


def test_a_page_per_model_and_the_leaderboards_link_to_it(site: Path) -> None:
    from empathybench.atlas.model import page_names

    atlas = shipped_atlas()
    pages = page_names([e["model_id"] for e in atlas["entries"] if e["model_id"]])
    assert sorted(p.name for p in (site / "models").iterdir()) == sorted(pages.values())
    html = (site / "index.html").read_text("utf-8")
    assert f'<a href="models/{pages["gpt-4o-2024-08-06"]}">gpt-4o-0808</a>' in words_joined(html)  # SAGE's row
    page = words_joined((site / "models" / pages["gpt-4o-2024-08-06"]).read_text("utf-8"))
    assert 'href="../index.html"' in page and 'id="model-sage"' in page and 'id="model-tactfultom"' in page
    assert "One setting changed" in page and "deepseek-v3-2024-12-26 → gpt-4o-2024-08-06" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    # the published boards' tables link their models too: every row of the Opus 4.6 board whose model has a page
    boards = html[html.index('id="atlas-eqbench3-boards"') :]
    opus = boards[boards.index("eqbench.com @ 04a8066b:") :]
    opus = opus[: opus.index("</table>")]
    linked = {e["model"] for e in atlas["entries"] if e["settings"].get("board") == "eqbench.com @ 04a8066b"}
    linked = {m for m in linked if any(e["model"] == m and e["model_id"] for e in atlas["entries"])}
    assert opus.count('<a href="models/') >= len(linked) >= 70
    # a model page: each board's rows under its own board and judge, the rubric, the judge's change, the whole judge
    o3 = words_joined((site / "models" / pages["o3-2025-04-16"]).read_text("utf-8"))
    assert "on the published board eqbench.com @ 04a8066b, judge claude-opus-4-6" in o3
    assert "rubric_0_100 74.70" in o3 and "Between two published boards" in o3 and "88.00 → 74.70" in o3
    assert "judge: claude-opus-4-6" in o3 and "judge:…" not in o3
    hostile = (site / "models" / pages[atlas["entries"][0]["model_id"]]).read_text("utf-8")
    assert "<script>alert(1)</script>" not in hostile and "&lt;script&gt;alert(1)&lt;/script&gt;" in hostile


def test_the_judges_block_and_page(site: Path) -> None:
    """The judge evidence the CLI passes: each judge's headline in the index, linked to its every figure on
    judges.html (docs/judges.md's pooled kappas; 15 figures per MentalAlign judge)."""

    def cells(html: str) -> list[str]:  # a table row's cell texts, whatever spans the page wraps them in
        return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", html)]

    html = (site / "index.html").read_text("utf-8")
    judges = html.split('id="judges"', 1)[1]
    assert 'href="judges.html#judge-gpt-4o"' in judges
    assert judges.count("all 7 attributes pooled") == 4  # one headline per MentalAlign judge
    page = (site / "judges.html").read_text("utf-8")
    assert 'href="index.html"' in page and not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    gpt4o = page.split('id="judge-gpt-4o"', 1)[1].split("<h2", 1)[0]
    rows = [cells(row) for row in gpt4o.split("<tr")[1:]]
    assert len(rows) == 1 + 15 and sum("ICC(C,1)" in row for row in rows) == 7
    pooled = next(row for row in rows if "all 7 attributes pooled" in row)
    assert pooled[5:7] == ["0.42", "[0.40, 0.44]"] and pooled[-1] == "item"
    assert "9 model means" in page  # where the evidence is thin is said
    # The boards' judge change (docs/judges.md): each of EQ-Bench 3's two board judges held to the other, 46 models.
    assert 'href="judges.html#judge-claude-opus-4-6"' in judges
    opus = [cells(row) for row in page.split('id="judge-claude-opus-4-6"', 1)[1].split("<h2", 1)[0].split("<tr")[1:]]
    assert len(opus) == 1 + 3 and all(row[7:] == ["46", "model"] for row in opus[1:])
    assert ["-22.05", "[-24.03, -20.11]"] in [row[5:7] for row in opus]
    sonnet = page.split('id="judge-claude-3-7-sonnet-20250219"', 1)[1].split("<h2", 1)[0]
    assert sonnet.count("<tr") == 1 + 15 + 3  # MentalAlign's figures and the boards'


def test_a_file_in_place_of_the_directory_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x")
    result = cli_in_process(["atlas", "--html", "taken"], {**os.environ, "COLUMNS": "200"}, cwd=tmp_path)
    assert result.returncode != 0 and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("width", [1280, 390])
def test_the_site_in_chromium(site: Path, width: int) -> None:
    with launched_chromium() as browser:
        page = browser.new_page(viewport={"width": width, "height": 900})
        problems: list[str] = []
        page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on("requestfailed", lambda request: problems.append(f"request failed: {request.url}"))
        page.goto((site / "index.html").as_uri())
        page.wait_for_load_state("load")
        assert problems == []
        sizes = page.eval_on_selector_all("svg.chart", "cs => cs.map(c => c.getBoundingClientRect().width)")
        assert sizes and all(w > 100 for w in sizes)
        # no number or word of a cell broken over lines ("86.0" above "5", "1 7 1" down a column), and the page
        # itself never scrolls sideways (a wide table scrolls in its own box on a phone)
        assert readability_problems(page, width) == []
        # a published model's row is one line at 1280 px: the long notes are numbered under the table, not
        # squeezing its columns (a run's row may wrap between the words of its nearest models)
        if width == 1280:
            heights = page.eval_on_selector(
                "#atlas-eqbench ~ .scroll",
                "box => Array.from(box.querySelectorAll('tbody tr'))"
                ".filter(r => !r.textContent.includes('your run')).map(r => r.offsetHeight)",
            )
            assert len(heights) > 50 and max(heights) < 1.5 * min(heights)
        notes = page.locator("#atlas-eqbench ~ ol.notes li")
        assert notes.count() >= 1 and "EQ-bench/EQ-bench-site@" in notes.first.inner_text()
        # a click on a header sorts the table by that column
        table = page.locator("#atlas-eqbench ~ .scroll table").first
        table.locator("th").nth(3).click()
        first = [float(t) for t in table.locator("tbody tr td:nth-child(4)").all_inner_texts()[:5] if t.strip()]
        assert first == sorted(first, reverse=True)
        page.screenshot(path=str(site / f"atlas-{width}.png"), full_page=True)
        page.goto((site / "judges.html").as_uri())  # the judges page: as clean, never scrolling sideways
        page.wait_for_load_state("load")
        assert problems == [] and page.evaluate("document.documentElement.scrollWidth") <= width
