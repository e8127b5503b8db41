"""Headline numbers with their intervals: one shape for every instrument, so reports and comparisons are generic.

A headline metric is a JSON object in `summary.json` (`benchmarks.<name>.metrics.<key>`):

    {"label", "value", "ci95": [low, high] | null, "n", "unit", "higher_is_better", "method",
     "items": {item_id: value} | null, "scale", "offset", "paired_test", "reference": {...} | null}

For a *mean-type* metric, `value = scale * mean(items.values()) + offset`, and the interval is a seeded percentile
bootstrap over items. Keeping the per-item values lets `empathybench report A B` pair two runs on their shared
items without re-reading the benchmark data. Other metrics (correlations, ratios) carry their own interval and
`items: null`; they are compared side by side, not paired.
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from empathybench.stats.bootstrap import LEVEL, RESAMPLES, index_blocks, percentile_interval

__all__ = ["LEVEL", "RESAMPLES", "bootstrap_method", "mean_interval", "mean_metric", "metric"]

PairedTest = Literal["paired_t", "wilcoxon", "mcnemar", "none"]


def _finite_or_none(value: float | None, digits: int = 4) -> float | None:
    import numpy as np  # here, not with the module (stats/bootstrap.py says why)

    if value is None or not np.isfinite(value):
        return None
    return round(float(value), digits)


def bootstrap_method(resamples: int = RESAMPLES, seed: int = 0, unit: str = "items") -> str:
    return f"percentile bootstrap over {unit}, {resamples} resamples, seed {seed}, 95%"


def paired_mean_difference(
    first: Mapping[str, float], second: Mapping[str, float], keys: Sequence[str], *, scale: float = 1.0
) -> tuple[float, tuple[float, float] | None]:
    """The mean of scale * (first - second) over `keys` (paired: one difference per key) and its percentile
    bootstrap interval (`mean_interval`); `keys` must not be empty."""
    differences = [scale * (float(first[k]) - float(second[k])) for k in keys]
    return math.fsum(differences) / len(differences), mean_interval(differences)


def mean_interval(
    values: Sequence[float],
    *,
    scale: float = 1.0,
    offset: float = 0.0,
    resamples: int = RESAMPLES,
    level: float = LEVEL,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of `scale * mean + offset`, resampling the values with replacement."""
    import numpy as np

    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None
    # a block of resamples at a time (stats/bootstrap.index_blocks): the same draws without the whole matrix
    means = np.concatenate(
        [data[block].mean(axis=1) for block in index_blocks(data.size, resamples=resamples, seed=seed)]
    )
    return percentile_interval(scale * means + offset, level)


def metric(
    label: str,
    value: float | None,
    ci95: tuple[float, float] | None,
    *,
    n: int,
    method: str,
    unit: str = "",
    higher_is_better: bool | None = True,
    reference: Mapping[str, Any] | None = None,
    digits: int = 4,
) -> dict[str, Any]:
    """A headline metric whose interval was computed by the caller (not a plain mean over items)."""
    return {
        "label": label,
        "value": _finite_or_none(value, digits),
        "ci95": [_finite_or_none(ci95[0], digits), _finite_or_none(ci95[1], digits)] if ci95 is not None else None,
        "n": n,
        "unit": unit,
        "higher_is_better": higher_is_better,
        "method": method,
        "items": None,
        "scale": 1.0,
        "offset": 0.0,
        "paired_test": "none",
        "reference": dict(reference) if reference is not None else None,
    }


def mean_metric(
    label: str,
    items: Mapping[str, float],
    *,
    scale: float = 1.0,
    offset: float = 0.0,
    unit: str = "",
    higher_is_better: bool | None = True,
    paired_test: PairedTest = "paired_t",
    reference: Mapping[str, Any] | None = None,
    seed: int = 0,
    value: float | None = None,
    digits: int = 4,
) -> dict[str, Any]:
    """A metric that is `scale * mean(items) + offset`, with its item-bootstrap interval.

    `value` may be given when the instrument rounds its published figure differently; it must agree with the
    items (checked to 1e-6 relative), so the stored items always reproduce the headline.
    """
    import numpy as np

    values = [float(v) for v in items.values()]
    computed = scale * float(np.mean(values)) + offset if values else None
    if value is not None and computed is not None and not np.isclose(value, computed, rtol=1e-6, atol=1e-6):
        raise ValueError(f"{label}: value {value} does not follow from its items ({computed})")
    ci = mean_interval(values, scale=scale, offset=offset, seed=seed)
    result = metric(
        label,
        computed if value is None else value,
        ci,
        n=len(values),
        method=bootstrap_method(seed=seed),
        unit=unit,
        higher_is_better=higher_is_better,
        reference=reference,
        digits=digits,
    )
    result.update(
        items={key: round(float(v), 6) for key, v in items.items()},
        scale=scale,
        offset=offset,
        paired_test=paired_test,
    )
    return result
