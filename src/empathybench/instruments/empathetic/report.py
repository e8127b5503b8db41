"""Empathetic responding's section of report.html, as data (report/html.py draws it)."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import number
from empathybench.instruments.protocol import Cell, FactsTable, ItemLink, ReportSection, StackedBarsChart

GOOD_PCT_DOMAIN = (0.0, 100.0)  # the headline is a percentage
RATINGS = ("Good", "Okay", "Bad")
RATING_COLORS = ("#009E73", "#E69F00", "#D55E00")  # Okabe-Ito green, orange, vermilion

SOURCE_LABELS = {
    "model": "this model",
    "human": "human replies",
    "chatgpt_empathy": "GPT-4",
    "llama_empathy": "LLaMA-2-70B-Chat",
    "gemini_empathy": "Gemini-1.0-Pro",
    "mixtral_empathy": "Mixtral-8x7B",
}
SELF_JUDGED_WARNING = (
    "No --judge was given: the model under test rated its own replies and the human replies. Use --judge with a "
    "strong model for a fair comparison."
)


def _shares(figures: Mapping[str, Any]) -> tuple[float, ...]:
    return (figures["pct_good"], figures["pct_okay"], figures["pct_bad"])


def _one_decimal(value: Any) -> str:
    return number(value, 1)


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    judged = result.get("judged") or {}
    reference = result.get("human_rater_reference") or {}
    judge = result.get("judge") or {}
    judge_name = (
        "the model itself" if judge.get("self_judging") else f"judge {(judge.get('identity') or {}).get('model')}"
    )
    rows = [
        (f"judge: {SOURCE_LABELS.get(source, source)}", _shares(figures))
        for source, figures in (judged.get("sources") or {}).items()
    ] + [
        (f"raters: {SOURCE_LABELS.get(source, source)}", _shares(figures))
        for source, figures in (reference.get("sources") or {}).items()
    ]
    first_item: dict[Any, Any] = {}
    for record in samples:
        first_item.setdefault(record.get("emotion"), record["item_id"])
    emotion_rows: list[tuple[Cell, ...]] = []
    for emotion, entry in (judged.get("emotions") or {}).items():
        sources = entry.get("sources") or {}
        model, human = sources.get("model") or {}, sources.get("human") or {}
        emotion_rows.append(
            (
                ItemLink(str(emotion), str(first_item.get(emotion, ""))),
                entry.get("valence"),
                entry.get("n"),
                model.get("pct_good"),
                human.get("pct_good"),
                model.get("good_increase_pct"),
                model.get("p_holm", model.get("p")),
            )
        )
    length = result.get("length") or {}
    return ReportSection(
        warning=SELF_JUDGED_WARNING if judge.get("self_judging") else None,
        charts=(
            StackedBarsChart(
                tuple(rows),
                segments=RATINGS,
                colors=RATING_COLORS,
                title="ratings of replies to the same prompts",
                caption=f"judge: rated by {judge_name}; raters: the study's crowd ratings of the released replies. "
                "The two are calibrated differently: compare within each group.",
            ),
        ),
        tables=(
            FactsTable(
                ("emotion", "valence", "prompts", "model Good %", "human replies Good %", "increase %", "p (Holm)"),
                tuple(emotion_rows),
                digits=(2, 2, 2, 1, 1, 1, 4),
                numeric=(2, 3, 4, 5, 6),
                title="Per emotion (same judge)",
            ),
        ),
        footnote=(
            f"Reply length: mean {_one_decimal(length.get('mean_words'))} words "
            f"(human replies {_one_decimal(length.get('human_reference_mean_words'))}), "
            f"{_one_decimal(length.get('share_over_97_words_pct'))}% over 97 words.",
        ),
    )


def sample_line(record: Mapping[str, Any]) -> str:
    """One record in the samples table: each rated source's label."""
    verdicts = record.get("verdicts") or {}
    return ", ".join(f"{SOURCE_LABELS.get(s, s)}: {v.get('label') or v.get('rating')}" for s, v in verdicts.items())
