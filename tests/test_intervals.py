"""Headline metrics and their intervals (stats/intervals.py) and paired differences (report/compare.py)."""

import math
import random

import numpy as np
import pytest
from scipy import stats as scipy_stats

from empathybench.report.compare import paired_difference
from empathybench.stats.contingency import mcnemar_exact_p
from empathybench.stats.intervals import RESAMPLES, mean_interval, mean_metric, metric
from empathybench.stats.tests import bootstrap_interval


def test_mean_metric_value_follows_scale_and_offset() -> None:
    items = {"a": 1.0, "b": 2.0, "c": 6.0}
    entry = mean_metric("m", items, scale=-2.0, offset=10.0)
    assert entry["value"] == pytest.approx(-2.0 * 3.0 + 10.0)
    low, high = entry["ci95"]
    assert low <= entry["value"] <= high
    # Resampled means of -2x+10 lie between the smallest and largest item mapped through the same line.
    assert low >= -2.0 * 6.0 + 10.0 - 1e-9 and high <= -2.0 * 1.0 + 10.0 + 1e-9
    assert entry["items"] == items and entry["n"] == 3


def test_mean_metric_refuses_a_value_its_items_do_not_give() -> None:
    with pytest.raises(ValueError, match="does not follow"):
        mean_metric("m", {"a": 1.0, "b": 3.0}, value=5.0)


def test_interval_is_seeded_and_narrows_with_more_items() -> None:
    rng = random.Random(1)
    small = [rng.gauss(0, 1) for _ in range(20)]
    large = [rng.gauss(0, 1) for _ in range(2000)]
    assert mean_interval(small, seed=3) == mean_interval(small, seed=3)
    assert mean_interval(small, seed=3) != mean_interval(small, seed=4)
    width_small = mean_interval(small)[1] - mean_interval(small)[0]
    width_large = mean_interval(large)[1] - mean_interval(large)[0]
    assert width_large < width_small / 5
    # The bootstrap interval of a mean is close to the normal one for many items.
    sd = scipy_stats.tstd(large) / math.sqrt(len(large))
    assert width_large == pytest.approx(2 * 1.96 * sd, rel=0.1)


def test_empty_items_give_no_value_and_no_interval() -> None:
    entry = mean_metric("m", {})
    assert entry["value"] is None and entry["ci95"] is None and entry["n"] == 0


def test_metric_with_a_bootstrapped_statistic() -> None:
    x = list(range(30))
    y = [v + (3 if v % 2 else -3) for v in x]
    interval = bootstrap_interval(
        30, lambda idx: float(scipy_stats.pearsonr([x[i] for i in idx], [y[i] for i in idx])[0])
    )
    assert interval is not None and 0.8 < interval[0] < interval[1] <= 1.0
    entry = metric("r", 0.95, interval, n=30, method="bootstrap")
    assert entry["items"] is None and entry["paired_test"] == "none" and entry["ci95"][0] == round(interval[0], 4)


def test_paired_difference_mcnemar_matches_a_hand_count() -> None:
    # 10 shared items: the second run is right on 2 where the first is wrong, and wrong on 6 where it is right.
    first = {f"i{k}": 100.0 if k < 8 else 0.0 for k in range(10)}
    second = {f"i{k}": 100.0 if k in (0, 1, 8, 9) else 0.0 for k in range(10)}
    a = mean_metric("acc", first, unit="%", paired_test="mcnemar")
    b = mean_metric("acc", {**second, "only-in-b": 100.0}, unit="%", paired_test="mcnemar")
    result = paired_difference(a, b)
    assert result is not None
    assert result["n_shared"] == 10  # the item only one run has is left out
    assert result["difference"] == pytest.approx(80.0 - 40.0)
    assert result["p"] == pytest.approx(mcnemar_exact_p(6, 2), abs=1e-6)
    assert result["ci95"][0] <= 40.0 <= result["ci95"][1]


def test_paired_difference_wilcoxon_and_t_use_scipy_on_the_shared_items() -> None:
    rng = random.Random(7)
    base = {f"i{k}": rng.gauss(5, 2) for k in range(40)}
    better = {key: value + 0.8 + rng.gauss(0, 1) for key, value in base.items()}
    for test, reference in (("wilcoxon", scipy_stats.wilcoxon), ("paired_t", scipy_stats.ttest_rel)):
        a = mean_metric("s", better, scale=10.0, paired_test=test)  # type: ignore[arg-type]
        b = mean_metric("s", base, scale=10.0, paired_test=test)  # type: ignore[arg-type]
        result = paired_difference(a, b)
        keys = list(base)
        expected_p = reference([better[k] for k in keys], [base[k] for k in keys]).pvalue
        assert result is not None and result["p"] == pytest.approx(expected_p, abs=2e-6)
        expected = 10.0 * sum(better[k] - base[k] for k in keys) / len(keys)
        assert result["difference"] == pytest.approx(expected, abs=1e-3)
        assert result["ci95"][0] > 0  # a clear improvement


def test_metrics_without_items_are_not_paired() -> None:
    a = metric("r", 0.5, (0.1, 0.8), n=8, method="bootstrap")
    assert paired_difference(a, a) is None


@pytest.mark.parametrize("n_items", [1, 7, 523, 4_330])
def test_interval_is_the_one_matrix_bootstrap_made_in_blocks(n_items: int) -> None:
    # The interval is computed a block of resamples at a time (memory); it must be exactly the bootstrap of one
    # (resamples x items) matrix of int64 indices, as it was computed before.
    values = np.random.default_rng(99).normal(20.0, 5.0, size=n_items)
    for seed in (0, 7):
        draws = np.random.default_rng(seed).integers(0, n_items, size=(RESAMPLES, n_items))
        means = 2.0 * values[draws].mean(axis=1) + 1.0
        low, high = np.quantile(means, [0.025, 0.975])
        assert mean_interval(list(values), scale=2.0, offset=1.0, seed=seed) == (float(low), float(high))
