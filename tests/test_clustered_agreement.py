"""stats.agreement.clustered_agreement against scipy and hand-computed figures, and its cluster bootstrap."""

import math

import pytest
from scipy.stats import pearsonr, rankdata, spearmanr

from empathybench.stats.agreement import clustered_agreement, mid_ranks
from empathybench.stats.equivalence import equivalence_verdict

CLUSTERS = [
    [(0, 0), (1, 2), (3, 3), (0, 1)],
    [(2, 2), (0, 0), (0, 0)],
    [(1, 0), (4, 5), (2, 2), (0, 0), (3, 2)],
    [(0, 0), (0, 3)],
]


def test_mid_ranks_are_scipys_average_ranks() -> None:
    for values in ([3.0], [1.0, 1.0], [2.0, 0.0, 2.0, 1.0, 0.0, 0.0], [5.0, 4.0, 3.0, 2.0]):
        assert list(mid_ranks(values)) == pytest.approx(list(rankdata(values)))


def test_figures_are_the_pooled_ones_and_intervals_hold_them() -> None:
    x = [float(a) for cluster in CLUSTERS for a, _ in cluster]
    y = [float(b) for cluster in CLUSTERS for _, b in cluster]
    result = clustered_agreement(CLUSTERS, unit="conversations")
    assert (result["n"], result["clusters"]) == (14, 4)
    assert result["pearson"]["value"] == pytest.approx(pearsonr(x, y).statistic, abs=1e-4)
    assert result["spearman"]["value"] == pytest.approx(spearmanr(x, y).statistic, abs=1e-4)
    assert result["mean_difference"]["value"] == pytest.approx((sum(y) - sum(x)) / 14, abs=1e-4)
    alike = sum((a > 0) == (b > 0) for a, b in zip(x, y, strict=True))
    assert result["incidence_agreement"]["value"] == pytest.approx(alike / 14, abs=1e-4)
    px, py = sum(a > 0 for a in x) / 14, sum(b > 0 for b in y) / 14
    chance = px * py + (1 - px) * (1 - py)
    assert result["kappa"]["value"] == pytest.approx((alike / 14 - chance) / (1 - chance), abs=1e-4)
    for name in ("mean_difference", "pearson", "spearman", "incidence_agreement", "kappa"):
        low, high = result[name]["ci95"]
        assert low <= result[name]["value"] <= high and low < high
    assert "over conversations" in result["method"]


def test_undefined_figures_are_none_and_one_cluster_has_no_interval() -> None:
    constant = clustered_agreement([[(0, 1), (2, 1), (1, 1)]])
    assert constant["pearson"] == {"value": None, "ci95": None} and constant["mean_difference"]["ci95"] is None
    assert math.isclose(constant["mean_difference"]["value"], 0.0)
    assert clustered_agreement([[], []]) == {"n": 0, "clusters": 0}


def test_the_equivalence_verdict_is_the_atlas_one() -> None:
    from empathybench.atlas import reproduce

    assert reproduce.equivalence_verdict is equivalence_verdict
    assert equivalence_verdict([-2.9, 2.9], 3.0) == "consistent" and equivalence_verdict([3.1, 9], 3.0) == "differs"
    assert equivalence_verdict([2.0, 4.0], 3.0) == "inconclusive" and equivalence_verdict(None, 3.0) is None
