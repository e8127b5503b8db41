"""The instruments EmpathyBench can run: every entry point of the group `empathybench.instruments`.

The built-in instruments register the same way a third-party package does (pyproject.toml). Entry points are read
from the installed metadata, lazily: naming the instruments imports nothing; an instrument's code is imported when
it is loaded. A plugin that fails to load is skipped with a warning when listing, and is a one-line error when asked
for by name.
"""

import sys
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from empathybench.errors import UserError
from empathybench.instruments.protocol import (
    Benchmark,
    Instrument,
    PreparedBenchmark,
    ReportSection,
    RescoreCommand,
)
from empathybench.models.base import Canned

GROUP = "empathybench.instruments"

# The built-in entry points as pyproject.toml declares them (tests/test_registry.py keeps the two equal). Used only
# when the installed metadata predates them (an editable install made before they were declared), so that such an
# install keeps working until it is reinstalled.
BUILTIN_ENTRY_POINTS = {
    "eqbench": "empathybench.instruments.eqbench:instrument",
    "seceu": "empathybench.instruments.seceu:instrument",
    "giebench": "empathybench.instruments.giebench:instrument",
    "emotionbench": "empathybench.instruments.emotionbench:instrument",
    "empathetic": "empathybench.instruments.empathetic:instrument",
    "emobench": "empathybench.instruments.emobench:instrument",
    "eqbench3": "empathybench.instruments.eqbench3:instrument",
}

PLUGIN_ORDER = 1000  # where an instrument without an `order` goes: after the built-ins


class LegacyInstrument:
    """An instrument written against the untyped `Benchmark` protocol, seen through the typed `Instrument` one.

    What it does not provide yet is None (no canned answers, rescore command, chart axis or report section of its
    own: the scripted model, the CLI and report/ use their old per-name tables for it). Issue 12 step B replaces
    each adapter by the instrument itself.
    """

    canned: Canned | None = None
    rescore: RescoreCommand | None = None
    chart_domain: tuple[float, float] | None = None

    def __init__(self, legacy: Benchmark) -> None:
        self.legacy = legacy
        self.name = legacy.name
        self.title = legacy.title
        self.order: int = getattr(legacy, "order", PLUGIN_ORDER)
        self.presets = legacy.presets
        self.options = legacy.options
        self.preset_configs: Mapping[str, Any] = {}  # a legacy config is built inside prepare()

    def __getattr__(self, attribute: str) -> Any:  # limit_unit, data_keys, its own helpers
        return getattr(self.legacy, attribute)

    def configure(self, preset: str, options: Mapping[str, str]) -> Mapping[str, str]:
        """Checks the options (one-line UserErrors) and returns them: the legacy config exists only in prepare()."""
        self.check_options(preset, dict(options))
        return dict(options)

    def check_options(self, preset: str, options: dict[str, str]) -> None:
        check = getattr(self.legacy, "check_options", None)
        if check is not None:
            check(preset, options)

    def prepare(
        self, preset: str, *, options: dict[str, str], limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark[Any]:
        return self.legacy.prepare(preset, options=options, limit=limit, seed=seed, allow_unverified=allow_unverified)

    def report_section(self, result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection | None:
        return None  # report/html.py draws it from its own table until the instrument is migrated


def _typed(instrument: Any) -> Instrument[Any, Any]:
    """The instrument itself when it speaks the typed protocol, else its LegacyInstrument adapter."""
    return instrument if isinstance(instrument, Instrument) else LegacyInstrument(instrument)


@cache
def _entry_points() -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=GROUP):  # in sys.path order: the first registration of a name wins, like imports
        found.setdefault(ep.name, ep)
    if not any(ep.value.startswith("empathybench.instruments.") for ep in found.values()):
        # Stale metadata of an editable install: the built-ins as pyproject.toml declares them.
        builtins = {name: EntryPoint(name, value, GROUP) for name, value in BUILTIN_ENTRY_POINTS.items()}
        found = {**builtins, **found}
    return found


def names() -> list[str]:
    """The registered instrument names (imports no instrument)."""
    return sorted(_entry_points())


def _source(entry_point: EntryPoint) -> str:
    dist = getattr(entry_point, "dist", None)
    return f"package {dist.name}" if dist is not None else entry_point.value


@cache
def load(name: str) -> Instrument[Any, Any]:
    """The instrument registered as `name`; a missing or broken one is a one-line UserError."""
    found = _entry_points()
    if name not in found:
        raise UserError(f"unknown benchmark {name!r}; available: {', '.join(all_benchmarks())}")
    entry_point = found[name]
    try:
        instrument = entry_point.load()
    except Exception as exc:  # a third party's import error is the user's one line, not a traceback
        raise UserError(
            f"instrument {name} ({_source(entry_point)}) failed to load: {type(exc).__name__}: {exc}"
        ) from None
    if getattr(instrument, "name", None) != name or not callable(getattr(instrument, "prepare", None)):
        raise UserError(
            f"instrument {name} ({_source(entry_point)}) is not an instrument (needs .name == {name!r} and .prepare)"
        )
    return _typed(instrument)


def installed(name: str) -> Instrument[Any, Any] | None:
    """The instrument `name` if it is installed and loads, else None (a run directory may name one that is not)."""
    if name not in names():
        return None
    try:
        return load(name)
    except UserError:
        return None


def all_benchmarks() -> dict[str, Instrument[Any, Any]]:
    """Every instrument that loads, in profile order (built-ins first, then plugins by name)."""
    loaded: list[Instrument[Any, Any]] = []
    for name in names():
        try:
            loaded.append(load(name))
        except UserError as exc:
            print(f"warning: {exc}", file=sys.stderr)
    loaded.sort(key=lambda b: (b.order, b.name))
    return {b.name: b for b in loaded}


def resolve_benchmarks(names: list[str] | None) -> list[Instrument[Any, Any]]:
    if not names:
        # A run without --bench: every instrument that does not opt out (`in_default_run = False`, e.g. one that
        # needs a judge); it still runs when named.
        return [b for b in all_benchmarks().values() if getattr(b, "in_default_run", True)]
    # Only the named instruments are imported (all seven took ~0.3 s of a run's start-up); the others are loaded
    # only to list them when a name is unknown.
    registered = set(_entry_points())
    chosen: list[Instrument[Any, Any]] = []
    for raw in names:
        for name in filter(None, (part.strip() for part in raw.split(","))):
            if name not in registered:
                raise UserError(f"unknown benchmark {name!r}; available: {', '.join(all_benchmarks())}")
            instrument = load(name)
            if instrument not in chosen:
                chosen.append(instrument)
    return chosen
