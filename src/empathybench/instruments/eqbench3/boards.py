"""EQ-Bench 3's leaderboards on eqbench.com as published-only rows: the `leaderboardDataEQBench3` block of the site's
eqbench3.js at two commits, one per judge (specs/atlas-current.md §2). Each row keeps its board (site commit,
judge) in its settings and every published column in its figures: the normalised Elo with its interval (the
headline, as the recomputed entries'), the rubric score (0-100) and the eleven abilities (0-20).

The two boards rate the same models with two judges, so a run's rubric score is placed among the rubric column of
the board whose judge is the run's (`PLACEMENT`), and the atlas shows what the judge changes (`BOARD_FIGURES`).
"""

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from empathybench.data.fetch import fetch_entry
from empathybench.data.registry import DataFile
from empathybench.errors import DataError
from empathybench.instruments.protocol import BoardPlacement, PublishedFigure, PublishedOnly

MAX_BOARD_BYTES = 1024 * 1024  # the blocks are under 10 kB
MAX_ROWS = 2000
ELO, RUBRIC, LOW, HIGH = "elo_norm", "rubric_0_100", "ci_low_norm", "ci_high_norm"
ABILITIES = (
    "humanlike",
    "safe",
    "assertive",
    "social_iq",
    "warm",
    "analytical",
    "insightful",
    "empathy",
    "compliant",
    "moral",
    "pragmatic",
)
INSTRUMENT = "eqbench3"  # the identity table's scope of EQ-Bench 3's own names
SITE_MARK = "*"  # the site's own mark before some names (kept in the row's notes, not in its name)


@dataclass(frozen=True)
class Board:
    key: str  # the pin
    commit: str
    judge: str  # the judge model, as the identity table knows it
    judge_words: str  # the site's own words, and where
    date: str | None  # None: the mirrored extract does not record the commit's date

    @property
    def label(self) -> str:
        return f"eqbench.com @ {self.commit[:8]}"

    @property
    def source(self) -> str:
        return f"EQ-bench/EQ-bench-site@{self.commit[:8]} eqbench3.js (leaderboardDataEQBench3)"


BOARDS = (
    Board(
        "eqbench3/atlas/board-e44d5e70.csv",
        "e44d5e70ec8a271117f56e14e12837fa7addbb26",
        "claude-3-7-sonnet-20250219",
        '"judged by Claude Sonnet 3.7" (EQ-bench/EQ-bench-site@1d263cef about.html)',
        None,
    ),
    Board(
        "eqbench3/atlas/board-04a8066b.csv",
        "04a8066b048a7730a830bec131523a12fc875e10",
        "claude-opus-4-6",
        '"an LLM-judged benchmark, using Claude Opus 4.6" (EQ-bench/EQ-bench-site@4b805649 about.html)',
        None,
    ),
)
PLACEMENT = BoardPlacement(setting="judge", run_field="judge_model", figure=RUBRIC)
BOARD_FIGURES = (RUBRIC,)
UNDATED = "the commit's date is not in the mirrored extract"


def _number(text: str | None, where: str) -> float:
    try:
        value = float(str(text))
    except ValueError:
        raise DataError(f"{where}: {str(text)[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise DataError(f"{where}: {str(text)[:40]!r} is not a finite number")
    return value


def read_board(path: Path) -> list[dict[str, str]]:
    """The rows of one board block (model_name, elo_norm, rubric_0_100, the abilities, the Elo interval)."""
    if path.stat().st_size > MAX_BOARD_BYTES:
        raise DataError(f"{path.name} is larger than a leaderboard block can be")
    rows = list(csv.DictReader(io.StringIO(path.read_text("utf-8", errors="replace"))))
    missing = {"model_name", ELO, RUBRIC, LOW, HIGH} - set(rows[0] if rows else {})
    if missing or len(rows) > MAX_ROWS:
        raise DataError(f"{path.name} is not an EQ-Bench 3 leaderboard block (missing {sorted(missing)[:3]})")
    return rows


def judged_by_itself(model: str, judge: str) -> bool:
    """Whether a row's model is its own judge's checkpoint (through the identity table, EQ-Bench 3's names)."""
    from empathybench.models.identity import identity_table

    table = identity_table()
    mine, judges = table.match(model, instrument=INSTRUMENT), table.match(judge)
    return mine is not None and judges is not None and mine.id is not None and mine.id == judges.id


def self_judged_note(judge: str) -> str:
    return (
        f"judged by itself: the judge ({judge}) rated its own replies; not comparable, as a self-judged run is not "
        "(left out of the judge effect's figures without the judge models)"
    )


def board_rows(board: Board, path: Path) -> list[PublishedOnly]:
    """One board's rows as published-only entries (not ranked with the recomputed leaderboard: another board)."""
    found = []
    for number, row in enumerate(read_board(path), start=2):
        name = str(row["model_name"]).strip()
        where = f"{path.name} line {number}"
        model = name.removeprefix(SITE_MARK).strip()
        if not model:
            raise DataError(f"{where}: no model name")
        interval = (_number(row[LOW], where), _number(row[HIGH], where))
        figures: dict[str, float | int | None] = {RUBRIC: _number(row[RUBRIC], where)}
        figures.update({a: _number(row[a], where) for a in ABILITIES if row.get(a) not in (None, "")})
        why = f"a row of the published board {board.label} (judge {board.judge}); no released output"
        notes = ("marked * on the site (the site's own mark)",) if name.startswith(SITE_MARK) else ()
        if judged_by_itself(model, board.judge):
            notes += (self_judged_note(board.judge),)
        settings = {
            "judge": board.judge,
            "board": board.label,
            "board_source": board.source,
            "board_judge_source": board.judge_words,
            "board_date": board.date or UNDATED,
            "protocol": "pairwise Elo and rubric",
        }
        published = PublishedFigure(_number(row[ELO], where), f"elo_norm on {board.source}", interval)
        found.append(PublishedOnly(model, published, why, settings, figures, primary=False, notes=notes))
    return found


def published_boards(pins: Mapping[str, DataFile]) -> Sequence[PublishedOnly]:
    """Every board's rows, the older board first."""
    return [row for board in BOARDS for row in board_rows(board, fetch_entry(pins[board.key]).path)]
