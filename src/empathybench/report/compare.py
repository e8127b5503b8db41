"""Several runs side by side: a leaderboard with intervals and paired differences on the items they share."""

import json
import math
import warnings
from typing import Any

import numpy as np

from empathybench.errors import UserError
from empathybench.instruments.protocol import ReportSection
from empathybench.report.profile import profile_order, title_of
from empathybench.report.validity import validity_of
from empathybench.rundir.reader import RunData
from empathybench.rundir.reader import load_run as load_run  # re-exported: callers compare what they load
from empathybench.stats.contingency import mcnemar_exact_p
from empathybench.stats.intervals import RESAMPLES, bootstrap_method, mean_interval


def unique_labels(runs: list[RunData]) -> list[str]:
    """Model names, with the run directory added where two runs share a model."""
    labels = [run.label for run in runs]
    named = [
        f"{label} ({run.directory.name})" if labels.count(label) > 1 else label
        for label, run in zip(labels, runs, strict=True)
    ]
    # Directories of the same name in different places: the whole path tells them apart.
    return [f"{run.label} ({run.directory})" if named.count(n) > 1 else n for n, run in zip(named, runs, strict=True)]


def _p_value(test: str, first: np.ndarray, second: np.ndarray) -> tuple[float | None, str | None]:
    """(p, None), or (None, why there is no p). Library warnings stay out of the user's terminal: an undefined test
    is said in words instead."""
    from scipy import stats

    differences = first - second
    if test not in TEST_NAMES:
        return None, "no p-value: this figure has no paired test"
    if differences.size < 2:
        return None, f"no p-value: {differences.size} shared item (a paired test needs at least 2)"
    if test == "mcnemar":
        b, c = int(np.sum((first > 0) & (second <= 0))), int(np.sum((first <= 0) & (second > 0)))
        return mcnemar_exact_p(b, c), None
    if np.allclose(differences, 0.0):
        return 1.0, None
    if test == "paired_t" and np.allclose(differences, differences[0]):
        return None, "no p-value: every item differs by the same amount (a t-test needs some spread)"
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if test == "wilcoxon":
            p = float(stats.wilcoxon(first, second, zero_method="wilcox").pvalue)
        else:
            p = float(stats.ttest_rel(first, second).pvalue)
    if math.isnan(p):
        return None, "no p-value: the test is undefined on these items"
    return p, None


TEST_NAMES = {
    "mcnemar": "exact McNemar",
    "wilcoxon": "Wilcoxon signed-rank",
    "paired_t": "paired t-test",
}


def paired_difference(first: dict[str, Any], second: dict[str, Any], *, seed: int = 0) -> dict[str, Any] | None:
    """first minus second for one mean-type metric, on the items both runs have.

    The offset cancels, so the difference is scale * mean(item differences); the interval is a paired bootstrap
    over the shared items, the p-value the metric's paired test on the item values.
    """
    items_a, items_b = first.get("items"), second.get("items")
    if not items_a or not items_b or first.get("scale") != second.get("scale"):
        return None
    shared = [key for key in items_a if key in items_b]
    if not shared:
        return {
            "n_shared": 0,
            "difference": None,
            "ci95": None,
            "test": None,
            "p": None,
            "p_note": "no p-value: the runs share no item",
        }
    a = np.asarray([items_a[key] for key in shared], dtype=float)
    b = np.asarray([items_b[key] for key in shared], dtype=float)
    scale = float(first.get("scale", 1.0))
    difference = scale * float(np.mean(a - b))
    interval = mean_interval(list(a - b), scale=scale, seed=seed)
    test = str(first.get("paired_test", "none"))
    p, p_note = _p_value(test, a, b)
    return {
        "n_shared": len(shared),
        "difference": round(difference, 4),
        "ci95": [round(interval[0], 4), round(interval[1], 4)] if interval else None,
        "method": bootstrap_method(RESAMPLES, seed, "shared items (paired)"),
        "test": TEST_NAMES.get(test),
        "p": None if p is None else round(p, 6),
        **({"p_note": p_note} if p_note else {}),
        "first_on_shared": round(scale * float(np.mean(a)) + float(first.get("offset", 0.0)), 4),
        "second_on_shared": round(scale * float(np.mean(b)) + float(second.get("offset", 0.0)), 4),
    }


def _benchmark_names(runs: list[RunData]) -> list[str]:
    names: list[str] = []
    for run in runs:
        for name in run.summary.get("benchmarks", {}):
            if name not in names:
                names.append(name)
    return profile_order(names)


def compare_runs(runs: list[RunData], *, seed: int = 0) -> dict[str, Any]:
    """Leaderboard (every run's metrics with intervals) and each later run paired against the first."""
    if len(runs) < 2:
        raise UserError("a comparison needs at least two run directories")
    labels = unique_labels(runs)
    benchmarks: dict[str, Any] = {}
    for name in _benchmark_names(runs):
        results = [run.summary["benchmarks"].get(name) for run in runs]
        metric_keys: list[str] = []
        for result in results:
            for key in (result or {}).get("metrics") or {}:
                if key not in metric_keys:
                    metric_keys.append(key)
        headline = next((r.get("headline_metric") for r in results if r and r.get("headline_metric")), None)
        leaderboard = {
            key: [
                _leaderboard_cell(label, (result or {}).get("metrics", {}).get(key))
                for label, result in zip(labels, results, strict=True)
            ]
            for key in metric_keys
        }
        paired = []
        base = results[0]
        for label, result in zip(labels[1:], results[1:], strict=True):
            if not base or not result:
                continue
            for key in metric_keys:
                a, b = result.get("metrics", {}).get(key), base.get("metrics", {}).get(key)
                if a is None or b is None:
                    continue
                difference = paired_difference(a, b, seed=seed)
                paired.append(
                    {
                        "metric": key,
                        "label": a["label"],
                        "unit": a["unit"],
                        "higher_is_better": a.get("higher_is_better"),
                        "first": label,
                        "second": labels[0],
                        **(difference or {"note": "not a mean over items: compare the intervals side by side"}),
                    }
                )
        labels_by_key = {
            key: next(r["metrics"][key]["label"] for r in results if r and key in (r.get("metrics") or {}))
            for key in metric_keys
        }
        benchmarks[name] = {
            "title": title_of(name),
            "metric_labels": labels_by_key,
            "headline_metric": headline,
            "configs_match": _configs_match(runs, name),
            "leaderboard": leaderboard,
            "paired": paired,
        }
    return {
        "runs": [
            # where a run's figures came from when another harness made its calls (inspect logs)
            {
                "label": label,
                "directory": str(run.directory),
                **({"source": src} if (src := run.summary.get("source")) else {}),
            }
            for label, run in zip(labels, runs, strict=True)
        ],
        "benchmarks": benchmarks,
        "warnings": comparison_warnings(runs, labels),
    }


def run_sections(runs: list[RunData]) -> dict[str, tuple[str, ReportSection]]:
    """The instruments' own sections of a comparison (`Instrument.comparison_section`), from the runs' results: for
    each instrument in at least two runs that has one, keyed `<name>-runs`."""
    from empathybench.instruments.registry import installed

    labels = unique_labels(runs)
    sections: dict[str, tuple[str, ReportSection]] = {}
    for name in _benchmark_names(runs):
        results = [
            (label, result)
            for label, run in zip(labels, runs, strict=True)
            if (result := run.summary["benchmarks"].get(name)) and result.get("status") != "skipped"
        ]
        instrument = installed(name)
        section = instrument.comparison_section(results) if instrument is not None and len(results) > 1 else None
        if section is not None:
            sections[f"{name}-runs"] = (f"{title_of(name)}: the runs side by side", section)
    return sections


def comparison_warnings(runs: list[RunData], labels: list[str]) -> list[str]:
    """What makes a difference between these runs mean less than it seems: runs that judged themselves, different
    judges, different configurations, results that are not valid. Shown by every renderer."""
    found: list[str] = []
    for name in _benchmark_names(runs):
        title = title_of(name)
        results = [(label, run.summary["benchmarks"].get(name)) for label, run in zip(labels, runs, strict=True)]
        present = [(label, result) for label, result in results if result and result.get("status") != "skipped"]
        judges = [(label, result["judge"]) for label, result in present if isinstance(result.get("judge"), dict)]
        self_judged = [label for label, judge in judges if judge.get("self_judging")]
        if self_judged:
            found.append(
                f"{title}: self-judged (no --judge) in {', '.join(self_judged)}: each model rated its own replies"
            )
        self_simulated = [label for label, result in present if result.get("self_simulated")]
        if self_simulated:
            found.append(
                f"{title}: self-simulated (no --simulator) in {', '.join(self_simulated)}: each model played the "
                "person it talked with"
            )
        # An instrument with a published leaderboard says when a run cannot be set beside it (`comparability`).
        apart: dict[str, list[str]] = {}
        for label, result in present:
            if result.get("comparable_with_published") is False and result.get("comparability"):
                apart.setdefault(str(result["comparability"]), []).append(label)
        for reason, where in apart.items():
            found.append(f"{title}: {', '.join(where)}: {reason}")
        judge_names = {json.dumps((j.get("identity") or {}).get("model"), default=str) for _, j in judges}
        if len(judges) > 1 and (len(judge_names) > 1 or len(self_judged) > 1):
            found.append(f"{title}: different judges, so a difference mixes the models with their judges")
        if len(present) > 1 and not _configs_match(runs, name):
            keys = _differing_config_keys(runs, name)
            found.append(
                f"{title}: configurations differ ({', '.join(keys) or 'see run.json'}): paired figures use the items "
                "the runs share, and a difference mixes the models with their settings"
            )
        for label, result in present:
            validity = validity_of(result)
            if validity["status"] in ("invalid", "insufficient"):
                found.append(f"{title}: {label} is {validity['label']}")
    return found


def _differing_config_keys(runs: list[RunData], name: str) -> list[str]:
    configs = [run.run_info.get("benchmarks", {}).get(name, {}).get("config") or {} for run in runs]
    keys = sorted({key for config in configs for key in config})
    return [key for key in keys if len({json.dumps(c.get(key), sort_keys=True, default=str) for c in configs}) > 1]


def _leaderboard_cell(label: str, entry: dict[str, Any] | None) -> dict[str, Any]:
    if entry is None:
        return {"run": label, "value": None, "ci95": None, "n": 0}
    return {"run": label, "value": entry["value"], "ci95": entry["ci95"], "n": entry["n"], "unit": entry["unit"]}


def _configs_match(runs: list[RunData], name: str) -> bool:
    configs = [
        json.dumps(run.run_info.get("benchmarks", {}).get(name, {}).get("config"), sort_keys=True) for run in runs
    ]
    return len(set(configs)) == 1
