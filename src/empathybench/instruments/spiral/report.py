"""Spiral-Bench's section of report.html, as data (report/html.py draws it): the score with its interval, the
behaviour figures of the leaderboard's columns (protective, risky, the final judge's three), how each enters the
score, and one row per conversation linking to its transcript."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import cut_text, number
from empathybench.instruments.protocol import (
    ChartPoint,
    FactsTable,
    GroupedBarsChart,
    ItemLink,
    ReportSection,
    StripChart,
)
from empathybench.instruments.spiral.score import FINAL_KEYS

SCORE_DOMAIN = (0.0, 100.0)
TURN_CHARS = 4000  # per message in the report's transcript (the full text is in samples.jsonl)


def _point(label: str, entry: Mapping[str, Any], series: int = 0) -> ChartPoint:
    ci = entry.get("ci95") or [None, None]
    return ChartPoint(label, entry.get("value"), ci[0], ci[1], series)


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    metrics = result.get("metrics") or {}
    columns = [c for c in result.get("columns") or [] if c in metrics]
    parts = result.get("score_parts") or {}
    charts: list[Any] = []
    if "score_0_100" in metrics:
        charts.append(
            StripChart(
                (_point("this run", metrics["score_0_100"]),),
                domain=SCORE_DOMAIN,
                title="Spiral-Bench score (0-100, higher = safer) with its 95% interval over conversations",
                caption="Whether it stands beside the published leaderboard is said at the top of this section.",
            )
        )
    chunk_columns = [c for c in columns if c not in FINAL_KEYS]
    for kind, protective, series in (("Protective", True, 0), ("Risky", False, 1)):
        chosen = [c for c in chunk_columns if bool(parts.get(c, {}).get("protective")) is protective]
        if not chosen:
            continue
        charts.append(
            GroupedBarsChart(
                tuple(c.replace("_", " ") for c in chosen),
                (("this run", tuple(_point(c, metrics[c], series) for c in chosen)),),
                title=f"{kind} behaviours per judged chunk: summed incidence strength (1-3 each, capped at 5), mean "
                "over conversations, with 95% intervals",
                caption=("They raise the score. " if protective else "They lower the score. ")
                + "The model's first reply is never judged (upstream's chunking).",
            )
        )
    final_columns = [c for c in columns if c in FINAL_KEYS]
    if final_columns:
        charts.append(
            GroupedBarsChart(
                tuple(c.replace("_", " ") for c in final_columns),
                (("this run", tuple(_point(c, metrics[c]) for c in final_columns)),),
                title="The final judge's ratings of whole conversations (0-10), with 95% intervals",
                caption="off the rails: higher is worse; safety and social dexterity: higher is better.",
                domain=(0.0, 10.0),
            )
        )
    row = result.get("leaderboard_row") or {}
    score_rows = tuple(
        (
            column,
            row.get(column),
            parts.get(column, {}).get("cap"),
            "protective" if parts.get(column, {}).get("protective") else "risky",
            parts.get(column, {}).get("weight"),
            parts.get(column, {}).get("contribution"),
        )
        for column in columns
    )
    conversation_rows = tuple(
        (
            ItemLink(str(s.get("prompt_id")), str(s.get("item_id") or s.get("prompt_id"))),
            str(s.get("category") or ""),
            s.get("n_turns"),
            sum(1 for injection in s.get("injections_log") or [] if injection),
            s.get("n_chunks"),
            s.get("n_chunk_errors"),
            s.get("conversation_score_0_100"),
            *(_final(s, key) for key in FINAL_KEYS),
        )
        for s in samples
    )
    tables = [
        FactsTable(
            ("column", "value", "cap", "kind", "weight", "share of its weight"),
            score_rows,
            digits=(0, 3, 1, 0, 1, 3),
            numeric=(1, 2, 4, 5),
            title="The leaderboard row and how each figure enters the score (value / cap, clipped, inverted if risky)",
        ),
        FactsTable(
            ("opening", "category", "turns", "injections", "chunks", "chunk errors", "score", *FINAL_KEYS),
            conversation_rows,
            digits=1,
            numeric=(2, 3, 4, 5, 6, 7, 8, 9),
            title="Conversations",
        ),
    ]
    treated = (
        "left out of their conversations' means"
        if result.get("judge_errors") == "exclude"
        else "counted as chunks without incidences, as upstream scores a failed judge call"
    )
    counts = (
        f"{result.get('n_answered')} conversations, {result.get('n_chunks')} chunks judged "
        f"({result.get('n_chunk_errors')} never rated after every ask, {treated}), "
        f"{result.get('n_final_errors')} without a final judgement, {result.get('n_ended_early')} ended early."
    )
    return ReportSection(charts=tuple(charts), tables=tuple(tables), note=counts)


def _final(sample: Mapping[str, Any], key: str) -> float | None:
    judgement = sample.get("final_judgement")
    value = judgement.get(key) if isinstance(judgement, Mapping) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def sample_line(record: Mapping[str, Any]) -> str:
    """The samples table's one-line view of a conversation."""
    score = record.get("conversation_score_0_100")
    shown = f"score {number(float(score), 1)}" if isinstance(score, int | float) else "not scored"
    finals = ", ".join(
        f"{key.replace('_', ' ')} {number(value, 0)}"
        for key in FINAL_KEYS
        if (value := _final(record, key)) is not None
    )
    early = ", ended early" if record.get("ended_early") else ""
    return f"{record.get('prompt_id')} ({record.get('category')}), {record.get('n_turns')} turns{early}: {shown}" + (
        f"; {finals}" if finals else ""
    )


def sample_text(record: Mapping[str, Any]) -> str:
    """A conversation for the report: each message (with the injection its user-agent move had), then the final
    judge's reply (plain text)."""
    parts: list[str] = []
    injections = list(record.get("injections_log") or [])
    for index, turn in enumerate(record.get("transcript") or []):
        if not isinstance(turn, Mapping):
            continue
        role = "the model" if turn.get("role") == "assistant" else "the user agent"
        injected = injections[index] if index < len(injections) else ""
        header = f"--- {role}" + (f" (injection: {injected})" if injected else "") + " ---"
        parts.append(f"{header}\n{cut_text(turn.get('content'), TURN_CHARS)}")
    if record.get("final_judge_text"):
        parts.append(f"--- the final judge ---\n{cut_text(record.get('final_judge_text'), TURN_CHARS)}")
    return "\n\n".join(parts)
