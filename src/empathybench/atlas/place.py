"""A user's run among the published models: per instrument, its headline in the atlas's distribution (rank among n,
the nearest published models) and, where its model is an atlas model, which entry that is.

A run is read through the one run-directory reader (rundir.reader); its figure is the summary metric the atlas names
for the instrument (`summary_metric`), so it is compared with the same quantity. A run whose summary says it is not
comparable with the published protocol (a `comparable_with_published` of false, a self-judged or self-simulated
demo) is placed apart: ranked, but marked not comparable, with the reason.
"""

from collections.abc import Mapping
from typing import Any

from empathybench.models.identity import identity_table
from empathybench.rundir.reader import RunData

NEAREST = 3


def figure_of(entry: Mapping[str, Any]) -> tuple[float | None, str]:
    """An entry's figure for ranking: the recomputed one, else (published-only) the published one."""
    if entry.get("value") is not None:
        return float(entry["value"]), "recomputed"
    published = entry.get("published") or {}
    value = published.get("value")
    return (float(value), "published") if isinstance(value, int | float) else (None, "none")


def run_metric(run: RunData, instrument: str, metric_key: str) -> Mapping[str, Any] | None:
    entry = (run.summary.get("benchmarks") or {}).get(instrument)
    if not isinstance(entry, dict):
        return None
    metric = (entry.get("metrics") or {}).get(metric_key)
    return metric if isinstance(metric, dict) and isinstance(metric.get("value"), int | float) else None


def not_comparable_because(run: RunData, instrument: str) -> str | None:
    """Why a run's figure cannot stand beside the published ones, as its own summary says (None: nothing says so)."""
    entry = (run.summary.get("benchmarks") or {}).get(instrument) or {}
    if entry.get("comparable_with_published") is False:
        return str(entry.get("comparability") or "its summary says it is not comparable with the published runs")
    judge = entry.get("judge") or {}
    if isinstance(judge, dict) and judge.get("self_judging"):
        return "self-judged"
    if entry.get("self_simulated"):
        return "self-simulated"
    return None


def place_run(atlas: Mapping[str, Any], run: RunData) -> list[dict[str, Any]]:
    """The run's place in each instrument of the atlas it ran (instruments whose figures a run cannot be set beside
    are left out)."""
    model = str(run.summary.get("model", ""))
    match = identity_table().match(model) if model else None
    placements = []
    for instrument, described in atlas["instruments"].items():
        metric_key = described.get("summary_metric")
        metric = run_metric(run, instrument, metric_key) if metric_key else None
        if metric is None:
            continue
        value = float(metric["value"])
        entries = [e for e in atlas["entries"] if e["instrument"] == instrument and e["primary"]]
        figures = [(e, figure) for e in entries if (figure := figure_of(e)[0]) is not None]
        higher_is_better = described.get("higher_is_better")
        better = [e for e, figure in figures if (figure < value if higher_is_better is False else figure > value)]
        nearest = sorted(figures, key=lambda pair: (abs(pair[1] - value), pair[0]["model"]))[:NEAREST]
        same = []
        if match is not None:
            same = [
                e
                for e in entries
                if (match.id is not None and e["model_id"] == match.id)
                or (match.id is None and e["family"] == match.family)
            ]
        reason = not_comparable_because(run, instrument)
        placements.append(
            {
                "instrument": instrument,
                "run": str(run.directory),
                "model": model,
                "value": value,
                "ci95": metric.get("ci95"),
                "n": metric.get("n"),
                "rank": len(better) + 1,
                "among": len(figures) + 1,
                "comparable": reason is None,
                "not_comparable_because": reason,
                "nearest": [
                    {"model": e["model"], "model_id": e["model_id"], "value": figure, "status": e["status"]}
                    for e, figure in nearest
                ],
                "matches": [
                    {
                        "model": e["model"],
                        "model_id": e["model_id"],
                        "relation": match.relation if match is not None else None,
                        "value": figure_of(e)[0],
                        "status": e["status"],
                    }
                    for e in same
                ],
            }
        )
    return placements
