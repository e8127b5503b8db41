"""The instruments EmpathyBench can run: every entry point of the group `empathybench.instruments`.

The built-in instruments register the same way a third-party package does (pyproject.toml). Entry points are read
from the installed metadata, lazily: naming the instruments imports nothing; an instrument's code is imported when
it is loaded. A plugin that fails to load is skipped with a warning when listing, and is a one-line error when asked
for by name. A built-in name always means the built-in: a plugin that registers one is ignored (one warning line);
a name two plugins register is refused for both; `empathybench list` shows what was refused.
"""

import importlib
import inspect
import sys
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from empathybench.errors import UserError
from empathybench.instruments.protocol import Instrument

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
    "sage": "empathybench.instruments.sage:instrument",
    "spiral": "empathybench.instruments.spiral:instrument",
    "mindeval": "empathybench.instruments.mindeval:instrument",
    "tombench": "empathybench.instruments.tombench:instrument",
    "tactfultom": "empathybench.instruments.tactfultom:instrument",
}

BUILTIN_DISTRIBUTION = "empathybench"


@dataclass(frozen=True)
class Refusal:
    """A registration the registry ignores, and why (shown by `empathybench list`)."""

    name: str
    packages: tuple[str, ...]
    reason: str

    def line(self) -> str:
        return f"plugin instrument {self.name!r} of {' and '.join(self.packages)} ignored: {self.reason}"


def _distribution(entry_point: EntryPoint) -> str | None:
    dist = getattr(entry_point, "dist", None)
    return dist.name if dist is not None else None


def _normalised(name: str | None) -> str:
    return (name or "").lower().replace("_", "-").replace(".", "-")


def _is_builtin(entry_point: EntryPoint) -> bool:
    """A built-in's registration: EmpathyBench's own distribution, as pyproject.toml declares it (a checkout on the
    path without installed metadata counts by its value)."""
    if BUILTIN_ENTRY_POINTS.get(entry_point.name) != entry_point.value:
        return False
    dist = _distribution(entry_point)
    return dist is None or _normalised(dist) == BUILTIN_DISTRIBUTION


@cache
def _registrations() -> tuple[dict[str, EntryPoint], tuple[Refusal, ...]]:
    """Every instrument name and its one registration, and the registrations refused: a built-in name always means
    the built-in (a plugin claiming it is ignored); a name two packages claim is refused for both until one is
    removed. Each refusal is one warning line, once per process."""
    by_name: dict[str, list[EntryPoint]] = {}
    for ep in entry_points(group=GROUP):
        claims = by_name.setdefault(ep.name, [])
        if not any(_distribution(c) == _distribution(ep) and c.value == ep.value for c in claims):
            claims.append(ep)  # the same distribution seen twice on the path is one registration
    found: dict[str, EntryPoint] = {}
    refused: list[Refusal] = []
    for name in sorted(set(by_name) | set(BUILTIN_ENTRY_POINTS)):
        claims = by_name.get(name, [])
        if name in BUILTIN_ENTRY_POINTS:
            own = [c for c in claims if _is_builtin(c)]
            # Stale metadata of an editable install (made before the built-in was declared): as pyproject declares it.
            found[name] = own[0] if own else EntryPoint(name, BUILTIN_ENTRY_POINTS[name], GROUP)
            for other in (c for c in claims if not _is_builtin(c)):
                package = _source(other)
                refused.append(Refusal(name, (package,), f"{name!r} is a built-in instrument's name"))
            continue
        packages = sorted({_source(c) for c in claims})
        if len(packages) > 1:
            refused.append(Refusal(name, tuple(packages), "both packages register this name; uninstall one of them"))
            continue
        found[name] = claims[0]
    for refusal in refused:
        print(f"warning: {refusal.line()}", file=sys.stderr)
    return found, tuple(refused)


def _entry_points() -> dict[str, EntryPoint]:
    return _registrations()[0]


def names() -> list[str]:
    """The registered instrument names (imports no instrument; refused registrations left out)."""
    return sorted(_entry_points())


def refused() -> tuple[Refusal, ...]:
    """The registrations the registry ignores (a plugin claiming a built-in's name, a name two plugins claim)."""
    return _registrations()[1]


def provider(name: str) -> dict[str, str | None]:
    """The distribution that provides the instrument `name` and its version, e.g. for run.json."""
    entry_point = _entry_points().get(name)
    dist = getattr(entry_point, "dist", None) if entry_point is not None else None
    if entry_point is not None and _is_builtin(entry_point):
        from empathybench.version import __version__

        return {"distribution": BUILTIN_DISTRIBUTION, "version": __version__}
    if dist is None:
        return {"distribution": None, "version": None}
    return {"distribution": dist.name, "version": dist.version}


def clear_caches() -> None:
    """Forget what was read from the installed metadata (tests that install packages while running)."""
    _registrations.cache_clear()
    load.cache_clear()


def _source(entry_point: EntryPoint) -> str:
    dist = getattr(entry_point, "dist", None)
    return f"package {dist.name}" if dist is not None else entry_point.value


@cache
def load(name: str) -> Instrument[Any, Any]:
    """The instrument registered as `name`; a missing or broken one is a one-line UserError."""
    found = _entry_points()
    if name not in found:
        refusal = next((r for r in refused() if r.name == name), None)
        if refusal is not None:
            raise UserError(refusal.line())
        raise UserError(f"unknown benchmark {name!r}; available: {', '.join(all_benchmarks())}")
    entry_point = found[name]
    try:
        instrument = entry_point.load()
    except Exception as exc:  # a third party's import error is the user's one line, not a traceback
        raise UserError(
            f"instrument {name} ({_source(entry_point)}) failed to load: {type(exc).__name__}: {exc}"
        ) from None
    return _checked(name, instrument, _source(entry_point))


def _checked(name: str, instrument: Any, source: str) -> Instrument[Any, Any]:
    """`instrument` if it keeps the contract; else one line saying what to add (an instrument written before the
    contract was a base class included)."""
    where = f"instrument {name} ({source})"
    if not isinstance(instrument, Instrument):
        raise UserError(
            f"{where} does not subclass empathybench.instruments.protocol.Instrument; subclass it "
            "(see docs/write-an-instrument.md)"
        )
    if instrument.name != name:
        raise UserError(f"{where} is named {instrument.name!r}; its entry point needs the name {name!r}")
    missing = [part for part in ("title", "presets", "options") if not hasattr(instrument, part)]
    overridden = [m for m in ("configure", "prepare") if getattr(type(instrument), m) is getattr(Instrument, m)]
    if missing or overridden:
        raise UserError(f"{where} lacks {', '.join(missing + [f'{m}()' for m in overridden])}")
    declared = _declared_in_default_run(name)
    if declared is not None and declared != instrument.in_default_run:
        raise UserError(f"{where}: its package declares in_default_run = {declared}, the instrument does not")
    if "options" in inspect.signature(instrument.prepare).parameters:
        raise UserError(
            f"{where}: prepare() takes options; it now receives the config configure() made: "
            "prepare(self, config, *, preset, limit, seed, allow_unverified)"
        )
    return instrument


def installed(name: str) -> Instrument[Any, Any] | None:
    """The instrument `name` if it is installed and loads, else None (a run directory may name one that is not)."""
    if name not in names():
        return None
    try:
        return load(name)
    except UserError:
        return None


def _loaded(chosen: list[str]) -> list[Instrument[Any, Any]]:
    """Each instrument of `chosen` that loads (one warning line for each that does not), in profile order."""
    loaded: list[Instrument[Any, Any]] = []
    for name in chosen:
        try:
            loaded.append(load(name))
        except UserError as exc:
            print(f"warning: {exc}", file=sys.stderr)
    loaded.sort(key=lambda b: (b.order, b.name))
    return loaded


def all_benchmarks() -> dict[str, Instrument[Any, Any]]:
    """Every instrument that loads, in profile order (built-ins first, then plugins by name)."""
    return {b.name: b for b in _loaded(names())}


def _declared_in_default_run(name: str) -> bool | None:
    """What a built-in's package (its light face, the module of its entry point) declares as `in_default_run`,
    read without loading the instrument; None for a plugin or a package that declares nothing."""
    entry_point = _entry_points().get(name)
    if entry_point is None or not _is_builtin(entry_point):
        return None
    try:
        declared = importlib.import_module(entry_point.module).__dict__.get("in_default_run")
    except Exception:  # loading it says what is wrong, in one line
        return None
    return declared if isinstance(declared, bool) else None


def default_benchmarks() -> list[Instrument[Any, Any]]:
    """The instruments of a run without --bench, in profile order: every one that does not opt out
    (`in_default_run = False`, e.g. one that needs a judge; it still runs when named). A built-in whose package
    declares `in_default_run = False` is left out without being loaded (their code took ~0.1 s of every run's
    start-up); every other instrument loads as in `all_benchmarks`."""
    candidates = [name for name in names() if _declared_in_default_run(name) is not False]
    return [b for b in _loaded(candidates) if b.in_default_run]


def resolve_benchmarks(names: list[str] | None) -> list[Instrument[Any, Any]]:
    if not names:
        return default_benchmarks()
    # Only the named instruments are imported (all seven took ~0.3 s of a run's start-up); the others are loaded
    # only to list them when a name is unknown.
    registered = set(_entry_points())
    chosen: list[Instrument[Any, Any]] = []
    for raw in names:
        for name in filter(None, (part.strip() for part in raw.split(","))):
            if name not in registered and not any(r.name == name for r in refused()):
                raise UserError(f"unknown benchmark {name!r}; available: {', '.join(all_benchmarks())}")
            instrument = load(name)  # a refused name is its refusal's line
            if instrument not in chosen:
                chosen.append(instrument)
    return chosen
