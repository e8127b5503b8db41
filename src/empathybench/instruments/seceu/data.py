"""Reading the upstream SECEU files (.docx) fetched at run time: the 40 English items and the norm.

specs/seceu.md §1-§2; shared/datasets/seceu/SOURCE.md. Nothing from these files is stored in the package.
"""

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from empathybench.data.fetch import FetchedFile, fetch_pinned
from empathybench.data.parsed import parsed_lines
from empathybench.errors import DataError
from empathybench.formatting import number as format_number
from empathybench.instruments.seceu import norms

ITEMS_KEY = "seceu/original/SECEU_40items_English.docx"
PROMPTS_KEY = "seceu/original/Prompts.docx"
NORM_KEY = "seceu/original/SECEU_norm.docx"
N_ITEMS = 40
N_OPTIONS = 4
ROW_SUM_TOLERANCE = 0.011  # the standard scores are printed to 2 decimals, so a row may miss 10 by rounding

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_OPTION_MARKER = re.compile(r"\(\s*[1-4]\s*\)")


@dataclass(frozen=True)
class SeceuItem:
    number: int  # 1-40, the item number in the docx
    story: str  # whitespace-normalised, ends with "... would feel:"
    options: tuple[str, ...]  # 4 emotion words, in the printed order (the standard scores follow this order)
    standard_scores: tuple[float, ...]  # human consensus allocation of the 10 points (SECEU_norm.docx)
    human_mean_distance: float  # the human pattern template value for this item


@dataclass(frozen=True)
class SeceuNorm:
    standard_scores: tuple[tuple[float, ...], ...]  # 40 rows x 4
    template: tuple[float, ...]  # 40 human item mean distances
    mean: float
    sd: float
    similarity_threshold: float


def docx_paragraphs(path: Path) -> list[str]:
    """The text of every paragraph of a .docx, in order (python-docx is imported only here)."""
    import docx

    try:
        document = docx.Document(str(path))
    except Exception as exc:  # python-docx raises several unrelated types for a damaged file
        raise DataError(f"{path} is not a readable .docx file: {exc}") from None
    return [paragraph.text for paragraph in document.paragraphs]


# docx_paragraphs' own version: raise it whenever what it reads changes (e.g. tables too), so that no text kept by an
# earlier version is served.
DOCX_PARAGRAPHS_VERSION = 1


@cache
def _docx_parser_name() -> str:
    from importlib import metadata

    return f"docx-paragraphs-{DOCX_PARAGRAPHS_VERSION}-python-docx-{metadata.version('python-docx')}"


def fetched_docx_paragraphs(fetched: FetchedFile) -> list[str]:
    """`docx_paragraphs` of a fetched file, kept in the cache for these bytes, this reader and this python-docx
    version: a run after the first neither imports python-docx nor reads the .docx again."""
    return parsed_lines(fetched, _docx_parser_name(), docx_paragraphs)


def normalise_space(text: str) -> str:
    return " ".join(text.split())


def parse_options(line: str) -> tuple[str, ...]:
    """`Options: (1) A; (2) B; (3) C; (4) D` -> (A, B, C, D); item 26 has a colon for one semicolon."""
    body = line.split(":", 1)[1] if line.lower().startswith("options") else line
    parts = [part.strip().rstrip(";:,").strip() for part in _OPTION_MARKER.split(body)]
    options = tuple(part for part in parts if part)
    if len(options) != N_OPTIONS:
        raise DataError(f"expected 4 options in {line!r}, found {len(options)}")
    return options


def parse_items(paragraphs: list[str]) -> list[tuple[int, str, tuple[str, ...]]]:
    """(number, story, options) for each `Item N` / `Story: ...` / `Options: ...` block of the items docx."""
    items: list[tuple[int, str, tuple[str, ...]]] = []
    number: int | None = None
    story: str | None = None
    for raw in paragraphs:
        text = raw.strip()
        if match := re.fullmatch(r"Item\s+(\d+)", text):
            number, story = int(match.group(1)), None
        elif text.startswith("Story:") and number is not None:
            story = normalise_space(text.removeprefix("Story:"))
        elif text.startswith("Options:") and number is not None and story is not None:
            items.append((number, story, parse_options(text)))
            number, story = None, None
    if [n for n, _, _ in items] != list(range(1, N_ITEMS + 1)):
        raise DataError(f"the SECEU items file should hold items 1-{N_ITEMS} in order; found {len(items)} items")
    return items


def parse_norm(paragraphs: list[str]) -> SeceuNorm:
    """The standard-score matrix, M and SD, the human pattern template and the similarity threshold."""
    rows: list[tuple[float, ...]] = []
    for text in paragraphs:
        cells = text.split()
        if len(cells) == N_OPTIONS and all(_NUMBER.fullmatch(cell) for cell in cells):
            rows.append(tuple(float(cell) for cell in cells))
    full_text = "\n".join(paragraphs)
    moments = re.search(
        r"mean \(M\) is (\d+(?:\.\d+)?) and the standard deviation \(SD\) is (\d+(?:\.\d+)?)", full_text
    )
    template_match = re.search(r"pattern template[^\[]*\[([^\]]*)\]", full_text)
    threshold = re.search(r"\(<\s*(\d+(?:\.\d+)?)\)", full_text)
    if len(rows) != N_ITEMS or moments is None or template_match is None or threshold is None:
        raise DataError("SECEU_norm.docx does not have the expected layout (40x4 scores, M, SD, template)")
    template = tuple(float(value) for value in _NUMBER.findall(template_match.group(1)))
    if len(template) != N_ITEMS:
        raise DataError(f"the SECEU human pattern template should have 40 values, found {len(template)}")
    for number, row in enumerate(rows, start=1):
        if abs(sum(row) - 10) > ROW_SUM_TOLERANCE:
            raise DataError(
                f"SECEU standard scores of item {number} sum to {format_number(float(sum(row)), 2)}, not 10"
            )
    return SeceuNorm(
        standard_scores=tuple(rows),
        template=template,
        mean=float(moments.group(1)),
        sd=float(moments.group(2)),
        similarity_threshold=float(threshold.group(1)),
    )


def check_norm_against_paper(norm: SeceuNorm) -> None:
    """The scalars in the docx must be the ones the scorer uses (seceu/norms.py)."""
    expected = (norms.SECEU_MEAN, norms.SECEU_SD, norms.PATTERN_R_THRESHOLD)
    found = (norm.mean, norm.sd, norm.similarity_threshold)
    if found != expected:
        raise DataError(f"SECEU_norm.docx gives M, SD, threshold = {found}; the scorer uses {expected}")


def load_norm(*, allow_unverified: bool = False) -> tuple[SeceuNorm, FetchedFile]:
    fetched = fetch_pinned(__package__, NORM_KEY, allow_unverified=allow_unverified)
    norm = parse_norm(fetched_docx_paragraphs(fetched))
    check_norm_against_paper(norm)
    return norm, fetched


def load_items(*, allow_unverified: bool = False) -> tuple[list[SeceuItem], SeceuNorm, list[FetchedFile]]:
    """The 40 items joined with their standard scores and template values, and the files they came from."""
    items_file = fetch_pinned(__package__, ITEMS_KEY, allow_unverified=allow_unverified)
    norm, norm_file = load_norm(allow_unverified=allow_unverified)
    items = [
        SeceuItem(number, story, options, norm.standard_scores[number - 1], norm.template[number - 1])
        for number, story, options in parse_items(fetched_docx_paragraphs(items_file))
    ]
    return items, norm, [items_file, norm_file]
