"""Two-sample and paired tests from summary statistics, and a percentile bootstrap (general purpose)."""

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from empathybench.stats.bootstrap import bootstrap


def _scipy_stats() -> Any:
    """scipy.stats, imported when a test is first computed: importing it takes ~60 MB and ~0.5 s, which a run
    should not carry through its model calls (the summary needs it only at the end, if at all)."""
    from scipy import stats

    return stats


def _scipy_special() -> Any:
    """scipy.special, for the distribution functions of the tests computed in every run's summary: the same
    functions scipy.stats calls, without importing scipy.stats (~0.45 s of CPU more, issue 13)."""
    from scipy import special

    return special


Marker = Literal["up", "down", "none"]


@dataclass(frozen=True)
class Describe:
    n: int
    mean: float
    sd: float  # sample SD (n - 1); 0.0 when n < 2


def describe(values: Sequence[float]) -> Describe:
    n = len(values)
    if n == 0:
        return Describe(0, math.nan, math.nan)
    return Describe(n, statistics.fmean(values), statistics.stdev(values) if n > 1 else 0.0)


def f_test_p(sd_a: float, n_a: int, sd_b: float, n_b: int) -> float:
    """Two-sided F-test of equal variances: larger variance over smaller, p = 2 * (1 - CDF)."""
    var_a, var_b = sd_a**2, sd_b**2
    if var_a >= var_b:
        ratio, df_num, df_den = var_a / var_b, n_a - 1, n_b - 1
    else:
        ratio, df_num, df_den = var_b / var_a, n_b - 1, n_a - 1
    return float(2 * (1 - _scipy_special().fdtr(df_num, df_den, ratio)))  # scipy.stats.f.cdf is fdtr


@dataclass(frozen=True)
class Comparison:
    delta: float  # mean(treated) - mean(reference)
    f_p: float
    test: Literal["student", "welch"]
    t: float
    p: float
    marker: Marker


def marker_for(t: float, p: float, alpha: float) -> Marker:
    if not p <= alpha:  # also catches NaN
        return "none"
    return "up" if t > 0 else "down"


def compare_independent(
    treated: Describe, reference: Describe, *, alpha: float = 0.01, epsilon: float = 1e-8
) -> Comparison:
    """F-test for equal variances, then Student's (equal) or Welch's t-test, all from summary statistics.

    epsilon is added to both SDs so that a zero-variance group (every run identical) still gives a finite test.
    """
    sd_t, sd_r = treated.sd + epsilon, reference.sd + epsilon
    f_p = f_test_p(sd_t, treated.n, sd_r, reference.n)
    equal_var = f_p > alpha
    t, p = t_test_from_stats(treated.mean, sd_t, treated.n, reference.mean, sd_r, reference.n, equal_var=equal_var)
    return Comparison(
        treated.mean - reference.mean, f_p, "student" if equal_var else "welch", t, p, marker_for(t, p, alpha)
    )


def t_test_from_stats(
    mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int, *, equal_var: bool
) -> tuple[float, float]:
    """Two-sided Student (pooled) or Welch t-test from summary statistics: t and p, computed as
    scipy.stats.ttest_ind_from_stats computes them (tested equal), for groups of two or more."""
    var_a, var_b = sd_a**2, sd_b**2
    if equal_var:
        df = n_a + n_b - 2.0
        pooled = ((n_a - 1) * var_a + (n_b - 1) * var_b) / df
        denominator = math.sqrt(pooled * (1.0 / n_a + 1.0 / n_b))
    else:
        share_a, share_b = var_a / n_a, var_b / n_b
        try:
            df = (share_a + share_b) ** 2 / (share_a**2 / (n_a - 1) + share_b**2 / (n_b - 1))
        except ZeroDivisionError:
            df = 1.0  # both variances zero: any df will do (scipy's choice)
        denominator = math.sqrt(share_a + share_b)
    difference = mean_a - mean_b
    if denominator == 0:
        t = math.nan if difference == 0 else math.copysign(math.inf, difference)
    else:
        t = difference / denominator
    p = 2 * float(_scipy_special().stdtr(df, -abs(t)))
    return t, p


@dataclass(frozen=True)
class PairedComparison:
    delta: float  # mean of (after - before)
    t: float
    p: float
    marker: Marker


def compare_paired(before: Sequence[float], after: Sequence[float], *, alpha: float = 0.01) -> PairedComparison:
    if len(before) != len(after):
        raise ValueError("paired samples must have the same length")
    differences = [a - b for a, b in zip(after, before, strict=True)]
    result = _scipy_stats().ttest_rel(after, before)
    t, p = float(result.statistic), float(result.pvalue)
    return PairedComparison(statistics.fmean(differences), t, p, marker_for(t, p, alpha))


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return math.nan
    return float(statistics.correlation(x, y))


def bootstrap_interval(
    n: int,
    statistic: Callable[[list[int]], float],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile interval of `statistic` over index resamples (with replacement) of n units: the one bootstrap
    (stats/bootstrap.py); (nan, nan) when no resample gives a finite value."""
    interval = bootstrap(
        lambda indices: statistic(indices.tolist()), n, resamples=resamples, level=confidence, seed=seed
    )
    return interval if interval is not None else (math.nan, math.nan)
