"""MindEval's section of report.html and of a comparison of runs, as data (report/html.py draws it): the
per-criterion profile with intervals, the judge's left-out criteria, the Overall score by symptom severity, and, for
two or more runs, upstream's paired ranking test."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import cut_text
from empathybench.instruments.mindeval.parse import CRITERIA, OVERALL, SHORT
from empathybench.instruments.mindeval.ranking import rank_runs
from empathybench.instruments.protocol import ChartPoint, FactsTable, GroupedBarsChart, ReportSection

SCALE = (1.0, 6.0)
CATEGORIES = (*(SHORT[name] for name in CRITERIA), "Overall")
METRIC_KEYS = (*(SHORT[name].lower() for name in CRITERIA), "overall")
TURN_CHARS = 4000  # per turn in the report's transcript (the whole text is in samples.jsonl)
NOT_PUBLISHED = (
    "MindEval's published figures (12 models, every average below 4 of 6) are not available here: the paper's "
    "results table was not retrieved, so no run is set beside them and no reproduction is claimed."
)


def _points(result: Mapping[str, Any], series: int) -> tuple[ChartPoint, ...]:
    metrics = result.get("metrics") or {}
    points = []
    for label, key in zip(CATEGORIES, METRIC_KEYS, strict=True):
        metric = metrics.get(key) or {}
        ci = metric.get("ci95") or [None, None]
        points.append(ChartPoint(label, metric.get("value"), ci[0], ci[1], series=series))
    return tuple(points)


def profile_chart(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> GroupedBarsChart:
    return GroupedBarsChart(
        categories=CATEGORIES,
        series=tuple((name, _points(result, index)) for index, (name, result) in enumerate(runs)),
        title="the judge's rating per criterion (mean over conversations, 1-6, with 95% intervals)",
        caption="CAC clinical accuracy & competence, EPC ethical & professional conduct, AR assessment & response, "
        "TRA therapeutic relationship & alliance, ASCQ AI-specific communication quality; Overall = their mean.",
        unit="1-6",
        domain=SCALE,
    )


def _by_severity(result: Mapping[str, Any], position: int) -> list[tuple[str, float, int]]:
    overall = result.get("overall_by_profile") or {}
    groups: dict[str, list[float]] = {}
    for item, levels in (result.get("severity") or {}).items():
        if item in overall and isinstance(levels, list) and len(levels) > position:
            groups.setdefault(str(levels[position]), []).append(float(overall[item]))
    ordered = sorted(groups.items(), key=lambda entry: (_severity_rank(entry[0]), entry[0]))
    return [(level, sum(values) / len(values), len(values)) for level, values in ordered]


SEVERITY_WORDS = ("minimal", "mild", "moderate", "severe")  # the profiles' levels, least first


def _severity_rank(level: str) -> int:
    words = level.lower().split()
    return next((rank for rank, word in enumerate(SEVERITY_WORDS) if word in words), len(SEVERITY_WORDS))


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    metrics = result.get("metrics") or {}
    missing = result.get("missing_criteria") or {}
    rows = []
    for name, key in zip((*CRITERIA, OVERALL), METRIC_KEYS, strict=True):
        metric = metrics.get(key) or {}
        ci = metric.get("ci95") or [None, None]
        left_out = missing.get(name) if name in CRITERIA else result.get("n_missing_criteria")
        rows.append((name, metric.get("value"), ci[0], ci[1], left_out))
    figures = FactsTable(
        ("criterion", "mean (1-6)", "95% low", "95% high", "left out by the judge (given 3)"),
        tuple(rows),
        numeric=(1, 2, 3, 4),
    )
    severity_rows = [(f"depressive: {level}", mean, n) for level, mean, n in _by_severity(result, 0)] + [
        (f"anxious: {level}", mean, n) for level, mean, n in _by_severity(result, 1)
    ]
    severity = FactsTable(
        ("member's symptoms", "mean Overall", "conversations"),
        tuple(severity_rows),
        numeric=(1, 2),
        title="Overall score by the member's symptom severity",
    )
    # The label is said once, by the headline note above the section (as every conversational instrument's).
    return ReportSection(
        charts=(profile_chart([("this run", result)]),),
        tables=(figures, severity),
        note=NOT_PUBLISHED,
        footnote=(
            f"{result.get('n_scored')} of {result.get('n_items')} conversations scored; "
            f"{result.get('n_missing_criteria') or 0} criterion scores left out by the judge were given 3 "
            "(upstream's parse).",
        ),
    )


def comparison_section(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> ReportSection | None:
    """The runs' criterion profiles side by side and upstream's ranking test on their shared conversations."""
    scores = {name: dict(result.get("overall_by_profile") or {}) for name, result in runs}
    if len(scores) < 2 or len(scores) != len(runs):  # two runs with the same label cannot be told apart
        return ReportSection(charts=(profile_chart(runs),))
    ranking = rank_runs(scores)
    table = FactsTable(
        ("run", "rank (cluster)", "mean Overall on the shared conversations"),
        tuple((name, ranking["rank"][name], ranking["means"][name]) for name, _ in runs),
        numeric=(1, 2),
        title="ranking: one-sided paired t-test, greedy clusters at p < 0.05 (upstream's rank_systems)",
    )
    p_rows = tuple(
        (first, second, ranking["p_better"][first][second])
        for first, _ in runs
        for second, _ in runs
        if first != second
    )
    p_table = FactsTable(
        ("run", "better than", "one-sided p"),
        p_rows,
        digits=4,
        numeric=(2,),
        title=f"paired t-tests on {ranking['n_shared']} shared conversations",
    )
    return ReportSection(charts=(profile_chart(runs),), tables=(table, p_table))


def sample_line(record: Mapping[str, Any]) -> str:
    scores = record.get("scores") or {}
    parts = [f"{SHORT[name]} {scores.get(name)}" for name in CRITERIA]
    missing = record.get("missing_criteria") or []
    left = f"; left out: {', '.join(SHORT.get(m, m) for m in missing)} (given 3)" if missing else ""
    return f"Overall {record.get('overall')} ({', '.join(parts)}), {record.get('rounds')} rounds{left}"


def sample_text(record: Mapping[str, Any]) -> str:
    """The conversation as the judge read it: the member's synthetic Hello, then the clinician and the member."""
    parts = []
    for message in record.get("interaction") or ():
        if isinstance(message, Mapping):
            who = "the member" if message.get("role") == "user" else "the clinician (the model)"
            parts.append(f"--- {who} ---\n{cut_text(message.get('content'), TURN_CHARS)}")
    return "\n\n".join(parts)
