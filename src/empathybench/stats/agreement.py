"""Agreement between two raters on an ordinal scale, and rank correlations."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


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


def icc_consistency_and_agreement(matrix: np.ndarray) -> tuple[float, float]:
    """ICC(C,1) and ICC(A,1) (McGraw & Wong 1996; Shrout & Fleiss' ICC(3,1) and ICC(2,1)) of an (n targets x k raters)
    matrix, from the two-way ANOVA mean squares; NaN where undefined (fewer than 2 targets or raters, no variance)."""
    consistency, absolute = icc_stacked(matrix[None, ...])
    return float(consistency[0]), float(absolute[0])


def icc_stacked(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`icc_consistency_and_agreement` of each (n x k) matrix of a stack (shape (r, n, k)), at once."""
    import numpy as np

    r, n, k = matrices.shape
    if n < 2 or k < 2:
        return np.full(r, np.nan), np.full(r, np.nan)
    grand = matrices.mean(axis=(1, 2))
    ss_rows = k * ((matrices.mean(axis=2) - grand[:, None]) ** 2).sum(axis=1)
    ss_columns = n * ((matrices.mean(axis=1) - grand[:, None]) ** 2).sum(axis=1)
    ss_error = ((matrices - grand[:, None, None]) ** 2).sum(axis=(1, 2)) - ss_rows - ss_columns
    ms_rows, ms_columns = ss_rows / (n - 1), ss_columns / (k - 1)
    ms_error = ss_error / ((n - 1) * (k - 1))
    consistency = ms_rows + (k - 1) * ms_error
    absolute = consistency + k * (ms_columns - ms_error) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        c1 = np.where(consistency != 0, (ms_rows - ms_error) / consistency, np.nan)
        a1 = np.where(absolute != 0, (ms_rows - ms_error) / absolute, np.nan)
    return c1, a1


ORDINAL_STATISTICS = ("quadratic_kappa", "spearman", "mean_difference", "exact_agreement")


def _ordinal_statistics(counts: np.ndarray, categories: np.ndarray) -> dict[str, np.ndarray]:
    """Each statistic of ORDINAL_STATISTICS for a stack of (k x k) count tables (shape (r, k, k)): rows are the
    first rater's category, columns the second's. Spearman's rho is Pearson's r of the average ranks (scipy's
    spearmanr with ties), which depend on the tables' margins only."""
    import numpy as np

    k = counts.shape[-1]
    total = counts.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / total[:, None, None]
        first, second = p.sum(axis=2), p.sum(axis=1)
        steps = np.arange(k)
        weights = ((steps[:, None] - steps[None, :]) / (k - 1)) ** 2
        observed = (p * weights).sum(axis=(1, 2))
        expected = np.einsum("ri,rj,ij->r", first, second, weights)
        kappa = np.where(expected > 0, 1 - observed / expected, np.nan)

        def average_ranks(margin: np.ndarray) -> np.ndarray:
            n_in = margin * total[:, None]
            below = np.cumsum(n_in, axis=1) - n_in
            return below + (n_in + 1) / 2

        rank_first, rank_second = average_ranks(first), average_ranks(second)
        mean_first = (first * rank_first).sum(axis=1)
        mean_second = (second * rank_second).sum(axis=1)
        centred_first = rank_first - mean_first[:, None]
        centred_second = rank_second - mean_second[:, None]
        covariance = np.einsum("rij,ri,rj->r", p, centred_first, centred_second)
        variance = (first * centred_first**2).sum(axis=1) * (second * centred_second**2).sum(axis=1)
        rho = np.where(variance > 0, covariance / np.sqrt(variance), np.nan)
        difference = (second * categories[None, :]).sum(axis=1) - (first * categories[None, :]).sum(axis=1)
        exact = np.trace(p, axis1=1, axis2=2)
    return {"quadratic_kappa": kappa, "spearman": rho, "mean_difference": difference, "exact_agreement": exact}


# The draws of a clustered design are kept for the next statistic with the same units, resamples and seed (the
# counts matrix is resamples x units floats: kept only up to 4M of them, 32 MB).
MAX_KEPT_DRAWS = 1 << 22


@lru_cache(maxsize=2)
def _kept_draw_counts(units: int, resamples: int, seed: int) -> np.ndarray:
    import numpy as np

    return np.concatenate(list(_draw_counts(units, resamples, seed)))


def _draw_counts(units: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Per resample, how often each unit was drawn: blocks of rows of a (resamples x units) matrix, from the rows of
    `index_draws(units, resamples, seed)`."""
    import numpy as np

    from empathybench.stats.bootstrap import index_blocks

    for block in index_blocks(units, resamples=resamples, seed=seed):
        rows = block.shape[0]
        drawn = np.bincount((block + (np.arange(rows) * units)[:, None]).ravel(), minlength=rows * units)
        yield drawn.reshape(rows, units).astype(float)


def ordinal_agreement(
    first: Sequence[float],
    second: Sequence[float],
    categories: Sequence[float],
    *,
    unit_of: Sequence[int] | None = None,
    units: int | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Two raters on one ordinal scale, item by item: quadratic-weighted kappa, Spearman's rho, the mean difference
    (second - first) and the exact agreement, each with its percentile bootstrap interval and n. Every value must be
    one of `categories`.

    The bootstrap is the project's one (stats/bootstrap.py: the same draws for every statistic). With `unit_of` (the
    unit, 0..units-1, each item belongs to: e.g. the conversation several replies answer) it draws the `units` with
    replacement and an item comes with its unit; without, it draws items. A resample's statistics come from its
    (k x k) table of counts, the sum of its units' tables, so 10,000 items in 1,000 units and 2,000 resamples take a
    few hundredths of a second once the draws are made (they are kept for the next call with the same units)."""
    import numpy as np

    from empathybench.stats.bootstrap import percentile_interval

    scale = np.asarray(categories, dtype=float)
    k = scale.size
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    code_a, code_b = np.searchsorted(scale, a), np.searchsorted(scale, b)
    on_scale = a.shape == b.shape and (code_a < k).all() and (code_b < k).all()
    if not on_scale or (scale[np.minimum(code_a, k - 1)] != a).any() or (scale[np.minimum(code_b, k - 1)] != b).any():
        raise ValueError("ordinal_agreement: the ratings must come in pairs, each one of the categories")
    codes = code_a * k + code_b
    n = int(codes.size)
    if unit_of is None:
        unit_index, units = np.arange(n), n
    else:
        unit_index = np.asarray(unit_of, dtype=int)
        units = int(units if units is not None else (unit_index.max() + 1 if n else 0))
    unit_tables = np.bincount(unit_index * k * k + codes, minlength=units * k * k).reshape(units, k * k).astype(float)
    point = _ordinal_statistics(unit_tables.sum(axis=0).reshape(1, k, k), scale)
    result: dict[str, Any] = {"n": n, "units": units, "resamples": resamples, "seed": seed}
    estimates: dict[str, list[Any]] = {name: [] for name in ORDINAL_STATISTICS}
    if n:
        kept = units * resamples <= MAX_KEPT_DRAWS
        blocks = [_kept_draw_counts(units, resamples, seed)] if kept else _draw_counts(units, resamples, seed)
        for drawn in blocks:
            tables = (drawn @ unit_tables).reshape(-1, k, k)
            for name, values in _ordinal_statistics(tables, scale).items():
                estimates[name].append(values)
    for name in ORDINAL_STATISTICS:
        value = float(point[name][0]) if n else math.nan
        interval = percentile_interval(np.concatenate(estimates[name])) if n else None
        result[name] = {"value": None if math.isnan(value) else value, "ci95": list(interval) if interval else None}
    return result


def spearman_interval(
    x: Sequence[float], y: Sequence[float], *, resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """The percentile bootstrap interval of Spearman's rho over the pairs (the draws of stats/bootstrap.py, as
    `tests.bootstrap_interval` of `spearman` gives it), every resample ranked at once: the same interval in a
    fraction of the time. None: fewer than 3 pairs or no resample with a rho."""
    import numpy as np
    from scipy.stats import rankdata

    from empathybench.stats.bootstrap import index_draws, percentile_interval

    if len(x) < 3 or len(x) != len(y):
        return None
    draws = index_draws(len(x), resamples=resamples, seed=seed)
    ranked_x = rankdata(np.asarray(x, dtype=float)[draws], axis=1)
    ranked_y = rankdata(np.asarray(y, dtype=float)[draws], axis=1)
    dx = ranked_x - ranked_x.mean(axis=1, keepdims=True)
    dy = ranked_y - ranked_y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(denominator > 0, (dx * dy).sum(axis=1) / denominator, np.nan)  # a constant side: no rho
    return percentile_interval(rho, level)


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
