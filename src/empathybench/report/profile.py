"""The EI profile: one headline per instrument with its interval and its human (or published) reference."""

from typing import Any

from empathybench.report.validity import validity_of

# Instrument order and titles of the profile; each benchmark names its headline metric in its summary.
INSTRUMENTS: dict[str, str] = {
    "eqbench": "EQ-Bench",
    "seceu": "SECEU",
    "emotionbench": "EmotionBench",
    "giebench": "GIEBench",
    "empathetic": "Empathetic responding",
}

QUESTIONS: dict[str, str] = {
    "eqbench": "How well does it read the intensity of a character's emotions?",
    "seceu": "How close are its emotion judgements to people's, on the human EQ scale?",
    "emotionbench": "Does its mood move as people's does after imagining a situation?",
    "giebench": "Does taking a group identity's standpoint make it more empathetic?",
    "empathetic": "Are its replies to people's emotional messages rated Good as often as human replies?",
}


def attach_score_interval(result: dict[str, Any]) -> None:
    """`score_ci95` beside `score`: the interval of the metric whose value the score is."""
    metrics = result.get("metrics") or {}
    key = result.get("score_metric") or result.get("headline_metric")
    entry = metrics.get(key) if key else None
    result["score_ci95"] = list(entry["ci95"]) if entry and entry.get("ci95") is not None else None


def build_profile(benchmarks: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per instrument that ran, in a fixed order, from each benchmark's headline metric."""
    rows = []
    ordered = [name for name in INSTRUMENTS if name in benchmarks] + [n for n in benchmarks if n not in INSTRUMENTS]
    for name in ordered:
        result = benchmarks[name]
        row: dict[str, Any] = {
            "benchmark": name,
            # an instrument not in the tables names its own profile title and question in its summary
            "title": INSTRUMENTS.get(name) or result.get("profile_title") or name,
            "question": QUESTIONS.get(name) or result.get("profile_question") or "",
            "status": result.get("status"),
            "validity": validity_of(result),
            "note": result.get("headline_note") or result.get("error"),
        }
        key = result.get("headline_metric")
        entry = (result.get("metrics") or {}).get(key) if key else None
        if entry is not None:
            row.update(
                metric=key,
                label=entry["label"],
                value=entry["value"],
                ci95=entry["ci95"],
                n=entry["n"],
                unit=entry["unit"],
                higher_is_better=entry["higher_is_better"],
                reference=entry["reference"],
            )
        else:
            row.update(metric=None, label=None, value=None, ci95=None, n=0, unit="", reference=None)
        rows.append(row)
    return rows
