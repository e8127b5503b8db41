"""The one bootstrap behind every interval in EmpathyBench: one RNG, seeded, and one percentile rule.

Every resample draws unit indices with replacement from `numpy.random.default_rng(seed)` (a resample is a row of
`rng.integers(0, n, (resamples, n))`), and the interval is the percentile interval of the statistic over the resamples
(numpy's linear quantile, non-finite values dropped). Item means (`intervals.mean_interval`), statistics over
units (`tests.bootstrap_interval`: correlations, ratios) and clustered designs (EmotionBench's situations) all draw
from here, so the same seed means the same draws everywhere.
"""

from collections.abc import Callable, Sequence

import numpy as np

RESAMPLES = 2000
LEVEL = 0.95


def generator(seed: int) -> np.random.Generator:
    """The bootstrap's random number generator (for designs that draw more than one index set per resample)."""
    return np.random.default_rng(seed)


def index_draws(
    n: int, *, resamples: int = RESAMPLES, seed: int = 0, rng: np.random.Generator | None = None
) -> np.ndarray:
    """`resamples` rows of `n` unit indices drawn with replacement (shape (resamples, n))."""
    return (rng if rng is not None else generator(seed)).integers(0, n, size=(resamples, n))


def percentile_interval(estimates: Sequence[float] | np.ndarray, level: float = LEVEL) -> tuple[float, float] | None:
    """The central `level` percentile interval of the finite `estimates` (None when there is none)."""
    values = np.asarray(estimates, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    low, high = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(min(low, high)), float(max(low, high))


def bootstrap(
    statistic: Callable[[np.ndarray], float],
    n: int,
    *,
    resamples: int = RESAMPLES,
    level: float = LEVEL,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile interval of `statistic(indices)` over index resamples of n units (None: n == 0 or no finite one)."""
    if n <= 0:
        return None
    return percentile_interval([statistic(row) for row in index_draws(n, resamples=resamples, seed=seed)], level)
