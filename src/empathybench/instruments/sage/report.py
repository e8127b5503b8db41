"""SAGE's section of report.html, as data (report/html.py draws it): every person's emotion trajectory, the final
states, how conversations ended, and the published leaderboard beside the run."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.instruments.protocol import (
    ChartLine,
    ChartPoint,
    FactsTable,
    ReportSection,
    StackedBarsChart,
    StripChart,
    TrajectoryChart,
    TrajectoryGroup,
)
from empathybench.instruments.sage.score import PUBLISHED_LEADERBOARD, PUBLISHED_SIMULATOR, STATES

EMOTION_DOMAIN = (0.0, 100.0)
# The emotion states' lower bounds (SAGE/simulator_response.py emo_count; Emotion-F below 10), drawn as lines.
STATE_LINES = (("S", 100.0), ("A", 70.0), ("B", 40.0), ("C / F", 10.0))
TURN_CHARS = 4000  # per turn in the report's transcript (the full text is in samples.jsonl)


def trajectory_group(name: str, trajectories: Sequence[Sequence[float]], rounds: int) -> TrajectoryGroup:
    """One run's trajectories over `rounds` rounds, with the mean that holds each ended conversation at its final
    emotion (so the mean at the last round is the Sentient score of those conversations)."""
    paths = tuple(tuple(list(path[:rounds]) + [None] * (rounds - len(path[:rounds]))) for path in trajectories if path)
    held = [list(path[:rounds]) + [path[:rounds][-1]] * (rounds - len(path[:rounds])) for path in trajectories if path]
    mean = tuple(sum(p[i] for p in held) / len(held) for i in range(rounds)) if held else None
    return TrajectoryGroup(name, paths, mean)


def trajectory_chart(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> TrajectoryChart:
    """The trajectories of one run, or of several (a comparison), from their summaries' `trajectories`."""
    rounds = max((int(summary.get("rounds_limit") or 0) for _, summary in runs), default=0) or max(
        (len(t) for _, summary in runs for t in (summary.get("trajectories") or {}).values()), default=1
    )
    groups = tuple(
        trajectory_group(name, [list(t) for t in (summary.get("trajectories") or {}).values()], rounds)
        for name, summary in runs
    )
    return TrajectoryChart(
        x_labels=tuple(str(i) for i in range(1, rounds + 1)),
        groups=groups,
        title="the person's emotion after each of their lines, per conversation",
        caption=(
            "Round 1 is the preset first line (emotion 40). A thin line ends where its conversation ended (a goodbye, "
            "100 reached, below 10); the bold mean holds each ended conversation at its final emotion, so its last "
            "point is the Sentient score. Failed conversations are left out."
        ),
        domain=EMOTION_DOMAIN,
        references=tuple(ChartLine(value, label, "dotted") for label, value in STATE_LINES),
    )


def _leaderboard_chart(result: Mapping[str, Any]) -> StripChart:
    metric = (result.get("metrics") or {}).get("sentient_score") or {}
    ci = metric.get("ci95") or [None, None]
    comparable = bool(result.get("comparable_with_published"))
    label = "this run" if comparable else "this run (not comparable)"
    points = [ChartPoint(label, metric.get("value"), ci[0], ci[1], series=1)]
    points += [ChartPoint(name, score) for name, score, _, _ in PUBLISHED_LEADERBOARD]
    return StripChart(
        points=tuple(points),
        domain=EMOTION_DOMAIN,
        title=f"Sentient score beside the published leaderboard (simulator {PUBLISHED_SIMULATOR})",
        caption="Whether this run stands beside the leaderboard is said at the top of this section.",
    )


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    states = result.get("states") or {}
    n_states = sum(states.values()) or 1
    charts: list[Any] = [trajectory_chart([("this run", result)])]
    if states:
        charts.append(
            StackedBarsChart(
                rows=(("final state", tuple(100.0 * states.get(s, 0) / n_states for s in STATES)),),
                segments=STATES,
                title="where the conversations ended (share of people per final state)",
                colors=("#009E73", "#56B4E9", "#c9ccd4", "#E69F00", "#D55E00"),
            )
        )
    charts.append(_leaderboard_chart(result))
    figures = FactsTable(
        (
            "Sentient score",
            "Success (Emotion-S)",
            "Failure (Emotion-F)",
            "people",
            "failed conversations",
            "mean turns",
        ),
        (
            (
                result.get("score"),
                result.get("success"),
                result.get("failure"),
                result.get("n_completed"),
                result.get("n_failed_conversations"),
                result.get("mean_turns"),
            ),
        ),
        digits=2,
        numeric=(0, 1, 2, 3, 4, 5),
    )
    endings = FactsTable(
        ("how the conversations ended", "conversations"),
        tuple((reason, count) for reason, count in (result.get("stop_reasons") or {}).items()),
        numeric=(1,),
        title="stop reasons",
    )
    return ReportSection(charts=tuple(charts), tables=(figures, endings))


def sample_line(record: Mapping[str, Any]) -> str:
    """The samples table's one-line view of a conversation."""
    if record.get("conversation_status") == "failed":
        return f"failed after {record.get('rounds')} rounds: {record.get('stop_reason')}"
    return (
        f"final emotion {record.get('final_emotion')} ({record.get('final_state')}), {record.get('rounds')} rounds, "
        f"ended: {record.get('stop_reason')}"
    )


def _bounded(text: object, limit: int) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[:limit] + f" [... {len(text) - limit} more characters]"


def sample_text(record: Mapping[str, Any]) -> str:
    """A conversation's transcript: each line with the person's emotion after it, and each analysis's Change."""
    parts: list[str] = []
    for turn in record.get("turns") or ():
        if not isinstance(turn, Mapping):
            continue
        state = turn.get("state") or {}
        if turn.get("speaker") == "simulator":
            hooks = [h for h in turn.get("hooks") or () if isinstance(h, Mapping)]
            change = next(((h.get("fields") or {}).get("change") for h in hooks if h.get("name") == "analysis"), None)
            moved = f", change {change:+d}" if isinstance(change, int) else ""
            head = f"--- the person (emotion {state.get('emotion')}, {state.get('state')}{moved}) ---"
        else:
            head = "--- the model ---"
        parts.append(f"{head}\n{_bounded(turn.get('text'), TURN_CHARS)}")
    if record.get("conversation_status") == "failed":
        parts.append(f"--- failed: {record.get('stop_reason')} ---")
    return "\n\n".join(parts)
