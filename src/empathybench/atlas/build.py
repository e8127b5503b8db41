"""`empathybench atlas build`: every released per-model output an instrument knows, scored by its own scorer.

Each instrument that offers an `AtlasSource` names its released files (pinned in its own folder), the published runs
they hold and how one run's files become a score (the code of its `rescore` command). The build fetches the files
through the pinned fetch code (the mirror when EMPATHYBENCH_MIRROR is set, else GitHub at the pinned commits),
verifies them, scores each run, and writes one JSON document (format `data.FORMAT`, docs/atlas.md). Nothing
here names an instrument. The output depends on the files alone (no date, no version), so a rebuild is comparable
byte for byte with the shipped file.
"""

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from empathybench.atlas.data import FORMAT, FORMAT_VERSION
from empathybench.data.fetch import FetchedFile, fetch_entry
from empathybench.data.registry import DataFile
from empathybench.errors import DataError, UserError
from empathybench.instruments.protocol import (
    AtlasScore,
    AtlasSource,
    Instrument,
    PublishedFigure,
    PublishedOnly,
    ReleasedRun,
)
from empathybench.models.identity import IdentityTable, identity_table

DIGITS = 4  # headline figures, intervals and differences; items are kept as the scorer rounds them
MAX_NOTE_CHARS = 300


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), DIGITS)


def _identity(table: IdentityTable, model: str, instrument: str) -> tuple[str | None, str | None]:
    match = table.match(model, instrument=instrument)
    if match is None or match.id is None:
        return None, None
    return match.id, match.family


def identity_record(table: IdentityTable, model: str, instrument: str) -> dict[str, str | None] | None:
    """How a published name became its checkpoint: the alias it matched, where that name comes from and which
    source decided the checkpoint where the name alone does not (upstream's map, the run's date)."""
    match = table.match(model, instrument=instrument)
    if match is None or match.id is None or match.alias is None:
        return None
    return {"alias": match.alias.name, "source": match.alias.source, "decided_by": match.alias.decided_by}


def _file_record(fetched: FetchedFile, source: AtlasSource, key: str) -> dict[str, Any]:
    entry = source.pins()[key]
    return {"repo": entry.repo, "commit": entry.commit, "path": entry.path, "sha256": fetched.sha256}


def _recomputed_entry(
    instrument: str, run: ReleasedRun, scored: AtlasScore, files: list[dict[str, Any]], table: IdentityTable
) -> dict[str, Any]:
    model_id, family = _identity(table, run.model, instrument)
    published = scored.published or run.published
    difference = None if published is None else _rounded(scored.value - published.value)
    return {
        "instrument": instrument,
        "model": run.model,
        "model_id": model_id,
        "family": family,
        "identity": identity_record(table, run.model, instrument),
        "status": "recomputed",
        "primary": run.primary,
        "value": _rounded(scored.value),
        "ci95": None if scored.ci95 is None else [_rounded(scored.ci95[0]), _rounded(scored.ci95[1])],
        "n": scored.n,
        "scale": scored.scale,
        "offset": scored.offset,
        "published": None if published is None else {"value": published.value, "source": published.source},
        "difference": difference,
        "notes": [note[:MAX_NOTE_CHARS] for note in scored.notes],
        "settings": {**run.settings, **scored.settings},
        "figures": dict(scored.figures),
        "files": files,
        "items": None if scored.items is None else {str(k): round(float(v), 6) for k, v in scored.items.items()},
    }


def _published(figure: PublishedFigure) -> dict[str, Any]:
    published: dict[str, Any] = {"value": figure.value, "source": figure.source}
    if figure.ci95 is not None:
        published["ci95"] = [_rounded(figure.ci95[0]), _rounded(figure.ci95[1])]
    return published


def _published_only_entry(instrument: str, only: PublishedOnly, table: IdentityTable) -> dict[str, Any]:
    model_id, family = _identity(table, only.model, instrument)
    return {
        "instrument": instrument,
        "model": only.model,
        "model_id": model_id,
        "family": family,
        "identity": identity_record(table, only.model, instrument),
        "status": "published-only",
        "primary": only.primary,
        "value": None,
        "ci95": None,
        "n": None,
        "scale": 1.0,
        "offset": 0.0,
        "published": _published(only.published),
        "difference": None,
        "notes": [only.why[:MAX_NOTE_CHARS], *(note[:MAX_NOTE_CHARS] for note in only.notes)],
        "settings": dict(only.settings),
        "figures": dict(only.figures),
        "files": [],
        "items": None,
    }


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0][:MAX_NOTE_CHARS] if text else ""
    if isinstance(exc, DataError | UserError | OSError):
        return line or type(exc).__name__
    return f"{type(exc).__name__}: {line}"  # an error the scorer did not expect: named, so it can be fixed


def score_run(
    source: AtlasSource,
    run: ReleasedRun,
    pins: Mapping[str, DataFile] | None = None,
    fetched: dict[str, FetchedFile] | None = None,
) -> tuple[AtlasScore, list[dict[str, Any]]]:
    """One released run fetched (verified against its pins) and scored; a missing or bad file is a DataError or
    UserError with one line. `pins` and `fetched` (key -> file already fetched) are shared by an instrument's runs,
    so a file several runs read (EQ-Bench 3's one verdict file) is fetched and hashed once."""
    pins = source.pins() if pins is None else pins
    fetched = {} if fetched is None else fetched
    for key in run.files:
        if key not in pins:
            raise DataError(f"{run.model}: file {key!r} is not pinned")
        if key not in fetched:
            fetched[key] = fetch_entry(pins[key])
    scored = source.score(run, {key: fetched[key].path for key in run.files})
    return scored, [_file_record(fetched[key], source, key) for key in run.files]


def instrument_entries(
    name: str, source: AtlasSource, table: IdentityTable, report: Callable[[str], None]
) -> list[dict[str, Any]]:
    """Every entry of one instrument: its released runs scored, then its published-only models."""
    entries: list[dict[str, Any]] = []
    try:
        released = source.runs()
    except (DataError, UserError, OSError) as exc:
        report(f"{name}: its released files could not be listed: {_first_line(exc)}")
        released = ()
    pins: Mapping[str, DataFile] | None = None
    fetched: dict[str, FetchedFile] = {}
    for run in released:
        try:
            pins = source.pins() if pins is None else pins
            scored, files = score_run(source, run, pins, fetched)
        except Exception as exc:  # a released file is untrusted: whatever it breaks is one line, never a traceback
            line = _first_line(exc)
            report(f"{name} {run.model}: not scored: {line}")
            if run.published is not None:
                why = f"released output not scored: {line}"
                only = PublishedOnly(run.model, run.published, why, run.settings)
                entries.append(_published_only_entry(name, only, table))
            continue
        entries.append(_recomputed_entry(name, run, scored, files, table))
    try:
        listed: Sequence[PublishedOnly] = source.published_only()
    except (DataError, UserError, OSError) as exc:
        report(f"{name}: its published-only models could not be read: {_first_line(exc)}")
        listed = ()
    entries.extend(_published_only_entry(name, model, table) for model in listed)
    return entries


def build_atlas(
    instruments: Sequence[Instrument[Any, Any]], *, report: Callable[[str], None] = lambda line: None
) -> dict[str, Any]:
    """The atlas document of `instruments` (those without an atlas are left out). `report` receives one line per
    run that could not be scored (it stays in the atlas as published-only when its figure is known)."""
    table = identity_table()
    described: dict[str, Any] = {}
    entries: list[dict[str, Any]] = []
    for instrument in sorted(instruments, key=lambda i: (i.order, i.name)):
        source = instrument.atlas
        if source is None:
            continue
        described[instrument.name] = {
            "title": instrument.profile_title or instrument.name,
            "metric": source.metric,
            "higher_is_better": source.higher_is_better,
            "summary_metric": source.summary_metric,
            "reproduction_margin": None
            if source.reproduction_margin is None
            else {"value": source.reproduction_margin.value, "source": source.reproduction_margin.source},
        }
        if source.board_placement is not None:
            described[instrument.name]["board_placement"] = asdict(source.board_placement)
        if source.board_figures:
            described[instrument.name]["board_figures"] = list(source.board_figures)
            described[instrument.name]["board_headline"] = source.board_headline
        entries.extend(instrument_entries(instrument.name, source, table, report))
        if source.capability is not None:
            described[instrument.name]["capability"] = capability_entries(instrument.name, source, table, report)
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "instruments": described, "entries": entries}


def capability_entries(
    name: str, source: AtlasSource, table: IdentityTable, report: Callable[[str], None]
) -> dict[str, Any] | None:
    """The general-capability figures an instrument's upstream publishes beside its own, per model."""
    assert source.capability is not None
    try:
        figures = source.capability()
    except (DataError, UserError, OSError, ValueError) as exc:
        report(f"{name} capability figures: not read: {str(exc)[:MAX_NOTE_CHARS]}")
        return None
    models = []
    for model, figure in figures:
        model_id, family = _identity(table, model, name)
        models.append(
            {"model": model, "model_id": model_id, "family": family, "value": figure.value, "source": figure.source}
        )
    return {"label": source.capability_label, "models": models}


def dumps(atlas: Mapping[str, Any]) -> str:
    """The document as written: stable key order, one entry's items on its own lines, a final newline."""
    return json.dumps(atlas, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write_atlas(atlas: Mapping[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.part")
    temporary.write_text(dumps(atlas), "utf-8")
    temporary.replace(path)
