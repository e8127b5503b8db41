"""SAGE: Sentient Agent as a Judge, a simulated person whose emotion moves with each reply (specs/sage.md)."""

# The light face: the entry point (pyproject.toml) reads `instrument` from here, and only then is the
# instrument's code imported (listing names and `--help` import nothing of it).
from functools import cache
from typing import Any

# Not in a run without --bench (it needs a simulator). Declared here, so that the registry leaves it out of such a run
# without importing its code; the registry checks that the instrument (bench.py) says the same.
in_default_run = False


@cache
def _instrument() -> Any:
    from empathybench.instruments.sage.bench import Sage

    return Sage()


def __getattr__(attribute: str) -> Any:
    if attribute == "instrument":
        return _instrument()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
