"""The front door: a README that fits on a screen, a docs site whose pages exist, a CLI reference that is current."""

import re
from pathlib import Path

from empathybench.cli_reference import cli_reference

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_cli_reference_is_generated_from_the_cli() -> None:
    written = (DOCS / "cli.md").read_text("utf-8")
    assert written == cli_reference(), "docs/cli.md drifted: python -m empathybench.cli_reference > docs/cli.md"


def test_the_readme_fits_on_a_screen_and_starts_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text("utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines"
    head = "\n".join(lines[:12])
    assert "empathybench run" in head and "pytest -n auto" in head


def test_every_relative_link_of_the_readme_and_the_docs_exists() -> None:
    missing = []
    for page in [ROOT / "README.md", *DOCS.rglob("*.md")]:
        for target in LINK.findall(page.read_text("utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                missing.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not missing, missing


def test_every_docs_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text("utf-8")
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert {p for p in pages if p not in nav} == set()
