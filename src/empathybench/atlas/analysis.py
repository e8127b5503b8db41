"""What the atlas measures across its entries: how much one setting alone moves a model's figure, and whether the
instruments rank the same models alike.

Setting effects: where an instrument has released the same checkpoint under two settings (e.g. SAGE's models with
another simulated person), the paired difference over the items both scored, with its bootstrap interval.

Agreement: for each pair of instruments, Spearman's rho over the models both scored (the same checkpoint; with
`family`, also the same family where one has no same checkpoint), with a bootstrap interval over models and n; and
each instrument against the general-capability figure an upstream publishes beside its own. Each figure is oriented
by its instrument's direction (higher better), so a positive rho means the two rank alike; an instrument without a
direction (EmotionBench's shift, neither way better) has no rho. Several figures of one key (two published runs of
one checkpoint, a family's models) are averaged, on both sides alike. No rho and no verdict below
MIN_MODELS_FOR_VERDICT models.
"""

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from statistics import fmean
from typing import Any

from empathybench.atlas.boards import board_effects, board_summaries
from empathybench.atlas.place import figure_of, place_run
from empathybench.atlas.views import ranked
from empathybench.rundir.reader import RunData
from empathybench.stats.agreement import spearman, spearman_interval
from empathybench.stats.intervals import bootstrap_method, paired_mean_difference

MIN_MODELS_FOR_VERDICT = 5
DIGITS = 4


def _rounded(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else round(float(value), DIGITS)


def setting_effects(atlas: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each released checkpoint scored under the instrument's published setting and under another: the change of
    its figure when only that setting changes, paired over the items both runs scored."""
    effects: list[dict[str, Any]] = []
    recomputed = [e for e in atlas["entries"] if e["status"] == "recomputed" and e["model_id"] and e["items"]]
    for base in (e for e in recomputed if e["primary"]):
        for other in recomputed:
            if other["primary"] or (other["instrument"], other["model_id"]) != (base["instrument"], base["model_id"]):
                continue
            keys = sorted(set(base["settings"]) | set(other["settings"]))
            changed = [k for k in keys if base["settings"].get(k) != other["settings"].get(k)]
            shared = sorted(set(base["items"]) & set(other["items"]))
            if not changed or not shared:
                continue
            scale = float(base.get("scale") or 1.0)
            difference, interval = paired_mean_difference(other["items"], base["items"], shared, scale=scale)
            effects.append(
                {
                    "instrument": base["instrument"],
                    "model_id": base["model_id"],
                    "model": base["model"],
                    "settings_changed": {k: [base["settings"].get(k), other["settings"].get(k)] for k in changed},
                    "published_setting_value": base["value"],
                    "other_setting_value": other["value"],
                    "difference": _rounded(difference),
                    "ci95": None if interval is None else [_rounded(interval[0]), _rounded(interval[1])],
                    "n": len(shared),
                    "method": "paired difference over shared items; " + bootstrap_method(),
                }
            )
    return effects


def _model_figures(atlas: Mapping[str, Any], instrument: str, *, family: bool) -> dict[str, tuple[float, str, str]]:
    """key (model id, or family) -> (figure, where it comes from, the model as published), over the instrument's
    primary entries; several entries of one key are averaged."""
    collected: dict[str, list[tuple[float, str, str]]] = {}
    for entry in atlas["entries"]:
        if entry["instrument"] != instrument or not entry["primary"] or not entry["model_id"]:
            continue
        value, kind = figure_of(entry)
        if value is None:
            continue
        key = entry["family"] if family else entry["model_id"]
        collected.setdefault(key, []).append((value, kind, entry["model"]))
    return {
        key: (fmean(v for v, _, _ in rows), rows[0][1] if len({k for _, k, _ in rows}) == 1 else "mixed", rows[0][2])
        for key, rows in collected.items()
    }


def rank_agreement(first: Mapping[str, float], second: Mapping[str, float], *, seed: int = 0) -> dict[str, Any]:
    """Spearman's rho over the keys both have, its bootstrap interval over those keys, n, and a verdict; rho,
    interval and verdict only with n >= MIN_MODELS_FOR_VERDICT (fewer models say nothing a reader can use)."""
    shared = sorted(set(first) & set(second))
    x = [first[k] for k in shared]
    y = [second[k] for k in shared]
    rho, p_value = spearman(x, y) if len(shared) >= MIN_MODELS_FOR_VERDICT else (None, None)
    interval: tuple[float, float] | None = None
    if rho is not None:
        # every resample ranked at once: the draws and the interval of bootstrap_interval over spearman, ~50x faster
        interval = spearman_interval(x, y, seed=seed)
    verdict = None
    if len(shared) >= MIN_MODELS_FOR_VERDICT and interval is not None:
        verdict = "agree" if interval[0] > 0 else "disagree" if interval[1] < 0 else "inconclusive"
    return {
        "n": len(shared),
        "rho": _rounded(rho),
        "ci95": None if interval is None else [_rounded(interval[0]), _rounded(interval[1])],
        "p_value": _rounded(p_value),
        "verdict": verdict,
        "models": shared,
    }


NO_DIRECTION = "has no direction (a higher figure is neither better nor worse): a rank correlation's sign means nothing"


def _direction(described: Mapping[str, Any]) -> float | None:
    """+1 where higher is better, -1 where lower is, None where neither (no rho)."""
    higher = described.get("higher_is_better")
    return None if higher is None else 1.0 if higher else -1.0


def _oriented(
    figures: Mapping[str, tuple[float, str, str]], direction: float | None
) -> dict[str, tuple[float, str, str]]:
    """The figures with higher = better (an instrument without a direction: none)."""
    if direction is None:
        return {}
    return {key: (direction * value, kind, model) for key, (value, kind, model) in figures.items()}


def _left_out(*reasons: tuple[str, bool]) -> str | None:
    found = [f"{name} {NO_DIRECTION}" for name, missing in reasons if missing]
    return "; ".join(found) or None


def agreement(atlas: Mapping[str, Any], *, family: bool = False, seed: int = 0) -> dict[str, Any]:
    """The agreement matrix (every pair of instruments) and each instrument against the capability figures."""
    instruments = list(atlas["instruments"])
    direction = {name: _direction(atlas["instruments"][name]) for name in instruments}
    figures = {name: _oriented(_model_figures(atlas, name, family=False), direction[name]) for name in instruments}
    by_family = (
        {name: _oriented(_model_figures(atlas, name, family=True), direction[name]) for name in instruments}
        if family
        else {}
    )
    family_of = {e["model_id"]: e["family"] for e in atlas["entries"] if e["model_id"]}

    def values(name: str, other: str) -> tuple[dict[str, float], dict[str, float]]:
        a = {k: v for k, (v, _, _) in figures[name].items()}
        b = {k: v for k, (v, _, _) in figures[other].items()}
        if not family:
            return a, b
        # the same checkpoint where both have it, else the same family (one figure per family and instrument)
        fa = {k: v for k, (v, _, _) in by_family[name].items()}
        fb = {k: v for k, (v, _, _) in by_family[other].items()}
        paired_families = {family_of[k] for k in set(a) & set(b)}
        a = {**a, **{f"family:{k}": v for k, v in fa.items() if k not in paired_families}}
        b = {**b, **{f"family:{k}": v for k, v in fb.items() if k not in paired_families}}
        return a, b

    pairs = []
    for name, other in combinations(instruments, 2):
        a, b = values(name, other)
        left_out = _left_out((name, direction[name] is None), (other, direction[other] is None))
        pairs.append({"instruments": [name, other], **rank_agreement(a, b, seed=seed), "left_out": left_out})
    capability = []
    for source, described in atlas["instruments"].items():
        table = described.get("capability")
        if not table:
            continue
        # several rows of one key (a family's models) averaged, as an instrument's are
        collected: dict[str, list[float]] = {}
        for row in table["models"]:
            if row["model_id"]:
                collected.setdefault(row["family"] if family else row["model_id"], []).append(row["value"])
        reference = {key: fmean(found) for key, found in collected.items()}
        for name in instruments:
            chosen = by_family[name] if family else figures[name]
            mine = {k: v for k, (v, _, _) in chosen.items()}
            capability.append(
                {
                    "instrument": name,
                    "capability": table["label"],
                    "capability_from": source,
                    **rank_agreement(mine, reference, seed=seed),
                    "left_out": _left_out((name, direction[name] is None)),
                }
            )
    return {
        "matching": "same checkpoint, else same family" if family else "same checkpoint",
        "figures": "each model's recomputed figure; a published-only model's published figure",
        "method": "Spearman's rho (scipy.stats.spearmanr) over figures oriented higher = better (an instrument "
        "without a direction left out); several figures of one model or family averaged on both sides; percentile "
        f"bootstrap over models, 2000 resamples, seed {seed}, 95%; rho and a verdict only with n >= "
        f"{MIN_MODELS_FOR_VERDICT}: agree (interval above 0), disagree (below 0), inconclusive",
        "instruments": instruments,
        "pairs": pairs,
        "capability": capability,
    }


def matrix_rows(result: Mapping[str, Any]) -> list[list[Any]]:
    """The pairs as a CSV table: one row per pair of instruments, then per instrument against capability."""
    rows: list[list[Any]] = [["first", "second", "n", "rho", "ci95_low", "ci95_high", "verdict"]]
    for pair in result["pairs"]:
        low, high = pair["ci95"] or (None, None)
        rows.append([*pair["instruments"], pair["n"], pair["rho"], low, high, pair["verdict"] or ""])
    for row in result["capability"]:
        low, high = row["ci95"] or (None, None)
        rows.append([row["instrument"], row["capability"], row["n"], row["rho"], low, high, row["verdict"] or ""])
    return rows


__all__: Sequence[str] = ("agreement", "leaderboards", "matrix_rows", "rank_agreement", "setting_effects")


def leaderboards(atlas: Mapping[str, Any], runs: Sequence[RunData], bench: Sequence[str] | None) -> dict[str, Any]:
    """Per instrument: the entries best first (published-only ones labelled), the runs placed among them, the
    setting effects (e.g. another simulated person) of its released models, its other published boards (e.g. one
    per judge) and what changes between them."""
    effects = setting_effects(atlas)
    changes = board_effects(atlas, instruments=bench or None)
    placements = [p for run in runs for p in place_run(atlas, run)]
    result: dict[str, Any] = {}
    for name, described in atlas["instruments"].items():
        if bench and name not in bench:
            continue
        entries = [e for e in atlas["entries"] if e["instrument"] == name]
        primary = ranked([e for e in entries if e["primary"]], described.get("higher_is_better"))
        result[name] = {
            "title": described["title"],
            "metric": described["metric"],
            "higher_is_better": described.get("higher_is_better"),
            # the reproduction check's margin m, in the units of the run's summary metric
            "reproduction_margin": described.get("reproduction_margin"),
            # a figure without a direction is listed by value (highest first) and not ranked
            "rows": [
                _row(None if described.get("higher_is_better") is None else rank, e)
                for rank, e in enumerate(primary, start=1)
            ],
            "other_settings": [_row(None, e) for e in entries if not e["primary"] and not e["settings"].get("board")],
            "runs": [p for p in placements if p["instrument"] == name],
            "setting_effects": [e for e in effects if e["instrument"] == name],
            "boards": board_summaries(atlas, name),
            "board_effects": [e for e in changes if e["instrument"] == name],
        }
    return result


def _row(rank: int | None, entry: Mapping[str, Any]) -> dict[str, Any]:
    published = entry.get("published") or {}
    return {
        "rank": rank,
        "model": entry["model"],
        "model_id": entry["model_id"],
        "identity": entry.get("identity"),  # how the published name became the checkpoint, and who decided
        "status": entry["status"],
        "value": entry["value"],
        "ci95": entry["ci95"],
        "n": entry["n"],
        "published": published.get("value"),
        "published_source": published.get("source"),
        "difference": entry["difference"],
        "settings": entry["settings"],
        "notes": entry["notes"],
    }
