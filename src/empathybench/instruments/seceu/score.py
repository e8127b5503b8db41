"""SECEU scores from normalised allocations: distance, EQ, band, percentiles, pattern similarity (specs/seceu.md §4).

Pure functions; the standard scores and the template are passed in (read from SECEU_norm.docx by data.py).
"""

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from empathybench.instruments.seceu import norms
from empathybench.instruments.seceu.parse import NormalisedAllocation

FULL_TEST_ITEMS = 40
MIN_ITEMS_FOR_PATTERN_R = 3
UNIFORM_ANSWER = (2.5, 2.5, 2.5, 2.5)

EQ_NORMAL_LABEL = "normal approximation Φ((EQ-100)/15) x 100: biased, the human distances are right-skewed"
EQ_ANCHOR_LABEL = (
    "piecewise-linear interpolation through the paper's published (SECEU score, % humans below) pairs; "
    "defined for scores 1.89-3.76 only"
)
R_NORMAL_LABEL = "normal approximation Φ((r-0.199)/0.166) x 100 of the human-to-human r"
R_ANCHOR_LABEL = (
    "piecewise-linear interpolation through the paper's published (r, % humans below) pairs; "
    "defined for r -0.26-0.43 only"
)


def item_distance(vector: Sequence[float], standard: Sequence[float]) -> float:
    """Euclidean distance of one normalised allocation from the human standard scores."""
    return math.sqrt(sum((x - s) ** 2 for x, s in zip(vector, standard, strict=True)))


def seceu_score(distances: Sequence[float]) -> float:
    """Mean item distance; lower is better."""
    if not distances:
        raise ValueError("no items to score")
    return sum(distances) / len(distances)


def eq_from_score(score: float) -> float:
    """EQ = 15 x (M - SECEU) / SD + 100 with M = 2.79, SD = 0.822."""
    return norms.EQ_SCALE_SD * (norms.SECEU_MEAN - score) / norms.SECEU_SD + norms.EQ_SCALE_MEAN


def eq_band(eq: float) -> str:
    if eq > norms.EQ_EXPERT_ABOVE:
        return "expert"
    if eq < norms.EQ_POOR_BELOW:
        return "poor"
    return "normal"


def normal_cdf_percent(z: float) -> float:
    return 50.0 * (1.0 + math.erf(z / math.sqrt(2.0)))


def eq_percentile_normal(eq: float) -> float:
    return normal_cdf_percent((eq - norms.EQ_SCALE_MEAN) / norms.EQ_SCALE_SD)


def pattern_r_percentile_normal(r: float) -> float:
    return normal_cdf_percent((r - norms.PATTERN_R_MEAN) / norms.PATTERN_R_SD)


def interpolate_anchors(x: float, anchors: Sequence[tuple[float, float]]) -> float | None:
    """Piecewise-linear through (x, %) anchors, a repeated x averaged; None outside the anchors' range."""
    grouped: dict[float, list[float]] = {}
    for ax, pct in anchors:
        grouped.setdefault(ax, []).append(pct)
    points = sorted((ax, sum(pcts) / len(pcts)) for ax, pcts in grouped.items())
    if not points or x < points[0][0] or x > points[-1][0]:
        return None
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return points[-1][1]  # x equals the only anchor


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson r; None when either side has no variance or fewer than 3 pairs."""
    if len(xs) != len(ys) or len(xs) < MIN_ITEMS_FOR_PATTERN_R:
        return None
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    if sxx <= 0 or syy <= 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def is_human_like(r: float | None) -> bool | None:
    """The paper: r below 0.033 (one SD under the human mean) means a qualitatively different mechanism."""
    return None if r is None else r >= norms.PATTERN_R_THRESHOLD


def paper_status(n_no_response: int, n_items: int) -> str:
    """FAILED when most items got no meaningful response (the paper's rule, §3.1)."""
    return "FAILED" if n_items and n_no_response > norms.FAILED_NO_RESPONSE_FRACTION * n_items else "ok"


@dataclass(frozen=True)
class SeceuScores:
    n_items: int
    n_no_response: int
    item_distances: tuple[float, ...]
    seceu_score: float
    seceu_score_valid_items: float | None  # over answered items only (the zero-vector rule not applied)
    eq: float
    band: str
    eq_percentile_normal: float
    eq_percentile_anchors: float | None
    pattern_r: float | None
    pattern_r_percentile_normal: float | None
    pattern_r_percentile_anchors: float | None
    human_like: bool | None
    status: str  # ok | FAILED

    @property
    def full_test(self) -> bool:
        return self.n_items == FULL_TEST_ITEMS

    def as_dict(self, digits: int = 4) -> dict[str, Any]:
        """The JSON shape used by summary.json and `rescore seceu`, every approximation labelled."""

        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, digits)

        result: dict[str, Any] = {
            "seceu_score": rounded(self.seceu_score),
            "seceu_score_name": "mean Euclidean distance to the human standard scores (lower is better)",
            "seceu_score_valid_items": rounded(self.seceu_score_valid_items),
            "seceu_score_valid_items_note": "mean over items with a response only (no zero vectors)",
            "eq": rounded(self.eq),
            "eq_formula": "15 x (2.79 - seceu_score) / 0.822 + 100",
            "band": self.band,
            "band_rule": "expert > 115, normal 85-115, poor < 85",
            "percentiles": {
                "normal_approximation": {"value": rounded(self.eq_percentile_normal), "label": EQ_NORMAL_LABEL},
                "published_anchor_interpolation": {
                    "value": rounded(self.eq_percentile_anchors),
                    "label": EQ_ANCHOR_LABEL,
                },
            },
            "pattern_r": rounded(self.pattern_r),
            "pattern_r_name": "Pearson r of the item distances with the human template (40 item mean distances)",
            "pattern_r_percentiles": {
                "normal_approximation": {"value": rounded(self.pattern_r_percentile_normal), "label": R_NORMAL_LABEL},
                "published_anchor_interpolation": {
                    "value": rounded(self.pattern_r_percentile_anchors),
                    "label": R_ANCHOR_LABEL,
                },
            },
            "human_like": self.human_like,
            "human_like_rule": f"pattern_r >= {norms.PATTERN_R_THRESHOLD} (paper: below it, a qualitatively "
            "different mechanism from humans)",
            "n_no_response": self.n_no_response,
            "seceu_status": self.status,
            "seceu_status_rule": "FAILED when more than half of the items got no response (paper)",
            "item_distances": [round(d, digits) for d in self.item_distances],
        }
        if not self.full_test:
            result["subset_note"] = (
                f"computed on {self.n_items} of the 40 items: the norm (M 2.79, SD 0.822; r 0.199 ± 0.166) is for "
                "the full test, so EQ, percentiles and r are indicative only"
            )
        return result


def score_allocations(
    answers: Sequence[NormalisedAllocation],
    standard_scores: Sequence[Sequence[float]],
    template: Sequence[float],
) -> SeceuScores:
    """Every SECEU score of a set of normalised answers, given each item's standard scores and template value."""
    if not (len(answers) == len(standard_scores) == len(template)):
        raise ValueError("answers, standard scores and template must cover the same items")
    distances = tuple(item_distance(a.vector, s) for a, s in zip(answers, standard_scores, strict=True))
    score = seceu_score(distances)
    valid = [d for d, a in zip(distances, answers, strict=True) if not a.no_response]
    eq = eq_from_score(score)
    r = pearson(distances, template)
    n_no_response = sum(a.no_response for a in answers)
    return SeceuScores(
        n_items=len(answers),
        n_no_response=n_no_response,
        item_distances=distances,
        seceu_score=score,
        seceu_score_valid_items=seceu_score(valid) if valid else None,
        eq=eq,
        band=eq_band(eq),
        eq_percentile_normal=eq_percentile_normal(eq),
        eq_percentile_anchors=interpolate_anchors(score, norms.EQ_PERCENTILE_ANCHORS),
        pattern_r=r,
        pattern_r_percentile_normal=None if r is None else pattern_r_percentile_normal(r),
        pattern_r_percentile_anchors=None if r is None else interpolate_anchors(r, norms.PATTERN_R_PERCENTILE_ANCHORS),
        human_like=is_human_like(r),
        status=paper_status(n_no_response, len(answers)),
    )


def uniform_baseline(standard_scores: Sequence[Sequence[float]], template: Sequence[float]) -> dict[str, Any]:
    """The hedging answer (2.5 each) on the same items: EQ 112.2 but r -0.31 on the full test (spec §4.1)."""
    uniform = [NormalisedAllocation(UNIFORM_ANSWER, no_response=False)] * len(standard_scores)
    scores = score_allocations(uniform, standard_scores, template)
    return {
        "label": "uniform answer (2.5, 2.5, 2.5, 2.5) on the same items: what pure hedging scores",
        "seceu_score": round(scores.seceu_score, 4),
        "eq": round(scores.eq, 4),
        "band": scores.band,
        "pattern_r": None if scores.pattern_r is None else round(scores.pattern_r, 4),
        "human_like": scores.human_like,
    }
