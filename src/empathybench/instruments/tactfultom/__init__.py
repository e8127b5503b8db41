"""TactfulToM: theory of mind about white lies told out of kindness (Liu et al., EMNLP 2025; github nii-cl/tactful-tom).
docs/instruments/tactfultom.md."""

# The light face: the entry point (pyproject.toml) reads `instrument` from here, and only then is the
# instrument's code imported (listing names and `--help` import nothing of it).
from functools import cache
from typing import Any

# Not in a run without --bench (paper: 19,908 calls). Declared here, so that the registry leaves it out of such a run
# without importing its code; the registry checks that the instrument (bench.py) says the same.
in_default_run = False


@cache  # one instrument object per process
def __getattr__(attribute: str) -> Any:
    if attribute != "instrument":
        raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
    from empathybench.instruments.tactfultom.bench import TactfulToM

    return TactfulToM()
