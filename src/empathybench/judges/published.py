"""The figures MentalAlign's authors published (`Results/*.md` at the pinned commit), read from their Markdown tables:
the human table (per response model and attribute), the ICC table (per judge and attribute) and the bias table. A
table that is not laid out as at the pinned commit is one DataError line.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from empathybench.data.fetch import fetch_pinned
from empathybench.errors import DataError
from empathybench.judges.ratings import ATTRIBUTES, JUDGES, PINS, RESPONSE_MODELS

HUMAN_TABLE_KEY = "mentalalign/Human Response Evaluation.md"
ICC_TABLE_KEY = "mentalalign/ICC Reliability Analysis.md"
BIAS_TABLE_KEY = "mentalalign/Systematic Bias Decomposition.md"
MAX_TABLE_BYTES = 1 << 20

_NUMBER = re.compile(r"[-+\u2212]?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class PublishedIcc:
    icc_c1: float
    ci95: tuple[float, float]
    icc_a1: float
    ci_width: float
    status: str  # GR | MR | PR


@dataclass(frozen=True)
class PublishedBias:
    human_mean: float
    judge_mean: float
    bias: float
    mse: float


def _table_rows(text: str, first_header: str) -> list[list[str]]:
    """The body rows of the first Markdown table whose header's first cell contains `first_header`; cells stripped of
    emphasis (`**`, `*`)."""
    lines = text.splitlines()
    for start, line in enumerate(lines):
        cells = _cells(line)
        if cells and first_header in cells[0]:
            body = []
            for row in lines[start + 2 :]:
                if not row.lstrip().startswith("|"):
                    break
                body.append(_cells(row))
            return body
    raise DataError(f"no table headed {first_header!r} in the published results")


def _cells(line: str) -> list[str]:
    if not line.lstrip().startswith("|"):
        return []
    return [cell.replace("**", "").replace("*", "").strip() for cell in line.strip().strip("|").split("|")]


def _float(text: str, where: str) -> float:
    match = _NUMBER.search(text)
    if match is None:
        raise DataError(f"published {where}: {text!r} is not a number")
    return float(match.group(0).replace("\u2212", "-"))


def _read(key: str) -> str:
    path: Path = fetch_pinned(PINS, key).path
    data = path.read_bytes()[:MAX_TABLE_BYTES]
    return data.decode("utf-8", errors="replace")


def parse_human_table(text: str) -> dict[str, dict[str, float]]:
    """Response model (RESPONSE_MODELS key) -> {attribute: mean, "Avg": mean} as published (2 decimals)."""
    by_name = {name: key for key, name in RESPONSE_MODELS.items()}
    table: dict[str, dict[str, float]] = {}
    for cells in _table_rows(text, "Model"):
        if len(cells) != 2 + len(ATTRIBUTES) + 1:
            raise DataError(f"published human table: a row has {len(cells)} cells, not {2 + len(ATTRIBUTES) + 1}")
        model = by_name.get(cells[0])
        if model is None:
            raise DataError(f"published human table: unknown response model {cells[0]!r}")
        values = [_float(cell, f"human table, {cells[0]}") for cell in cells[2:]]
        table[model] = dict(zip((*ATTRIBUTES, "Avg"), values, strict=True))
    if not table:
        raise DataError("the published human table has no rows")
    return table


def parse_icc_table(text: str) -> dict[tuple[str, str], PublishedIcc]:
    """(judge, attribute) -> the published ICC row; a judge's name is given on its first row only."""
    by_label = {f.label: name for name, f in JUDGES.items()}
    table: dict[tuple[str, str], PublishedIcc] = {}
    judge: str | None = None
    for cells in _table_rows(text, "Judge"):
        if len(cells) != 8:
            raise DataError(f"published ICC table: a row has {len(cells)} cells, not 8")
        if cells[0]:
            judge = by_label.get(cells[0])
            if judge is None:
                raise DataError(f"published ICC table: unknown judge {cells[0]!r}")
        if judge is None or cells[2] not in ATTRIBUTES:
            raise DataError(f"published ICC table: a row without its judge or attribute ({cells[2]!r})")
        bounds = _NUMBER.findall(cells[4])
        status = re.search(r"\b(GR|MR|PR)\b", cells[7])
        if len(bounds) != 2 or status is None:
            raise DataError(f"published ICC table: {cells[4]!r} / {cells[7]!r} is not an interval and a status")
        table[judge, cells[2]] = PublishedIcc(
            icc_c1=_float(cells[3], "ICC(C,1)"),
            ci95=(float(bounds[0]), float(bounds[1])),
            icc_a1=_float(cells[5], "ICC(A,1)"),
            ci_width=_float(cells[6], "CI width"),
            status=status.group(1),
        )
    return table


def parse_bias_table(text: str) -> dict[tuple[str, str], PublishedBias]:
    """(judge, attribute) -> the published human mean, judge mean, bias and MSE (`3.742 → 3.990 → +0.248 → 0.923`);
    the judges' columns are in JUDGES' order (Claude, GPT-4o, Gemini, o4-mini)."""
    table: dict[tuple[str, str], PublishedBias] = {}
    for cells in _table_rows(text, "Attribute"):
        if len(cells) != 1 + len(JUDGES) or cells[0] not in ATTRIBUTES:
            raise DataError(f"published bias table: unexpected row {cells[:1]!r} with {len(cells)} cells")
        for judge, cell in zip(JUDGES, cells[1:], strict=True):
            numbers = [float(n.replace("\u2212", "-")) for n in _NUMBER.findall(cell)]
            if len(numbers) != 4:
                raise DataError(f"published bias table: {cell!r} is not human → judge → bias → MSE")
            table[judge, cells[0]] = PublishedBias(*numbers)
    return table


@dataclass(frozen=True)
class Published:
    human: Mapping[str, Mapping[str, float]]
    icc: Mapping[tuple[str, str], PublishedIcc]
    bias: Mapping[tuple[str, str], PublishedBias]


def load_published() -> Published:
    """The three published tables, read from the pinned Results/*.md files."""
    return Published(
        human=parse_human_table(_read(HUMAN_TABLE_KEY)),
        icc=parse_icc_table(_read(ICC_TABLE_KEY)),
        bias=parse_bias_table(_read(BIAS_TABLE_KEY)),
    )
