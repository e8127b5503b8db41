"""EQ-Bench 3's section of report.html, as data (report/html.py draws it): headline with interval beside the published
rows of the judge's era, per-type split, ability columns, style traits and the per-task table linking to each task's
transcript in the samples (turns, debrief, the judge's rubric text: `sample_text`)."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import cut_text, number
from empathybench.instruments.protocol import ChartPoint, FactsTable, ItemLink, ReportSection, StripChart

SCORE_DOMAIN = (0.0, 100.0)  # the rubric score: 5 x the 0-20 criterion mean


def _interval(metric: Mapping[str, Any]) -> tuple[float | None, float | None]:
    ci = metric.get("ci95") or [None, None]
    return ci[0], ci[1]


def _error_text(sample: Mapping[str, Any]) -> str:
    error = sample.get("task_error") or sample.get("error")
    text = error.get("message", "") if isinstance(error, Mapping) else str(error or "")
    return str(text)[:200]


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    metrics = result.get("metrics") or {}
    points = []
    for key, label in (("score", "all tasks"), *((k, k.removeprefix("score_")) for k in metrics if k != "score")):
        if key not in metrics:
            continue
        low, high = _interval(metrics[key])
        points.append(ChartPoint(label, metrics[key].get("value"), low, high, 0 if key == "score" else 1))
    abilities = result.get("abilities") or {}
    ability_rows = tuple(
        (name, entry.get("value"), *_interval(entry), entry.get("n")) for name, entry in abilities.items()
    )
    trait_rows = tuple(
        (name, entry.get("value"), *_interval(entry), entry.get("n"))
        for name, entry in (result.get("style_traits") or {}).items()
    )
    task_rows = tuple(
        (
            ItemLink(str(s.get("scenario_id")), str(s.get("item_id") or s.get("scenario_id"))),
            str(s.get("type")),
            str(s.get("task_status") or s.get("status")),
            len(s.get("turns") or []),
            s.get("mean_section_coverage"),
            s.get("score_0_20"),
            _error_text(s),
        )
        for s in samples
    )
    counts = result.get("counts") or {}
    charts = [
        StripChart(
            tuple(points),
            domain=SCORE_DOMAIN,
            title="EQ-Bench 3 rubric score (0-100) with 95% intervals over tasks, overall and by task type",
            caption=f"Judge: {result.get('judge_model') or 'unknown'}; {result.get('judge_era') or ''}. "
            "Rubric numbers from different judges are not comparable.",
        )
    ]
    published = result.get("published_rubric")
    headline = metrics.get("score")
    note = None
    if isinstance(published, Mapping) and isinstance(headline, Mapping):
        low, high = _interval(headline)
        rows = [ChartPoint(str(m["label"]), m["value"], series=1) for m in published.get("models") or []]
        rows.append(ChartPoint("this run", headline.get("value"), low, high, 0))
        charts.append(
            StripChart(
                tuple(sorted(rows, key=lambda p: -(p.value or 0.0))),
                domain=SCORE_DOMAIN,
                title=f"This run beside the {published.get('label')}",
                caption=f"Published: {published.get('source')}. Same judge era, so the scales match; the published "
                "rows have no interval.",
            )
        )
    else:
        note = (
            "No published leaderboard rows are shown: the judge is of no published judge era (Claude 3.7 Sonnet or "
            "Claude Opus 4.6), and rubric scales differ across judges."
        )
    return ReportSection(
        note=note,
        charts=tuple(charts),
        tables=(
            FactsTable(
                ("judge", "comparable with", "tasks scored", "errors (excluded, as upstream)"),
                (
                    (
                        result.get("judge_model"),
                        result.get("judge_era"),
                        f"{counts.get('rubric_scored', 0)}/{result.get('n_items')}",
                        counts.get("error", 0),
                    ),
                ),
            ),
            FactsTable(
                ("ability (0-20)", "mean", "95% low", "95% high", "tasks"),
                ability_rows,
                numeric=(1, 2, 3, 4),
                title="The leaderboard's 11 ability columns",
            ),
            FactsTable(
                ("style trait (0-20)", "mean", "95% low", "95% high", "tasks"),
                trait_rows,
                numeric=(1, 2, 3, 4),
                title="The 12 style traits (not in the score; neither higher nor lower is better)",
            ),
            FactsTable(
                ("task", "type", "status", "turns", "section coverage", "score 0-20", "error"),
                task_rows,
                numeric=(3, 4, 5),
                title="Tasks (each links to its transcript, debrief and the judge's rubric text below)",
            ),
        ),
    )


def sample_line(record: Mapping[str, Any]) -> str:
    """The samples table's one-line view of a task."""
    score = record.get("score_0_20")
    shown = f"{number(float(score), 2)}/20" if isinstance(score, int | float) else "not scored"
    coverage = record.get("mean_section_coverage")
    covered = f", section coverage {number(float(coverage), 2)}" if isinstance(coverage, int | float) else ""
    return (
        f"scenario {record.get('scenario_id')} ({record.get('type')}), {len(record.get('turns') or [])} turns, "
        f"{record.get('task_status')}: {shown}{covered}"
    )


TURN_CHARS = 6000  # per turn, debrief and judge text in the report (the full text is in samples.jsonl)


def sample_text(record: Mapping[str, Any]) -> str:
    """A task's transcript for the report: each reply, the debrief and the judge's rubric text (plain text)."""
    parts: list[str] = []
    for index, turn in enumerate(record.get("turns") or [], start=1):
        reply = turn.get("reply") if isinstance(turn, Mapping) else None
        parts.append(f"--- turn {index}: the model's reply ---\n{cut_text(reply, TURN_CHARS)}")
    debrief = record.get("debrief")
    if isinstance(debrief, Mapping):
        parts.append(f"--- debrief ---\n{cut_text(debrief.get('text'), TURN_CHARS)}")
    rubric = record.get("rubric")
    if isinstance(rubric, Mapping):
        parts.append(f"--- the judge's rubric reply ---\n{cut_text(rubric.get('judge_text'), TURN_CHARS)}")
    return "\n\n".join(parts)
