"""What the atlas shows: per instrument, the leaderboard of recomputed figures beside the published ones."""

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from empathybench.formatting import number

# A recomputed figure "reproduces" its published one when they agree to the published figure's rounding.
REPRODUCED_WITHIN = 0.05


def entries_of(atlas: Mapping[str, Any], instrument: str) -> list[Mapping[str, Any]]:
    return [entry for entry in atlas["entries"] if entry["instrument"] == instrument]


def build_lines(atlas: Mapping[str, Any]) -> Iterator[str]:
    """One line per instrument: how many models were recomputed, how many are published-only, how many
    recomputed figures reproduce their published one."""
    for name in atlas["instruments"]:
        entries = entries_of(atlas, name)
        recomputed = [e for e in entries if e["status"] == "recomputed"]
        only = len(entries) - len(recomputed)
        compared = [e for e in recomputed if e["difference"] is not None]
        reproduced = sum(1 for e in compared if abs(e["difference"]) <= REPRODUCED_WITHIN)
        largest = max((abs(e["difference"]) for e in compared), default=None)
        line = f"{name}: {len(recomputed)} recomputed, {only} published-only"
        if compared:
            line += (
                f"; {reproduced} of {len(compared)} reproduce their published figure (within {REPRODUCED_WITHIN}), "
                f"largest difference {number(largest, 2)}"
            )
        yield line


def ranked(entries: Sequence[Mapping[str, Any]], higher_is_better: bool | None) -> list[Mapping[str, Any]]:
    """Entries best first (highest first where neither direction is better): by recomputed figure, else by
    published figure (published-only entries)."""

    def figure(entry: Mapping[str, Any]) -> float:
        value = entry["value"] if entry["value"] is not None else (entry.get("published") or {}).get("value")
        if value is None:
            return float("inf")
        return value if higher_is_better is False else -value

    return sorted(entries, key=lambda e: (figure(e), e["model"]))
