"""What report.html and the comparison page show, as plain data (strings, numbers already formatted by
empathybench.formatting, and charts that report/svg.py drew and escaped). The templates in report/templates lay it
out with autoescape on, so every string here, whoever wrote it (a model, a server, a file), reaches the page escaped.

A new part of a page is new data, not new HTML: a table goes into a `Block`, a fact into `RunPage.facts`, an
instrument's charts and tables into a `DrawnSection`."""

from dataclasses import dataclass, field

from markupsafe import Markup


@dataclass(frozen=True)
class Piece:
    """A run of text in a cell or a line: plain, a link, a span with a class, bold or code."""

    text: str
    href: str | None = None  # a link ("#anchor")
    cls: str = ""  # the class of the span (or of the link)
    title: str = ""  # a link's hover text
    strong: bool = False
    code: bool = False


Cell = tuple[Piece, ...]


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    numeric: tuple[int, ...] = ()  # columns aligned as numbers
    title: str | None = None  # a heading above the table
    # Long notes, numbered under the table (a cell cites one as a link to f"#{anchor}-note-{number}"): in a cell, a
    # long note would squeeze every other column into broken numbers.
    notes: tuple[str, ...] = ()
    anchor: str = ""


@dataclass(frozen=True)
class DrawnChart:
    svg: Markup  # drawn by report/svg.py, which escaped every label it placed
    caption: str = ""


@dataclass(frozen=True)
class DrawnSection:
    """An instrument's ReportSection ready to lay out: its charts drawn, its cells formatted."""

    charts: tuple[DrawnChart, ...] = ()
    tables: tuple[Table, ...] = ()
    note: str | None = None
    warning: str | None = None
    footnote: str | None = None


@dataclass(frozen=True)
class Block:
    """A titled part of a page: an h2 with its anchor, a short muted introduction, tables and drawn sections."""

    anchor: str
    title: str
    intro: str = ""
    tables: tuple[Table, ...] = ()
    sections: tuple[DrawnSection, ...] = ()


@dataclass(frozen=True)
class Status:
    cls: str
    text: str


@dataclass(frozen=True)
class ProfileCard:
    """One instrument's headline in the EI profile (value None: no headline figure, `note` says why)."""

    name: str
    title: str
    anchor: str  # the instrument's section
    status: Status
    question: str
    value: str | None
    note: str
    samples_anchor: str = ""
    unit: str = ""
    ci: str = ""
    n: str = ""
    label: str = ""
    reference: str = ""
    chart: Markup = field(default_factory=Markup)


@dataclass(frozen=True)
class SampleRow:
    anchor: str
    item_id: str
    parsed: str
    failed: bool  # the item ended in an error (`parsed` holds it)
    score: str
    parse_error: str
    calls: int
    reply: str
    truncated: bool
    reasoning: str | None
    transcript: str | None = None  # the instrument's full view of the record (every turn of a conversation)


@dataclass(frozen=True)
class JudgePart:
    """What is known about a judged instrument's judge (report/judge_notes.py): one line, the evidence rows for its
    model (None: there are none) and the commands that would add some."""

    line: str
    table: Table | None
    commands: str = ""


@dataclass(frozen=True)
class InstrumentPart:
    """An instrument's section of report.html: statuses, its drawn ReportSection, figures and samples."""

    name: str
    anchor: str
    title: str
    statuses: tuple[Status, ...]
    reasons: tuple[str, ...]
    skipped: str | None  # why the instrument did not run (None: it ran)
    score_name: str = ""
    headline_note: str = ""
    answers: str = ""  # the parse and truncated rates, one muted line
    published: str = ""  # its place among the published models (the atlas), one line; the page's block has more
    judge: JudgePart | None = None  # what is known about its judge (an instrument whose records called one)
    body: DrawnSection | None = None
    metrics: Table | None = None
    samples_anchor: str = ""
    samples: tuple[SampleRow, ...] = ()


@dataclass(frozen=True)
class RunPage:
    title: str
    heading: str
    facts: tuple[str, ...]  # the header line, joined with " · "
    banners: tuple[str, ...]
    toc: tuple[Piece, ...]
    cards: tuple[ProfileCard, ...]
    instruments: tuple[InstrumentPart, ...]
    blocks: tuple[Block, ...]  # below the instruments: repeats, the run's facts and data files
    cost: str | None = None  # tokens and cost of the model and the judge, one line under the header's facts


@dataclass(frozen=True)
class RunRef:
    key: str  # A, B, ...: the chart labels
    label: str
    directory: str


@dataclass(frozen=True)
class OverlayCard:
    name: str
    title: str
    label: str
    chart: Markup


@dataclass(frozen=True)
class ComparisonPage:
    title: str
    runs: tuple[RunRef, ...]
    warnings: tuple[str, ...]
    overlay: tuple[OverlayCard, ...]
    blocks: tuple[Block, ...]  # the leaderboard, the paired differences, and whatever comes as a table


# The run among the published models (the atlas's standing rows, computed by whoever writes the report): its columns
# and the line above them, the same in report.html and report.md.
STANDING_HEADERS = ("instrument", "this run", "rank", "nearest published models", "reproduction")
STANDING_INTRO = (
    "Each headline placed among the published models, recomputed from their released outputs (the atlas: "
    "empathybench atlas); where this model is one of them, the paired check against its published run."
)
NO_PUBLISHED_RUN = "no published run of this model"
