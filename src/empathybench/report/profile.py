"""The EI profile: one headline per instrument with its interval and its human (or published) reference."""

from collections.abc import Iterable
from typing import Any

from empathybench.report.validity import own_note, short_reason, validity_of

UNPLACED = 10**6  # instruments without a position come after the placed ones, in run order


def _instrument(name: str) -> Any:
    """The installed instrument `name`, or None (a run directory may name one that is not installed)."""
    from empathybench.instruments.registry import installed

    return installed(name)


def _profile_facts(name: str) -> tuple[int, str, str]:
    """(position, title, question) of an instrument in the profile."""
    instrument = _instrument(name)
    if instrument is None:
        return UNPLACED, name, ""
    return instrument.profile_position or UNPLACED, instrument.profile_title or name, instrument.profile_question


def profile_order(names: Iterable[str]) -> list[str]:
    """Instrument names in profile order (stable: those without a position keep their given order at the end)."""
    return sorted(names, key=lambda name: _profile_facts(name)[0])


def title_of(name: str) -> str:
    """An instrument's short title in the profile and its section headings."""
    return _profile_facts(name)[1]


def attach_score_interval(result: dict[str, Any]) -> None:
    """`score_ci95` beside `score`: the interval of the metric whose value the score is."""
    metrics = result.get("metrics") or {}
    key = result.get("score_metric") or result.get("headline_metric")
    entry = metrics.get(key) if key else None
    result["score_ci95"] = list(entry["ci95"]) if entry and entry.get("ci95") is not None else None


def build_profile(benchmarks: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per instrument that ran, in a fixed order, from each benchmark's headline metric."""
    rows = []
    for name in profile_order(benchmarks):
        result = benchmarks[name]
        _, title, question = _profile_facts(name)
        row: dict[str, Any] = {
            "benchmark": name,
            # an instrument may name its own profile title and question in its summary
            "title": result.get("profile_title") or title,
            "question": result.get("profile_question") or question,
            "status": result.get("status"),
            "validity": validity_of(result),
            # a card says one short thing: the note the status reasons do not already say, or why it was skipped
            "note": own_note(result) or (short_reason(str(result["error"])) if result.get("error") else None),
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
        if row["value"] is None and not row["note"] and row["validity"]["reasons"]:  # no figure: the card says why
            row["note"] = str(row["validity"]["reasons"][0]).split(": ", 1)[-1]
        rows.append(row)
    return rows
