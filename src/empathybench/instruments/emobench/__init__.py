"""EmoBench (Sabour et al., ACL 2024; MIT): emotional understanding (EU) and application (EA), en + zh.

One self-contained folder: pins, data, prompts of both protocols, parsers, scoring, rescoring of the released runs,
the item runner, canned answers for scripted models and the report section. Spec: shared/specs/emobench.md.
"""

# The light face: the entry point (pyproject.toml) reads `instrument` from here, and only then is the
# instrument's code imported (listing names and `--help` import nothing of it).
from functools import cache
from typing import Any

# Not in a run without --bench. Declared here, so that the registry leaves it out of such a run without importing its
# code; the registry checks that the instrument (bench.py) says the same.
in_default_run = False


@cache
def _instrument() -> Any:
    from empathybench.instruments.emobench.bench import EmoBench

    return EmoBench()


def __getattr__(attribute: str) -> Any:
    if attribute == "instrument":
        return _instrument()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
