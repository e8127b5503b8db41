"""The paper's statistics (specs/empathetic_responding.md §4.1) on any set of Good/Okay/Bad ratings.

Every figure is computed from (emotion, valence, {source: rating}) rows, so the same code serves the
released human ratings (`rescore empathetic`) and a judge's re-ratings (the benchmark).
"""

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.instruments.empathetic.data import BAD, GOOD, HUMAN, OKAY, SOURCE_NAMES, read_prompts
from empathybench.stats.contingency import chi_square, holm_adjust
from empathybench.stats.intervals import mean_interval


@dataclass(frozen=True)
class RatedRow:
    emotion: str
    valence: str
    ratings: dict[str, int]  # source -> 1/2/3; a source may be missing (unrated or unparseable)


def _counts(ratings: Sequence[int]) -> tuple[int, int, int]:
    return ratings.count(GOOD), ratings.count(OKAY), ratings.count(BAD)


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def describe(ratings: Sequence[int], *, bootstrap: bool = False, seed: int = 0) -> dict[str, Any]:
    good, okay, bad = _counts(ratings)
    n = len(ratings)
    result: dict[str, Any] = {
        "n": n,
        "good": good,
        "okay": okay,
        "bad": bad,
        "pct_good": _pct(good, n),
        "pct_okay": _pct(okay, n),
        "pct_bad": _pct(bad, n),
        "mean_rating": round(sum(ratings) / n, 3) if n else None,
    }
    if bootstrap:
        interval = mean_interval([float(r == GOOD) for r in ratings], scale=100.0, seed=seed)
        result["pct_good_ci95"] = None if interval is None else [round(interval[0], 2), round(interval[1], 2)]
    return result


def compare(ratings: Sequence[int], baseline: Sequence[int]) -> dict[str, Any]:
    """The paper's comparison with the baseline: relative Good increase, 2x2 Yates chi-square, 2x3 chi-square."""
    good, okay, bad = _counts(ratings)
    base_good, base_okay, base_bad = _counts(baseline)
    good_vs_not = chi_square([[good, len(ratings) - good], [base_good, len(baseline) - base_good]], yates=True)
    distribution = chi_square([[bad, okay, good], [base_bad, base_okay, base_good]])
    return {
        # Relative increase in Good (not percentage points), as the paper reports it. The paper's sources all have
        # 2,000 ratings, so its count ratio equals this share ratio; shares stay right when a judge left some unread.
        "good_increase_pct": _round(
            100.0 * (good / len(ratings) - base_good / len(baseline)) / (base_good / len(baseline)), 2
        )
        if base_good and ratings
        else None,
        "good_diff_pp": _round(
            100.0 * (good / len(ratings) - base_good / len(baseline)) if ratings and baseline else None, 2
        ),
        "chi2_good_vs_human": _round(good_vs_not.statistic if good_vs_not else None, 2),
        "p": good_vs_not.p if good_vs_not else None,
        "chi2_3way": _round(distribution.statistic if distribution else None, 2),
        "p_3way": distribution.p if distribution else None,
    }


def _by_source(rows: Iterable[RatedRow], sources: Sequence[str]) -> dict[str, list[int]]:
    table: dict[str, list[int]] = {s: [] for s in sources}
    for row in rows:
        for source in sources:
            if source in row.ratings:
                table[source].append(row.ratings[source])
    return table


def _subset_table(
    rows: list[RatedRow], sources: Sequence[str], baseline: str, *, bootstrap: bool, seed: int
) -> dict[str, dict[str, Any]]:
    table = _by_source(rows, sources)
    result: dict[str, dict[str, Any]] = {}
    for source in sources:
        entry = describe(table[source], bootstrap=bootstrap, seed=seed)
        if source != baseline and table[baseline]:
            entry.update(compare(table[source], table[baseline]))
        elif source == baseline:
            entry.update(dict.fromkeys(("good_increase_pct", "chi2_good_vs_human", "p", "chi2_3way", "p_3way")))
        result[source] = entry
    return result


def pairwise(rows: list[RatedRow], sources: Sequence[str]) -> list[dict[str, Any]]:
    """2x3 chi-square between every pair of sources (§4.3); the paper applies no correction here."""
    table = _by_source(rows, sources)
    pairs = []
    for a, b in combinations(sources, 2):
        test = chi_square([list(reversed(_counts(table[a]))), list(reversed(_counts(table[b])))])
        pairs.append(
            {
                "a": a,
                "b": b,
                "chi2": _round(test.statistic if test else None, 2),
                "p": test.p if test else None,
                "good_a": table[a].count(GOOD),
                "good_b": table[b].count(GOOD),
            }
        )
    return pairs


def analyse(
    rows: list[RatedRow], sources: Sequence[str], *, baseline: str = HUMAN, bootstrap: bool = True, seed: int = 0
) -> dict[str, Any]:
    """All of §4.1: overall, by valence, by emotion (with Holm-adjusted p), and pairwise between sources."""
    if baseline not in sources:
        raise ValueError(f"baseline {baseline!r} is not among the sources {list(sources)}")
    valences = sorted({r.valence for r in rows})
    emotions = sorted({r.emotion for r in rows})
    result: dict[str, Any] = {
        "baseline": baseline,
        "n_prompts": len(rows),
        "sources": _subset_table(rows, sources, baseline, bootstrap=bootstrap, seed=seed),
        "valence": {
            v: _subset_table([r for r in rows if r.valence == v], sources, baseline, bootstrap=bootstrap, seed=seed)
            for v in valences
        },
        "emotions": {},
        "pairwise": {
            "all": pairwise(rows, sources),
            **{v: pairwise([r for r in rows if r.valence == v], sources) for v in valences},
        },
    }
    for emotion in emotions:
        subset = [r for r in rows if r.emotion == emotion]
        result["emotions"][emotion] = {
            "valence": subset[0].valence,
            "n": len(subset),
            "sources": _subset_table(subset, sources, baseline, bootstrap=False, seed=seed),
        }
    # Holm over the emotions, separately for each source (the paper ran 32 uncorrected tests per model).
    for source in sources:
        if source == baseline:
            continue
        entries = [result["emotions"][e]["sources"][source] for e in emotions]
        for entry, adjusted in zip(entries, holm_adjust([e.get("p") for e in entries]), strict=True):
            entry["p_holm"] = adjusted
    return result


def rows_from_file(path: Path) -> tuple[list[RatedRow], list[str]]:
    prompts = read_prompts(path)
    sources = [s for s in SOURCE_NAMES if any(s in p.ratings for p in prompts)]
    sources += sorted({s for p in prompts for s in p.ratings} - set(sources))
    return [RatedRow(p.emotion, p.valence, dict(p.ratings)) for p in prompts], sources


def rescore_ratings_file(path: Path) -> dict[str, Any]:
    """`empathybench rescore empathetic FILE`: the paper's statistics from a file in the released format."""
    try:
        rows, sources = rows_from_file(path)
    except (ValueError, KeyError, IndexError, csv.Error) as exc:  # binary or foreign content: one line, no traceback
        reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)[:200]
        raise UserError(f"{path} is not a ratings CSV in the released format: {reason}") from None
    result = analyse(rows, sources)
    result["file"] = str(path)
    result["source_names"] = {s: SOURCE_NAMES.get(s, s) for s in sources}
    return result
