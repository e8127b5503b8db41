"""MentalAlign-70k recomputed (specs/judges.md): the published human table and ICC table from the released ratings, by
the authors' method, beside the published figures with every difference named; and what the paper does not give:
each judge's agreement with the experts item by item, and judge against judge.

The authors' method (Codes/analysis/icc_corrected_with_bootstrap_ci.py at the pinned commit, read, not copied): per
judge and attribute, the mean rating of each of the 10 rated sources (9 models and the original human reply) over the
conversations both the experts and the judge rated, leaving out the judge's own family; ICC(C,1) and ICC(A,1) of the
(sources x {experts, judge}) matrix; a percentile interval over 1,000 resamples of the sources, resample i drawn by
numpy's legacy generator seeded with the i-th of 1,000 seeds that `numpy.random.seed(42)` gives (only resamples whose
ICC lies in [0, 1] count); the status from the interval's width (GR <= 0.355 < MR <= 0.560 < PR). Their reader takes a
judge's reply as JSON after removing a leading ```json fence, nothing else; the experts' 0s and 6s (off the 1-5 scale)
are averaged as they are. The published bias table is theirs too, by another method
(Codes/analysis/calculate_real_mse_rmse.py, read, not copied): every rating pair pooled, not the means of the sources.

The item-by-item figures use every reply whose ratings can be read (ratings.RECOVERED too) and the ratings on the 1-5
scale, and the project's one bootstrap, over conversations (the 9 or 10 replies to one conversation come together).
"""

import math
from collections.abc import Iterable, Mapping
from functools import cache
from itertools import combinations
from typing import Any

from empathybench.judges.evidence import Evidence
from empathybench.judges.published import Published
from empathybench.judges.ratings import ATTRIBUTES, JSON, JUDGES, RECOVERED, RESPONSE_MODELS, MentalAlign
from empathybench.stats.agreement import icc_consistency_and_agreement, icc_stacked, ordinal_agreement
from empathybench.stats.bootstrap import legacy_reseeded_draws

SCALE = (1, 2, 3, 4, 5)
AUTHORS_RESAMPLES = 1000
AUTHORS_SEED = 42
AUTHORS_SEED_RANGE = 100_000  # the authors draw each resample's seed from [0, 100000)
STATUS_WIDTHS = (("GR", 0.355), ("MR", 0.560))  # the published legend: GR up to 0.355, MR up to 0.560, else PR
HUMAN_TABLE_DIGITS = 2
ICC_DIGITS = 3


def _matches(recomputed: float | None, published: float, digits: int) -> bool:
    """Whether `recomputed`, printed to `digits` decimals as the authors did, could read `published` (half a unit of
    the last digit either way, and a hair for binary fractions such as 4.755)."""
    return recomputed is not None and abs(recomputed - published) <= 0.5 * 10**-digits + 1e-9


def _mean(values: Any) -> float | None:
    import numpy as np

    finite = values[~np.isnan(values)]
    return float(finite.mean()) if finite.size else None


# --- the published human table -----------------------------------------------------------------------------------


def human_table(data: MentalAlign) -> dict[str, dict[str, Any]]:
    """Per response model: each attribute's mean expert rating over the conversations rated (as the authors average:
    every number in a cell) with its n, and the mean of the 7 means ("Avg")."""
    table: dict[str, dict[str, Any]] = {}
    for model in RESPONSE_MODELS:
        ratings = data.human_ratings(model)
        row: dict[str, Any] = {}
        for column, attribute in enumerate(ATTRIBUTES):
            values = ratings[:, column]
            row[attribute] = {"value": _mean(values), "n": int((values == values).sum())}
        means = [row[a]["value"] for a in ATTRIBUTES]
        row["Avg"] = {"value": math.fsum(means) / len(means) if None not in means else None, "n": None}
        table[model] = row
    return table


def compare_human_table(table: Mapping[str, Mapping[str, Any]], published: Published) -> list[dict[str, Any]]:
    """Every published cell beside its recomputed value: matches when it prints as published (2 decimals)."""
    cells = []
    for model, row in published.human.items():
        for attribute, value in row.items():
            recomputed = table[model][attribute]["value"]
            cells.append(
                {
                    "model": RESPONSE_MODELS[model],
                    "attribute": attribute,
                    "published": value,
                    "recomputed": recomputed,
                    "n": table[model][attribute]["n"],
                    "difference": None if recomputed is None else recomputed - value,
                    "matches": _matches(recomputed, value, HUMAN_TABLE_DIGITS),
                }
            )
    return cells


# --- the published ICC table ---------------------------------------------------------------------------------------


def system_means(data: MentalAlign, judge: str, attribute: str) -> tuple[list[str], Any, Any, int]:
    """(sources, expert means, judge means, rating pairs): per rated source other than the judge's own family, the
    mean of each side over the conversations both rated the attribute (the judge's cell read by the authors' rule)."""
    import numpy as np

    column = ATTRIBUTES.index(attribute)
    sources, human_means, judge_means, pairs = [], [], [], 0
    for model in RESPONSE_MODELS:
        if model == JUDGES[judge].own_family:
            continue
        human = data.human_ratings(model)[:, column]
        rated = data.judge_ratings(judge, model)[:, column]
        both = ~np.isnan(human) & ~np.isnan(rated) & (data.judge_status(judge, model) == JSON)
        if not both.any():
            continue
        sources.append(model)
        human_means.append(float(human[both].mean()))
        judge_means.append(float(rated[both].mean()))
        pairs += int(both.sum())
    return sources, np.asarray(human_means), np.asarray(judge_means), pairs


@cache
def _authors_draws(n: int, resamples: int) -> Any:
    """The authors' resamples of n sources: row i from numpy's legacy generator seeded with their i-th seed."""
    return legacy_reseeded_draws(n, resamples=resamples, seed=AUTHORS_SEED, seed_range=AUTHORS_SEED_RANGE)


def authors_icc_interval(
    human_means: Any, judge_means: Any, resamples: int = AUTHORS_RESAMPLES
) -> tuple[tuple[float, float] | None, tuple[float, float] | None, int]:
    """The authors' bootstrap percentile intervals of ICC(C,1) and ICC(A,1) (module docstring), and how many resamples
    counted (both ICCs defined)."""
    import numpy as np

    draws = _authors_draws(len(human_means), resamples)
    consistency, absolute = icc_stacked(np.stack([human_means[draws], judge_means[draws]], axis=2))
    defined = ~np.isnan(consistency) & ~np.isnan(absolute)

    def percentile(values: Any) -> tuple[float, float] | None:
        values = values[defined & (values >= 0) & (values <= 1)]
        if values.size < 10:  # the authors give no interval from fewer
            return None
        low, high = np.percentile(values, [2.5, 97.5])
        return float(low), float(high)

    return percentile(consistency), percentile(absolute), int(defined.sum())


def reliability_status(width: float | None) -> str | None:
    if width is None:
        return None
    return next((status for status, limit in STATUS_WIDTHS if width <= limit), "PR")


def icc_table(
    data: MentalAlign, resamples: int = AUTHORS_RESAMPLES, judges: Iterable[str] = JUDGES
) -> list[dict[str, Any]]:
    """Per judge (of `judges`) and attribute, the system-level ICC row as the authors compute it, with the means
    behind it."""
    import numpy as np

    rows = []
    for judge in judges:
        for attribute in ATTRIBUTES:
            sources, human_means, judge_means, pairs = system_means(data, judge, attribute)
            c1, a1 = icc_consistency_and_agreement(np.column_stack([human_means, judge_means]))
            ci, _, _ = authors_icc_interval(human_means, judge_means, resamples)
            width = ci[1] - ci[0] if ci is not None else None
            rows.append(
                {
                    "judge": judge,
                    "attribute": attribute,
                    "sources": [RESPONSE_MODELS[m] for m in sources],
                    "n_sources": len(sources),
                    "n_pairs": pairs,
                    "icc_c1": None if math.isnan(c1) else c1,
                    "ci95": list(ci) if ci is not None else None,
                    "icc_a1": None if math.isnan(a1) else a1,
                    "ci_width": width,
                    "status": reliability_status(width),
                    "resamples": resamples,
                }
            )
    return rows


def compare_icc_table(rows: list[dict[str, Any]], published: Published) -> list[dict[str, Any]]:
    """Every published ICC figure beside its recomputed value (matching when it prints as published)."""
    cells = []
    for row in rows:
        icc = published.icc.get((row["judge"], row["attribute"]))
        ci = row["ci95"] or [None, None]
        pairs: list[tuple[str, float | None, float | str]] = []
        if icc is not None:
            pairs += [
                ("ICC(C,1)", row["icc_c1"], icc.icc_c1),
                ("ICC(C,1) 95% low", ci[0], icc.ci95[0]),
                ("ICC(C,1) 95% high", ci[1], icc.ci95[1]),
                ("ICC(A,1)", row["icc_a1"], icc.icc_a1),
                ("CI width", row["ci_width"], icc.ci_width),
                ("status", row["status"], icc.status),
            ]
        cells += _compared(row, pairs)
    return cells


def _compared(row: Mapping[str, Any], pairs: Iterable[tuple[str, float | None, float | str]]) -> list[dict[str, Any]]:
    """(figure, recomputed, published) of one judge and attribute as cells: a status matches when equal, a number
    when it prints as published (3 decimals)."""
    cells = []
    for figure, recomputed, value in pairs:
        if isinstance(value, str):
            matches = recomputed == value
            difference = None
        else:
            matches = _matches(recomputed, value, ICC_DIGITS)  # type: ignore[arg-type]
            difference = None if recomputed is None else float(recomputed) - value  # type: ignore[arg-type]
        cells.append(
            {
                "judge": JUDGES[row["judge"]].label,
                "attribute": row["attribute"],
                "figure": figure,
                "published": value,
                "recomputed": recomputed,
                "difference": difference,
                "matches": matches,
            }
        )
    return cells


# --- the published bias table --------------------------------------------------------------------------------------


def bias_table(data: MentalAlign, judges: Iterable[str] = JUDGES) -> list[dict[str, Any]]:
    """Per judge (of `judges`) and attribute, the published bias table's figures as the authors compute them
    (Codes/analysis/calculate_real_mse_rmse.py, read, not copied): every rating pair pooled, over the rated sources
    but the judge's own family and the conversations both rated (the judge's cell read by the authors' rule): the mean
    expert rating, the mean judge rating, their mean difference (judge - experts), its mean square (MSE) and root
    (RMSE), and the number of pairs."""
    import numpy as np

    rows = []
    for judge in judges:
        models = [m for m in RESPONSE_MODELS if m != JUDGES[judge].own_family]
        for column, attribute in enumerate(ATTRIBUTES):
            human_parts, judge_parts = [], []
            for model in models:
                human = data.human_ratings(model)[:, column]
                rated = data.judge_ratings(judge, model)[:, column]
                both = ~np.isnan(human) & ~np.isnan(rated) & (data.judge_status(judge, model) == JSON)
                human_parts.append(human[both])
                judge_parts.append(rated[both])
            experts, judged = np.concatenate(human_parts), np.concatenate(judge_parts)
            difference = judged - experts
            mse = float(np.mean(difference**2)) if difference.size else None
            rows.append(
                {
                    "judge": judge,
                    "attribute": attribute,
                    "n_pairs": int(difference.size),
                    "human_mean": float(experts.mean()) if experts.size else None,
                    "judge_mean": float(judged.mean()) if judged.size else None,
                    "bias": float(difference.mean()) if difference.size else None,
                    "mse": mse,
                    "rmse": math.sqrt(mse) if mse is not None else None,
                }
            )
    return rows


def compare_bias_table(rows: list[dict[str, Any]], published: Published) -> list[dict[str, Any]]:
    """Every published bias-table figure (human mean, judge mean, bias, MSE; the table has no RMSE) beside its
    recomputed value (matching when it prints as published)."""
    cells = []
    for row in rows:
        bias = published.bias.get((row["judge"], row["attribute"]))
        if bias is not None:
            cells += _compared(
                row,
                [
                    ("human mean", row["human_mean"], bias.human_mean),
                    ("judge mean", row["judge_mean"], bias.judge_mean),
                    ("bias", row["bias"], bias.bias),
                    ("MSE", row["mse"], bias.mse),
                ],
            )
    return cells


# --- item by item: what the paper does not give ----------------------------------------------------------------------


def _pairs(data: MentalAlign, first: Any, second: Any, models: list[str], column: int) -> dict[str, Any]:
    """The ratings two raters (callables model -> (conversations x 7) array and its readable mask) both gave on the
    1-5 scale, with the conversation of each, and how many pairs were left out for an off-scale rating."""
    import numpy as np

    a, b, unit, off_scale = [], [], [], 0
    units = np.arange(len(data.conversations))
    for model in models:
        x, x_ok = first(model)
        y, y_ok = second(model)
        both = x_ok & y_ok & ~np.isnan(x[:, column]) & ~np.isnan(y[:, column])
        xs, ys = x[both, column], y[both, column]
        on_scale = np.isin(xs, SCALE) & np.isin(ys, SCALE)
        off_scale += int((~on_scale).sum())
        a.append(xs[on_scale])
        b.append(ys[on_scale])
        unit.append(units[both][on_scale])
    return {
        "first": np.concatenate(a),
        "second": np.concatenate(b),
        "unit": np.concatenate(unit),
        "off_scale": off_scale,
    }


def _rater(data: MentalAlign, judge: str | None) -> Any:
    import numpy as np

    if judge is None:
        return lambda model: (data.human_ratings(model), np.ones(len(data.conversations), dtype=bool))
    return lambda model: (
        data.judge_ratings(judge, model),
        np.isin(data.judge_status(judge, model), (JSON, RECOVERED)),
    )


def _agreement(data: MentalAlign, pairs: Mapping[str, Any], resamples: int, seed: int) -> dict[str, Any]:
    figures = ordinal_agreement(
        pairs["first"],
        pairs["second"],
        SCALE,
        unit_of=pairs["unit"],
        units=len(data.conversations),
        resamples=resamples,
        seed=seed,
    )
    return figures | {"off_scale": pairs["off_scale"]}


def item_agreement(
    data: MentalAlign, resamples: int = 2000, seed: int = 0, judges: Iterable[str] = JUDGES
) -> list[dict[str, Any]]:
    """Per judge (of `judges`) and attribute: the judge against the experts reply by reply (the sources the ICC uses:
    its own family left out), quadratic-weighted kappa, Spearman, mean bias (judge - experts), exact agreement, each
    with its interval, n replies and the conversations drawn. Each row's draws depend on its seed alone: one judge's
    rows are the same computed alone or with the others."""
    rows = []
    for judge in judges:
        judge_file = JUDGES[judge]
        models = [m for m in RESPONSE_MODELS if m != judge_file.own_family]
        for column, attribute in enumerate(ATTRIBUTES):
            pairs = _pairs(data, _rater(data, None), _rater(data, judge), models, column)
            rows.append({"judge": judge, "attribute": attribute, **_agreement(data, pairs, resamples, seed)})
    return rows


def judge_pairs(data: MentalAlign, resamples: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    """Per pair of judges and attribute, the two judges reply by reply over all 10 sources (mean difference: second -
    first)."""
    rows = []
    models = list(RESPONSE_MODELS)
    for first, second in combinations(JUDGES, 2):
        for column, attribute in enumerate(ATTRIBUTES):
            pairs = _pairs(data, _rater(data, first), _rater(data, second), models, column)
            rows.append(
                {"first": first, "second": second, "attribute": attribute, **_agreement(data, pairs, resamples, seed)}
            )
    return rows


def mentalalign_report(
    data: MentalAlign, published: Published, *, resamples: int = 2000, icc_resamples: int = AUTHORS_RESAMPLES
) -> dict[str, Any]:
    """Everything above in one JSON-able document, with the files read and how their cells were read."""
    table = human_table(data)
    icc_rows = icc_table(data, icc_resamples)
    human_cells = compare_human_table(table, published)
    icc_cells = compare_icc_table(icc_rows, published)
    bias_rows = bias_table(data)
    bias_cells = compare_bias_table(bias_rows, published)
    return {
        "source": "MentalAlign-70k (abeerbadawi/MentalBench-Align, arXiv 2510.19032)",
        "files": data.files(),
        "cells_read": {
            "experts": data.human.status_counts(),
            **{judge: grid.status_counts() for judge, grid in data.judges.items()},
        },
        "judges": {name: {"label": f.label, "model_id": f.model_id} for name, f in JUDGES.items()},
        "human_table": {RESPONSE_MODELS[m]: row for m, row in table.items()},
        "human_table_differences": [c for c in human_cells if not c["matches"]],
        "human_table_cells": len(human_cells),
        "icc_table": icc_rows,
        "icc_table_differences": [c for c in icc_cells if not c["matches"]],
        "icc_table_cells": len(icc_cells),
        "bias_table": bias_rows,
        "bias_table_differences": [c for c in bias_cells if not c["matches"]],
        "bias_table_cells": len(bias_cells),
        "item_agreement": item_agreement(data, resamples),
        "judge_pairs": judge_pairs(data, resamples),
    }


def pooled_item_agreement(data: MentalAlign, judge: str, resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The judge against the experts over every reply and all 7 attributes pooled (the headline of the evidence
    table), its interval drawn over conversations as each attribute's."""
    import numpy as np

    models = [m for m in RESPONSE_MODELS if m != JUDGES[judge].own_family]
    parts = [_pairs(data, _rater(data, None), _rater(data, judge), models, c) for c in range(len(ATTRIBUTES))]
    pooled = {key: np.concatenate([p[key] for p in parts]) for key in ("first", "second", "unit")}
    pooled["off_scale"] = sum(p["off_scale"] for p in parts)
    return _agreement(data, pooled, resamples, seed)


class MentalAlignSource:
    """MentalAlign-70k as a source of judge evidence: per judge, item by item against the clinical experts (pooled
    over the attributes: the headline; and per attribute) and the authors' system-level ICC(C,1) per attribute."""

    name = "mentalalign"
    title = "MentalAlign-70k: 4 LLM judges and clinical experts on 10,000 mental-health replies (arXiv 2510.19032)"

    def __init__(self, *, resamples: int = 2000, icc_resamples: int = AUTHORS_RESAMPLES) -> None:
        from empathybench.judges.published import load_published
        from empathybench.judges.ratings import load_mentalalign

        self.data = load_mentalalign()
        self.report = mentalalign_report(self.data, load_published(), resamples=resamples, icc_resamples=icc_resamples)
        self.pooled = {judge: pooled_item_agreement(self.data, judge, resamples) for judge in JUDGES}

    def evidence(self) -> list[Evidence]:
        rows: list[Evidence] = []
        for judge in JUDGES:
            rows += judge_rows(judge, self.pooled[judge], self.report["item_agreement"], self.report["icc_table"])
        return rows

    def detail(self) -> dict[str, Any]:
        return self.report | {"pooled_item_agreement": self.pooled}


def judge_rows(
    judge: str, pooled: Mapping[str, Any], item_rows: Iterable[Mapping[str, Any]], icc_rows: Iterable[Mapping[str, Any]]
) -> list[Evidence]:
    """One judge's evidence rows: the pooled kappa (the headline), the kappa per attribute, the authors' ICC(C,1) per
    attribute."""
    judge_file = JUDGES[judge]
    rows = [_kappa_row(judge_file.model_id, pooled, "all 7 attributes pooled", headline=True)]
    rows += [_kappa_row(judge_file.model_id, row, row["attribute"]) for row in item_rows if row["judge"] == judge]
    for row in icc_rows:
        if row["judge"] == judge:
            ci = row["ci95"]
            rows.append(
                Evidence(
                    judge=judge_file.model_id,
                    source=MentalAlignSource.name,
                    against="clinical experts",
                    aspect=row["attribute"],
                    statistic="ICC(C,1)",
                    value=row["icc_c1"],
                    ci95=(ci[0], ci[1]) if ci else None,
                    n=row["n_sources"],
                    unit="model",
                    note=f"the authors' method: means of {row['n_sources']} rated sources, own family left out",
                )
            )
    return rows


def one_judge_rows(data: MentalAlign, judge: str, resamples: int = 2000) -> list[Evidence]:
    """`judge_rows` of one judge, computing only its figures (the same as the whole table's: each row's draws depend
    on its seed alone): what a run's report shows about its judge."""
    pooled = pooled_item_agreement(data, judge, resamples)
    return judge_rows(
        judge, pooled, item_agreement(data, resamples, judges=[judge]), icc_table(data, AUTHORS_RESAMPLES, [judge])
    )


def _kappa_row(judge: str, figures: Mapping[str, Any], aspect: str, *, headline: bool = False) -> Evidence:
    kappa = figures["quadratic_kappa"]
    ci = kappa["ci95"]
    return Evidence(
        judge=judge,
        source=MentalAlignSource.name,
        against="clinical experts",
        aspect=aspect,
        statistic="quadratic-weighted kappa",
        value=kappa["value"],
        ci95=(ci[0], ci[1]) if ci else None,
        n=figures["n"],
        unit="item",
        headline=headline,
        note=f"interval over {figures['units']} conversations; Spearman {_short(figures['spearman']['value'])}, "
        f"mean bias {_short(figures['mean_difference']['value'], signed=True)}",
    )


def _short(value: float | None, signed: bool = False) -> str:
    from empathybench.formatting import number

    return number(value, 2, missing="n/a", signed=signed)
