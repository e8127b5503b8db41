"""The equivalence test every "does A reproduce B?" verdict uses: the reproduction check of a run against the published
run of its model (atlas/reproduce.py) and a judge against the published judge (`empathybench judge compare`)."""

from collections.abc import Sequence

VERDICTS = ("consistent", "differs", "inconclusive")


def equivalence_verdict(ci: tuple[float, float] | Sequence[float] | None, margin: float) -> str | None:
    """The verdict of an equivalence test with margin m: `consistent` when the interval lies within ±m, `differs`
    when it lies wholly outside ±m, `inconclusive` when it straddles a bound; None without an interval."""
    if ci is None:
        return None
    low, high = float(ci[0]), float(ci[1])
    if -margin <= low and high <= margin:
        return "consistent"
    if high < -margin or low > margin:
        return "differs"
    return "inconclusive"
