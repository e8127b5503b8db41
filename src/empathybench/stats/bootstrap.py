"""The one bootstrap behind every interval in EmpathyBench: one RNG, seeded, and one percentile rule.

Every resample draws unit indices with replacement from `numpy.random.default_rng(seed)` (a resample is a row of
`rng.integers(0, n, (resamples, n))`), and the interval is the percentile interval of the statistic over the resamples
(numpy's linear quantile, non-finite values dropped). Item means (`intervals.mean_interval`), statistics over
units (`tests.bootstrap_interval`: correlations, ratios) and clustered designs (EmotionBench's situations) all draw
from here, so the same seed means the same draws everywhere.

numpy is imported where it is used, not with this module: every instrument imports the statistics, and a re-run of a
finished run, which computes none, then never loads numpy (~0.1 s of its start-up).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

RESAMPLES = 2000
LEVEL = 0.95
# How many indices `index_blocks` draws at a time (4 MB of int32): a 4,000-item run no longer holds a resamples x items
# matrix of indices and one of floats at once (~140 MB).
BLOCK_ELEMENTS = 1 << 20


def generator(seed: int) -> np.random.Generator:
    """The bootstrap's random number generator (for designs that draw more than one index set per resample)."""
    import numpy as np

    return np.random.default_rng(seed)


def index_draws(n: int, *, resamples: int = RESAMPLES, seed: int = 0) -> np.ndarray:
    """`resamples` rows of `n` unit indices drawn with replacement (shape (resamples, n)): the draws `index_blocks`
    yields block by block, whole (the reference the tests hold the blocks to)."""
    return generator(seed).integers(0, n, size=(resamples, n))


def index_blocks(n: int, *, resamples: int = RESAMPLES, seed: int = 0) -> Iterator[np.ndarray]:
    """The rows of `index_draws(n, ...)`, a block of rows at a time, as the very same draws: numpy draws any range
    below 2**32 with its 32-bit generator, whose spare half-word stays in the bit generator between calls, so blocks
    of int32 indices continue the stream of the one int64 matrix (tests/test_intervals.py checks it)."""
    import numpy as np

    draw = generator(seed)
    index_type = np.int32 if n < 2**31 else np.int64
    rows = max(1, BLOCK_ELEMENTS // max(n, 1))
    for start in range(0, resamples, rows):
        yield draw.integers(0, n, size=(min(rows, resamples - start), n), dtype=index_type)


def percentile_interval(estimates: Sequence[float] | np.ndarray, level: float = LEVEL) -> tuple[float, float] | None:
    """The central `level` percentile interval of the finite `estimates` (None when there is none)."""
    import numpy as np

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
    estimates = [statistic(row) for block in index_blocks(n, resamples=resamples, seed=seed) for row in block]
    return percentile_interval(estimates, level)


def legacy_reseeded_draws(n: int, *, resamples: int, seed: int, seed_range: int) -> np.ndarray:
    """The draws of a published analysis that reseeds numpy's legacy global generator for every resample (rows of
    `n` indices with replacement): `numpy.random.seed(seed)`, `resamples` seeds from `randint(0, seed_range)`, then
    per resample `numpy.random.seed(s)` and `choice(n, n)`. Not this project's bootstrap: only what reproduces such a
    published interval (MentalAlign's ICC, judges/mentalalign.py); made here, with the global state left untouched."""
    import numpy as np

    seeds = np.random.RandomState(seed).randint(0, seed_range, resamples)
    return np.stack([np.random.RandomState(s).choice(n, size=n, replace=True) for s in seeds])
