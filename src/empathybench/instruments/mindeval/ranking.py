"""MindEval's ranking test (pure; specs/mindeval.md section 6): upstream's significance_testing.rank_systems on
runs. A one-sided paired t-test between every two runs on their shared conversations; runs in descending mean order
join the current cluster unless a run in it is better than the newcomer at p < 0.05.

The headline and the per-criterion means are plain means over conversations (bench.summarize_records); the
comparability label is built from what was sent with instruments/comparability.py (published.py says what the
published runs sent).
"""

from collections.abc import Mapping
from typing import Any

RANKING_P = 0.05  # rank_systems threshold_p_value


def rank_runs(scores: Mapping[str, Mapping[str, float]], threshold: float = RANKING_P) -> dict[str, Any]:
    """rank_systems on runs: {label: {conversation id: Overall score}} -> the clusters (best first), each run's
    rank, and the one-sided p-value of "row better than column" on the conversations every run has."""
    from scipy.stats import ttest_rel

    labels = list(scores)
    shared = sorted(set.intersection(*(set(s) for s in scores.values()))) if scores else []
    columns = {label: [float(scores[label][item]) for item in shared] for label in labels}
    p_values: dict[str, dict[str, float | None]] = {}
    for first in labels:
        p_values[first] = {}
        for second in labels:
            if first == second or len(shared) < 2:
                p_values[first][second] = None
                continue
            result = ttest_rel(columns[first], columns[second], alternative="greater")
            p = float(result.pvalue)
            p_values[first][second] = p if p == p else None  # nan (identical columns): no difference
    means = {label: sum(columns[label]) / len(shared) if shared else float("nan") for label in labels}
    clusters: list[list[str]] = [[]]
    for label in sorted(labels, key=lambda name: means[name], reverse=True):  # stable: ties keep the given order
        current = clusters[-1]
        if any((p := p_values[member][label]) is not None and p < threshold for member in current):
            clusters.append([label])
        else:
            current.append(label)
    return {
        "n_shared": len(shared),
        "means": {label: round(means[label], 4) if shared else None for label in labels},
        "clusters": clusters,
        "rank": {label: index + 1 for index, cluster in enumerate(clusters) for label in cluster},
        "p_better": p_values,
        "threshold": threshold,
        "test": "one-sided paired t-test (scipy ttest_rel, alternative greater) on the shared conversations' "
        "Overall scores; greedy clusters in descending mean order (significance_testing.rank_systems)",
    }
