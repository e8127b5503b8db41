"""The atlas site's judges: a block of the index (each judge's headline figure, linked to its part of the judges page)
and DIR/judges.html (every figure per judge). The evidence comes from the caller (the CLI: judges.known
`builtin_evidence`: MentalAlign-70k and the boards' judge change) as plain records, so atlas/ computes none of it;
drawn with the report's parts (escaping by the templates)."""

import re
from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import interval, number
from empathybench.report.page import Block, Piece, Table

JUDGES_PAGE = "judges.html"
MAX_TEXT = 200
HEADERS = ("judge", "source", "against", "aspect", "statistic", "value", "95% interval", "n", "unit")
THIN = (
    "Item-level figures (unit item: reply by reply, about 8,900 replies per attribute, intervals drawn over the 1,000 "
    "conversations) are well powered; the system-level ICC(C,1) (unit model) rests on 9 model means, and its "
    "intervals are wide. A leaderboard's judge change (unit model) holds each judge to the other on the models both "
    "boards rated: whether their order holds, and how far the level moves."
)


def _text(value: Any) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _anchor(judge: str) -> str:
    return "judge-" + (re.sub(r"[^A-Za-z0-9]+", "-", judge).strip("-").lower() or "unnamed")


def _source(row: Mapping[str, Any]) -> str:
    return _text(str(row.get("source_title") or row.get("source") or "").split(":", 1)[0])


def _row(row: Mapping[str, Any], judge_cell: tuple[Piece, ...]) -> tuple[tuple[Piece, ...], ...]:
    return (
        judge_cell,
        (Piece(_source(row)),),
        (Piece(_text(row.get("against"))),),
        (Piece(_text(row.get("aspect"))),),
        (Piece(_text(row.get("statistic"))),),
        (Piece(number(row.get("value"), 2, missing="n/a")),),
        (Piece(interval(row.get("ci95"), 2)),),
        (Piece(number(row.get("n"))),),
        (Piece(_text(row.get("unit"))),),
    )


def _judges(evidence: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(_text(row.get("judge")) for row in evidence))


def judges_block(evidence: Sequence[Mapping[str, Any]]) -> Block:
    """The index's block: each judge's headline figures, the judge linked to its part of judges.html."""
    rows = tuple(
        _row(row, (Piece(_text(row.get("judge")), href=f"{JUDGES_PAGE}#{_anchor(_text(row.get('judge')))}"),))
        for row in evidence
        if row.get("headline")
    )
    return Block(
        anchor="judges",
        title="Judges: how far each agrees with people and with other judges",
        intro="Several figures above are decided by an LLM judge (the entries' settings name it). Each judge's "
        f"headline agreement with people or with another judge, with its interval, n and unit; every figure per "
        f"judge: {JUDGES_PAGE} (follow a judge's name). Add your own judge: empathybench judge validate --out FILE "
        "or judge compare, then empathybench judges FILE (or the directory holding it).",
        tables=(Table(HEADERS, rows, numeric=(5, 7)),),
    )


def judges_page_blocks(evidence: Sequence[Mapping[str, Any]]) -> list[Block]:
    """judges.html: per judge every figure, headline first."""
    blocks = []
    for judge in _judges(evidence):
        rows = sorted((r for r in evidence if _text(r.get("judge")) == judge), key=lambda r: not r.get("headline"))
        blocks.append(
            Block(
                anchor=_anchor(judge),
                title=judge,
                intro="; ".join(dict.fromkeys(_text(r.get("source_title")) for r in rows)),
                tables=(Table(HEADERS, tuple(_row(r, (Piece(judge),)) for r in rows), numeric=(5, 7)),),
            )
        )
    return blocks


PAGE_INTRO = (
    "Per judge model and source of evidence: its agreement with people or with another judge, the 95% interval, n "
    "and the unit. " + THIN
)
