"""ICC and item-by-item ordinal agreement (stats/agreement.py) against textbook values and scipy, and their intervals
drawn by the project's one bootstrap."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from empathybench.stats.agreement import (
    icc_consistency_and_agreement,
    icc_stacked,
    ordinal_agreement,
    weighted_kappa,
)
from empathybench.stats.intervals import mean_interval

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges; ICC(3,1) = 0.71 (consistency), ICC(2,1) = 0.29.
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)


def test_icc_reproduces_shrout_and_fleiss() -> None:
    consistency, absolute = icc_consistency_and_agreement(SHROUT_FLEISS)
    assert round(consistency, 2) == 0.71 and round(absolute, 2) == 0.29
    stacked_c, stacked_a = icc_stacked(np.stack([SHROUT_FLEISS, SHROUT_FLEISS[::-1]]))
    assert stacked_c == pytest.approx([consistency] * 2) and stacked_a == pytest.approx([absolute] * 2)
    assert np.isnan(icc_consistency_and_agreement(np.ones((5, 2)))[0])  # no variance: undefined, not an error


def _raters(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    draw = np.random.default_rng(seed)
    first = draw.integers(1, 6, n)
    return first, np.clip(first + draw.integers(-1, 2, n), 1, 5)


def test_ordinal_agreement_is_scipy_s_spearman_and_the_kappa_of_the_project() -> None:
    first, second = _raters(600, 3)
    result = ordinal_agreement(first, second, [1, 2, 3, 4, 5], resamples=200)
    assert result["n"] == 600 and result["units"] == 600
    assert result["spearman"]["value"] == pytest.approx(spearmanr(first, second).statistic, abs=1e-12)
    kappa = weighted_kappa(list(first), list(second), [1, 2, 3, 4, 5], "quadratic")
    assert result["quadratic_kappa"]["value"] == pytest.approx(kappa, abs=1e-12)
    assert result["mean_difference"]["value"] == pytest.approx(float((second - first).mean()))
    assert result["exact_agreement"]["value"] == pytest.approx(float((first == second).mean()))
    for name in ("quadratic_kappa", "spearman", "mean_difference", "exact_agreement"):
        low, high = result[name]["ci95"]
        assert low < result[name]["value"] < high
    # Drawn over items, the mean difference's interval is the one bootstrap's interval of the mean: the same draws.
    assert result["mean_difference"]["ci95"] == pytest.approx(list(mean_interval(second - first, resamples=200)))


def test_ordinal_agreement_draws_clusters_together_and_refuses_off_scale_ratings() -> None:
    first, second = _raters(900, 4)
    clustered = ordinal_agreement(first, second, [1, 2, 3, 4, 5], unit_of=np.arange(900) // 9, units=100, resamples=200)
    assert clustered["units"] == 100 and clustered["n"] == 900
    plain = ordinal_agreement(first, second, [1, 2, 3, 4, 5], resamples=200)
    assert clustered["quadratic_kappa"]["value"] == plain["quadratic_kappa"]["value"]  # the estimate is the same
    assert clustered["quadratic_kappa"]["ci95"] != plain["quadratic_kappa"]["ci95"]  # the draws are not
    with pytest.raises(ValueError):
        ordinal_agreement([0, 1], [1, 2], [1, 2, 3, 4, 5])
    empty = ordinal_agreement([], [], [1, 2, 3, 4, 5])
    assert empty["n"] == 0 and empty["spearman"] == {"value": None, "ci95": None}
