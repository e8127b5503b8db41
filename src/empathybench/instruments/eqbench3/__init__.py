"""EQ-Bench 3 (EQ-bench/eqbench3 @ 3c21bcc): judged multi-turn role-play and analysis (specs/eqbench3.md).

One self-contained folder: pins and parsers (`data`), the messages each turn sends (`conversation`), the rubric
judge and its aggregation (`rubric`), the pairwise judge and TrueSkill Elo (`pairwise`), rescoring of upstream
files (`rescore`), the instrument (`bench`), its canned answers (`canned`) and report section (`report`).
"""

# The light face: the entry point (pyproject.toml) reads `instrument` from here, and only then is the
# instrument's code imported (listing names and `--help` import nothing of it).
from functools import cache
from typing import Any

# Not in a run without --bench (it needs a judge and is the expensive instrument).
# Declared here, so that the registry leaves it out of such a run without importing its code; the registry checks that
# the instrument (bench.py) says the same.
in_default_run = False


@cache
def _instrument() -> Any:
    from empathybench.instruments.eqbench3.bench import EQBench3

    return EQBench3()


def __getattr__(attribute: str) -> Any:
    if attribute == "instrument":
        return _instrument()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
