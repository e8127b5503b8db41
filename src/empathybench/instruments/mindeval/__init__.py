"""MindEval (SWORDHealth/mind-eval @ aab6be6): multi-turn mental-health support with a simulated patient, rated by a
judge on five criteria (specs/mindeval.md).

One self-contained folder: pins and what is read from upstream (`data`: profiles, the prompt templates read with
`ast`, the human annotations), the conversation (`dialogue`), the judge's parse (`parse`), the figures, ranking test
and comparability label (`score`), the instrument (`bench`), its canned answers (`canned`), report section (`report`)
and judge validation (`validate`).
"""

# The light face: the entry point (pyproject.toml) reads `instrument` from here, and only then is the
# instrument's code imported (listing names and `--help` import nothing of it).
from functools import cache
from typing import Any

# Not in a run without --bench (it needs a simulator and a judge). Declared here, so that the registry leaves it out of
# such a run without importing its code; the registry checks that the instrument (bench.py) says the same.
in_default_run = False


@cache
def _instrument() -> Any:
    from empathybench.instruments.mindeval.bench import MindEval

    return MindEval()


def __getattr__(attribute: str) -> Any:
    if attribute == "instrument":
        return _instrument()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
