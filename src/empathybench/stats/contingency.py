"""Contingency-table tests, multiple-comparison adjustment and bootstrap intervals for proportions."""

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ChiSquare:
    statistic: float
    p: float
    dof: int


def chi_square(table: Sequence[Sequence[int]], *, yates: bool = True) -> ChiSquare | None:
    """Chi-square test of independence; Yates' correction applies to 2x2 tables only (scipy's default).

    None when the test is undefined: a row or column of zeros.
    """
    from scipy.stats import chi2_contingency

    rows = [list(map(int, row)) for row in table]
    columns = [list(col) for col in zip(*rows, strict=True)]
    # Drop all-zero columns (e.g. no "Bad" at all in a small subset): they carry no information.
    kept = [col for col in columns if sum(col) > 0]
    if len(kept) < 2 or any(sum(row) == 0 for row in rows):
        return None
    reduced = [list(row) for row in zip(*kept, strict=True)]
    statistic, p, dof, _ = chi2_contingency(reduced, correction=yates)
    return ChiSquare(float(statistic), float(p), int(dof))


def holm_adjust(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values; None entries (untestable) are skipped and stay None."""
    indexed = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(indexed)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * p))  # monotone: never below an earlier adjusted value
        adjusted[i] = running
    return adjusted


def mcnemar_exact_p(wrong_to_right: int, right_to_wrong: int) -> float:
    """Two-sided exact McNemar test: a binomial test of the discordant pairs against p = 0.5."""
    discordant = wrong_to_right + right_to_wrong
    if discordant == 0:
        return 1.0
    tail = min(wrong_to_right, right_to_wrong)
    probability = sum(math.comb(discordant, k) for k in range(tail + 1)) / 2**discordant
    return min(1.0, 2 * probability)
