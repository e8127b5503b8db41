"""Spiral-Bench (sam-paech/spiral-bench @ 6b990fa): multi-turn sycophancy and delusion reinforcement (specs/spiral.md).

One self-contained folder: pins and what is read from upstream (`data`, `upstream`), the messages of the three roles
(`prompts`), the judges' parsers (`parse`), the conversation and its judging (`dialogue`), the leaderboard scoring
(`score`, `summary`), rescoring of released files (`rescore`), comparability with the published leaderboard
(`published`), the instrument (`bench`), its canned answers (`canned`) and report section (`report`).
"""

# The light face: the entry point (pyproject.toml) reads `instrument` from here, and only then is the
# instrument's code imported (listing names and `--help` import nothing of it).
from functools import cache
from typing import Any

# Not in a run without --bench (runs when named: it needs two more roles and a paper run is ~1,800 calls). Declared
# here, so that the registry leaves it out of such a run without importing its code; the registry checks that the
# instrument (bench.py) says the same.
in_default_run = False


@cache
def _instrument() -> Any:
    from empathybench.instruments.spiral.bench import Spiral

    return Spiral()


def __getattr__(attribute: str) -> Any:
    if attribute == "instrument":
        return _instrument()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
