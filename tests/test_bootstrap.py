"""One bootstrap behind every interval (stats/bootstrap.py): one seeded RNG, the same draws everywhere."""

import ast
import math
from pathlib import Path

import numpy as np
import pytest

import empathybench
from empathybench.stats.bootstrap import bootstrap, index_draws, percentile_interval
from empathybench.stats.intervals import mean_interval
from empathybench.stats.tests import bootstrap_interval

VALUES = [float((7 * i) % 11) - 3.5 for i in range(37)]


def test_mean_interval_keeps_its_draws_bit_for_bit() -> None:
    """The draws of 0.1's mean_interval, written out independently: default_rng(seed), (resamples, n) indices."""
    data = np.asarray(VALUES)
    for seed, scale, offset in ((0, 1.0, 0.0), (7, -2.5, 100.0)):
        draws = np.random.default_rng(seed).integers(0, data.size, size=(2000, data.size))
        means = scale * data[draws].mean(axis=1) + offset
        low, high = np.quantile(means, [(1 - 0.95) / 2, (1 + 0.95) / 2])  # as 0.1 wrote it
        expected = (float(min(low, high)), float(max(low, high)))
        assert mean_interval(VALUES, scale=scale, offset=offset, seed=seed) == expected


def test_every_resampler_draws_the_same_indices() -> None:
    """A mean through the general bootstrap (tests.bootstrap_interval) equals the vectorised item bootstrap."""

    def mean_of(indices: list[int]) -> float:
        return float(np.mean([VALUES[i] for i in indices]))

    for seed in (0, 3):
        by_units = bootstrap_interval(len(VALUES), mean_of, seed=seed)
        assert by_units == pytest.approx(mean_interval(VALUES, seed=seed), abs=1e-12)
    rows = index_draws(5, resamples=4, seed=11)
    assert rows.shape == (4, 5) and rows.min() >= 0 and rows.max() < 5
    assert (rows == np.random.default_rng(11).integers(0, 5, size=(4, 5))).all()


def test_non_finite_resamples_are_dropped_and_none_left_is_no_interval() -> None:
    assert percentile_interval([math.nan, math.inf]) is None
    assert bootstrap(lambda idx: math.nan, 5) is None
    assert bootstrap(lambda idx: 1.0, 0) is None
    assert bootstrap_interval(4, lambda idx: math.nan) == pytest.approx((math.nan, math.nan), nan_ok=True)
    low, high = percentile_interval([1.0, math.nan, 3.0, 2.0])
    assert 1.0 <= low < high <= 3.0


def test_no_other_module_makes_its_own_bootstrap_rng() -> None:
    """numpy generators are made only in stats/bootstrap.py (the random.Random shuffles elsewhere are protocol
    orders and retry jitter, not intervals)."""
    package = Path(empathybench.__file__).resolve().parent
    offenders = []
    for path in package.rglob("*.py"):
        if path.name == "bootstrap.py" and path.parent.name == "stats":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("default_rng", "RandomState", "Generator"):
                offenders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert offenders == []
