"""GIEBench: group identity-based empathy, three prompt conditions (specs/giebench.md)."""

# The light face: the entry point (pyproject.toml) reads `instrument` from here, and only then is the
# instrument's code imported (listing names and `--help` import nothing of it).
from functools import cache
from typing import Any


@cache
def _instrument() -> Any:
    from empathybench.instruments.giebench.bench import GIEBench

    return GIEBench()


def __getattr__(attribute: str) -> Any:
    if attribute == "instrument":
        return _instrument()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
