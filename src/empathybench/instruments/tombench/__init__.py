"""ToMBench: theory of mind in LLMs, en + zh (Chen et al., ACL 2024; github zhchen18/ToMBench, MIT). For evaluation
only, never for training (the upstream README's notice; docs/instruments/tombench.md)."""

# The light face: the entry point (pyproject.toml) reads `instrument` from here, and only then is the
# instrument's code imported (listing names and `--help` import nothing of it).
from functools import cache
from typing import Any

# Not in a run without --bench. Declared here, so that the registry leaves it out of such a run without importing its
# code; the registry checks that the instrument (bench.py) says the same.
in_default_run = False


@cache  # one instrument object per process
def __getattr__(attribute: str) -> Any:
    if attribute != "instrument":
        raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
    from empathybench.instruments.tombench.bench import ToMBench

    return ToMBench()
