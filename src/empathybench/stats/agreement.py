"""Agreement between two raters on an ordinal scale, and rank correlations."""

import math
from collections.abc import Sequence


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
