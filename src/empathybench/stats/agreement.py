"""Agreement between two raters on an ordinal scale, and rank correlations."""

import math
from collections.abc import Sequence
from typing import Any


def confusion_matrix(first: Sequence[int], second: Sequence[int], categories: Sequence[int]) -> list[list[int]]:
    """matrix[i][j] = items rated categories[i] by `first` and categories[j] by `second`."""
    position = {c: i for i, c in enumerate(categories)}
    matrix = [[0] * len(categories) for _ in categories]
    for a, b in zip(first, second, strict=True):
        matrix[position[a]][position[b]] += 1
    return matrix


def accuracy(first: Sequence[int], second: Sequence[int]) -> float | None:
    if not first:
        return None
    return sum(a == b for a, b in zip(first, second, strict=True)) / len(first)


def weighted_kappa(
    first: Sequence[int], second: Sequence[int], categories: Sequence[int], weights: str = "linear"
) -> float | None:
    """Cohen's weighted kappa with linear or quadratic disagreement weights; None when undefined."""
    n = len(first)
    k = len(categories)
    if n == 0 or k < 2:
        return None
    matrix = confusion_matrix(first, second, categories)
    row_totals = [sum(row) for row in matrix]
    col_totals = [sum(matrix[i][j] for i in range(k)) for j in range(k)]
    power = 1 if weights == "linear" else 2
    observed = expected = 0.0
    for i in range(k):
        for j in range(k):
            weight = (abs(i - j) / (k - 1)) ** power
            observed += weight * matrix[i][j] / n
            expected += weight * row_totals[i] * col_totals[j] / (n * n)
    if expected == 0:
        return None  # both raters used one and the same category: agreement is not measurable
    return 1.0 - observed / expected


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def spearman(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float | None]:
    """Spearman rho and its p-value; (None, None) when either side is constant or too short."""
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return None, None
    from scipy.stats import spearmanr

    result = spearmanr(x, y)
    return _finite(result.statistic), _finite(result.pvalue)


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall tau-b between two orderings of the same things (e.g. sources by Good%)."""
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    from scipy.stats import kendalltau

    return _finite(kendalltau(x, y).statistic)


# --- two raters on paired values grouped in clusters, with cluster-bootstrap intervals -----------------------------

# The per-cluster sums every figure below is a function of, so a resample of clusters is a sum of rows.
_SUMS = ("n", "x", "y", "xx", "yy", "xy", "rx", "ry", "rxrx", "ryry", "rxry", "both", "x_only", "y_only", "neither")
CLUSTERED_AGREEMENT_METHOD = (
    "percentile bootstrap over {unit}, {resamples} resamples, seed {seed}, 95% (the {unit} resampled whole, as the "
    "values within one are not independent); Spearman's rho is Pearson's r of the mid-ranks over all values, held "
    "in the resamples; incidence: a value above 0; kappa: Cohen's on incidence"
)


def _pearson_of(sx: Any, sy: Any, sxx: Any, syy: Any, sxy: Any, n: Any) -> Any:
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        vx = sxx - sx * sx / n
        vy = syy - sy * sy / n
        cov = sxy - sx * sy / n
        scale = np.sqrt(np.where((vx > 1e-12) & (vy > 1e-12), vx * vy, np.nan))
        return np.clip(cov / scale, -1.0, 1.0)


def _figures(totals: Any) -> dict[str, Any]:
    """Every figure of rows of sums (one row per resample, columns as _SUMS)."""
    import numpy as np

    t = {name: totals[:, i] for i, name in enumerate(_SUMS)}
    n = t["n"]
    with np.errstate(invalid="ignore", divide="ignore"):
        agreement = (t["both"] + t["neither"]) / n
        x_rate, y_rate = (t["both"] + t["x_only"]) / n, (t["both"] + t["y_only"]) / n
        chance = x_rate * y_rate + (1 - x_rate) * (1 - y_rate)
        kappa = np.where(chance < 1 - 1e-12, (agreement - chance) / (1 - chance), np.nan)
        return {
            "mean_difference": (t["y"] - t["x"]) / n,
            "pearson": _pearson_of(t["x"], t["y"], t["xx"], t["yy"], t["xy"], n),
            "spearman": _pearson_of(t["rx"], t["ry"], t["rxrx"], t["ryry"], t["rxry"], n),
            "incidence_agreement": agreement,
            "kappa": kappa,
        }


def mid_ranks(values: Any) -> Any:
    """The ranks 1..n of `values`, ties given the mean of their ranks (scipy's rankdata "average", without scipy)."""
    import numpy as np

    data = np.asarray(values, dtype=float)
    order = np.argsort(data, kind="mergesort")
    ordered = data[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # the first position of each run of ties
    ends = np.r_[starts[1:], len(data)]
    ranks = np.empty(len(data))
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)  # positions start..end-1 are ranks start+1..end
    return ranks


def _rounded(value: float) -> float | None:
    return round(float(value), 4) if math.isfinite(value) else None


def clustered_agreement(
    clusters: Sequence[Sequence[tuple[float, float]]], *, seed: int = 0, resamples: int | None = None, unit: str = ""
) -> dict[str, Any]:
    """How a rater y agrees with a reference rater x on paired values (x, y) grouped in clusters (e.g. the chunks of
    one conversation): the mean difference y - x, Pearson's r and Spearman's rho of the values, the share of values
    whose incidence (a value above 0) both give alike and Cohen's kappa of it, each with a 95% interval from resampling
    whole clusters (stats/bootstrap.py), and n (values) and the clusters. A figure that is undefined (a rater gives
    one value throughout) is None."""
    import numpy as np

    from empathybench.stats.bootstrap import RESAMPLES, index_blocks, percentile_interval

    draws = RESAMPLES if resamples is None else resamples
    kept = [[(float(x), float(y)) for x, y in cluster] for cluster in clusters]
    kept = [cluster for cluster in kept if cluster]
    pairs = np.array([pair for cluster in kept for pair in cluster], dtype=float).reshape(-1, 2)
    owner = np.repeat(np.arange(len(kept)), [len(cluster) for cluster in kept])
    result: dict[str, Any] = {"n": len(pairs), "clusters": len(kept)}
    if len(pairs) == 0:
        return result
    x, y = pairs[:, 0], pairs[:, 1]
    rx, ry = mid_ranks(x), mid_ranks(y)
    seen_x, seen_y = x > 0, y > 0
    columns = [
        np.ones_like(x),
        *(x, y, x * x, y * y, x * y),
        *(rx, ry, rx * rx, ry * ry, rx * ry),
        *(seen_x & seen_y, seen_x & ~seen_y, ~seen_x & seen_y, ~seen_x & ~seen_y),
    ]
    sums = np.zeros((len(kept), len(_SUMS)))
    np.add.at(sums, owner, np.column_stack(columns).astype(float))
    point = _figures(sums.sum(axis=0, keepdims=True))
    estimates: dict[str, list[Any]] = {name: [] for name in point}
    if len(kept) >= 2:
        for block in index_blocks(len(kept), resamples=draws, seed=seed):
            rows = len(block)  # how often each resample drew each cluster, by one bincount of (row, cluster) cells
            cells = (np.arange(rows)[:, None] * len(kept) + block).ravel()
            counts = np.bincount(cells, minlength=rows * len(kept)).reshape(rows, len(kept))
            for name, values in _figures(counts @ sums).items():
                estimates[name].append(values)
    result.update(mean_reference=_rounded(float(x.mean())), mean_other=_rounded(float(y.mean())))
    result.update(incidence_reference=_rounded(float(seen_x.mean())), incidence_other=_rounded(float(seen_y.mean())))
    for name, value in point.items():
        figure = _rounded(float(value[0]))
        interval = (
            percentile_interval(np.concatenate(estimates[name])) if figure is not None and estimates[name] else None
        )
        result[name] = {
            "value": figure,
            "ci95": None if interval is None else [_rounded(interval[0]), _rounded(interval[1])],
        }
    result["method"] = CLUSTERED_AGREEMENT_METHOD.format(unit=unit or "clusters", resamples=draws, seed=seed)
    return result
