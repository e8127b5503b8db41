"""`empathybench atlas model NAME`: everything the atlas holds about one checkpoint, across instruments.

NAME is resolved through the identity table: a checkpoint gives its profile (each instrument's figure, recomputed or
published, with its settings, the published figure and the difference, its rank and source files; the setting effects
measured on it; the capability figures published for it); a family name lists the family's checkpoints; a name the
table does not know is one UserError line with the nearest known names. Nothing here names an instrument.
"""

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.atlas.analysis import setting_effects
from empathybench.atlas.boards import model_board_changes
from empathybench.atlas.place import figure_of
from empathybench.atlas.views import ranked, setting_text
from empathybench.errors import UserError
from empathybench.formatting import printable
from empathybench.models.identity import IdentityTable, identity_table, normalise

MAX_QUERY_CHARS = 200
NEAREST_NAMES = 3


def _checkpoints_named(
    table: IdentityTable, name: str, instruments: Sequence[str]
) -> tuple[str, list[str], dict[str, list[str]], str | None]:
    """(relation, model ids, each id's scope, the family a run's model of that name is) for a name: every checkpoint
    it resolves to, scoped to an instrument or not (a scope [] is every run's name), so that a name meaning different
    checkpoints in different instruments (SAGE's "Gemini2.5-Pro" the March preview, a run's the June model) lists
    them all; one checkpoint everywhere, a family's checkpoints, or ("", [], {}, None) for a name the table does not
    know. The family is given where a run's model of that name is only its family (an undated moving name)."""
    if name in table.models:
        return "same checkpoint", [name], {name: []}, None
    match = table.match(name)
    scopes: dict[str, list[str]] = {}
    if match is not None and match.id is not None:
        scopes[match.id] = []
    for instrument in instruments:
        found = table.match(name, instrument=instrument)
        if found is not None and found.id is not None and found.alias is not None and found.alias.instrument:
            scopes.setdefault(found.id, []).append(instrument)
    # and an instrument's name of which this is the name without organisation (eqbench3's openai/chatgpt-4o-latest)
    short = normalise(name.rsplit("/", 1)[-1])
    for model in table.models.values():
        for alias in model.aliases:
            named = alias.instrument in instruments and normalise(alias.name.rsplit("/", 1)[-1]) == short
            if named and alias.instrument not in scopes.setdefault(model.id, []):
                scopes[model.id].append(alias.instrument)
    if match is not None and match.id is not None:
        scopes[match.id] = []  # a run's model of this name: that checkpoint, whatever an instrument also calls it
    run_family = match.family if match is not None and match.id is None else None
    if len(scopes) == 1 and match is not None and match.id is not None:
        return "same checkpoint", list(scopes), scopes, None
    if scopes:
        return "named differently by instruments", sorted(scopes), scopes, run_family
    if run_family is not None:
        ids = sorted(m.id for m in table.models.values() if m.family == run_family)
        return "same family", ids, {}, run_family
    return "", [], {}, None


def nearest_names(table: IdentityTable, name: str) -> list[str]:
    """The known names (aliases, ids, families) closest to `name`, closest first."""
    known: dict[str, str] = {}
    for model in table.models.values():
        for candidate in (model.id, *(alias.name for alias in model.aliases)):
            known.setdefault(normalise(candidate), candidate)
    for family in table.families:
        known.setdefault(normalise(family), family)
    close = difflib.get_close_matches(normalise(name), list(known), n=NEAREST_NAMES, cutoff=0.5)
    return [known[key] for key in close]


def leaderboard_ranks(atlas: Mapping[str, Any]) -> dict[int, tuple[int, int]]:
    """id(entry) -> (rank, among) for every primary entry, as the instrument's leaderboard ranks it."""
    ranks: dict[int, tuple[int, int]] = {}
    for name, described in atlas["instruments"].items():
        if described.get("higher_is_better") is None:
            continue  # a figure without a direction is not ranked
        primary = [e for e in atlas["entries"] if e["instrument"] == name and e["primary"]]
        for rank, entry in enumerate(ranked(primary, described.get("higher_is_better")), start=1):
            ranks[id(entry)] = (rank, len(primary))
    return ranks


def _measured_as(described: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """What an entry's figure is: the instrument's metric, or for a row of a published board its board's own figure,
    board and judge (an EQ-Bench 3 Opus-board row is no Elo judged by Claude 3.7 Sonnet)."""
    board = settings.get("board")
    if not board:
        return str(described["metric"])
    judge = settings.get("judge")
    headline = described.get("board_headline") or "published figure"
    return f"{headline} on the published board {board}" + (f", judge {judge}" if judge else "")


def _entry(atlas: Mapping[str, Any], entry: Mapping[str, Any], rank: tuple[int, int] | None) -> dict[str, Any]:
    described = atlas["instruments"][entry["instrument"]]
    figure, kind = figure_of(entry)
    settings = entry.get("settings") or {}
    figures = entry.get("figures") or {}
    return {
        "instrument": entry["instrument"],
        "title": described["title"],
        "metric": _measured_as(described, settings),
        "model": entry["model"],
        "status": entry["status"],
        "primary": entry["primary"],
        "figure": figure,
        "figure_is": kind,
        "value": entry["value"],
        "ci95": entry["ci95"],
        "n": entry["n"],
        "published": entry.get("published"),
        "difference": entry.get("difference"),
        "rank": None if rank is None else rank[0],
        "among": None if rank is None else rank[1],
        "settings": dict(settings),
        # the figures a run is placed by or a board effect compares (e.g. EQ-Bench 3's rubric score, 0-100)
        "figures": {k: figures[k] for k in described.get("board_figures", []) if k in figures},
        "notes": list(entry.get("notes") or []),
        "files": [{"repo": f["repo"], "commit": f["commit"], "path": f["path"]} for f in entry.get("files") or []],
    }


def model_profile(
    atlas: Mapping[str, Any],
    model_id: str,
    table: IdentityTable | None = None,
    *,
    effects: Sequence[Mapping[str, Any]] | None = None,
    ranks: Mapping[int, tuple[int, int]] | None = None,
    board_changes: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> dict[str, Any]:
    """One checkpoint: its names, every atlas entry of it (the published setting first), the setting effects measured
    on it, its change between two published boards (e.g. one per judge) and the general-capability figures published
    for it. `effects`, `ranks` and `board_changes` (setting_effects, the leaderboards' ranks and model_board_changes of
    `atlas`): computed once for many profiles."""
    table = table or identity_table()
    model = table.models[model_id]
    ranks = leaderboard_ranks(atlas) if ranks is None else ranks
    effects = setting_effects(atlas) if effects is None else effects
    board_changes = model_board_changes(atlas) if board_changes is None else board_changes
    order = list(atlas["instruments"])
    boards = [str(e["settings"].get("board") or "") for e in atlas["entries"]]
    entries = sorted(
        (e for e in atlas["entries"] if e["model_id"] == model_id),
        # a board's rows together, the boards in atlas order (the older first)
        key=lambda e: (order.index(e["instrument"]), not e["primary"], boards.index(e["settings"].get("board") or "")),
    )
    capability = [
        {"label": described["capability"]["label"], "from": name, **row}
        for name, described in atlas["instruments"].items()
        if described.get("capability")
        for row in described["capability"]["models"]
        if row["model_id"] == model_id
    ]
    return {
        "id": model_id,
        "family": model.family,
        "family_name": table.families.get(model.family, model.family),
        "aliases": [{"name": a.name, "source": a.source, "instrument": a.instrument} for a in model.aliases],
        "entries": [_entry(atlas, e, ranks.get(id(e))) for e in entries],
        "setting_effects": [e for e in effects if e["model_id"] == model_id],
        "board_changes": list(board_changes.get(model_id, [])),
        "capability": [{k: row[k] for k in ("label", "from", "model", "value", "source")} for row in capability],
    }


def _checkpoint_row(atlas: Mapping[str, Any], model_id: str) -> dict[str, Any]:
    instruments = sorted(
        {e["instrument"] for e in atlas["entries"] if e["model_id"] == model_id}, key=list(atlas["instruments"]).index
    )
    return {"id": model_id, "instruments": instruments}


def model_view(atlas: Mapping[str, Any], name: str) -> dict[str, Any]:
    """What `atlas model NAME` shows: a checkpoint's profile, or the checkpoints a family name (or a name that means
    different checkpoints in different instruments) stands for. An unknown name is one UserError line."""
    query = name.strip()
    if len(query) > MAX_QUERY_CHARS:  # no model name is this long: said plainly, never looked up
        raise UserError(
            f"a model name of {len(query)} characters is longer than any known one (at most {MAX_QUERY_CHARS}): "
            f"{printable(query, 60)!r}"
        )
    table = identity_table()
    relation, ids, scopes, run_family = _checkpoints_named(table, query, list(atlas["instruments"]))
    if not ids:
        nearest = nearest_names(table, query)
        hint = f"; nearest known names: {', '.join(nearest)}" if nearest else "; `empathybench atlas` lists its models"
        raise UserError(f"the model identity table has no model {printable(query, 100)!r}{hint}")
    if relation == "same checkpoint":
        profile = model_profile(atlas, ids[0], table)
        # a name can be a checkpoint's and its family's (SAGE's "GPT-4o" is gpt-4o-2024-08-06): the others are named
        others = sorted(m.id for m in table.models.values() if m.family == profile["family"] and m.id != ids[0])
        return {
            "query": query,
            "relation": relation,
            "model": profile,
            "other_checkpoints_of_its_family": [_checkpoint_row(atlas, model_id) for model_id in others],
        }
    family = table.models[ids[0]].family
    return {
        "query": query,
        "relation": relation,
        "family": family if relation == "same family" else None,
        "family_name": table.families.get(family, family) if relation == "same family" else None,
        # where the name means different checkpoints: each one's instruments ([]: a run's model and every other)
        "checkpoints": [{**_checkpoint_row(atlas, model_id), "scope": scopes.get(model_id)} for model_id in ids],
        # a run's model of this name, where that is only a family (an undated moving name)
        "run_family": run_family if relation != "same family" else None,
    }


def page_names(model_ids: Sequence[str]) -> dict[str, str]:
    """Each model page's file name: its id with every character but letters, digits, dots and dashes as "_", and a
    number where two ids would give one name."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for model_id in sorted(set(model_ids)):
        stem = re.sub(r"^\.", "_", re.sub(r"[^A-Za-z0-9.-]", "_", model_id))  # never a hidden file
        name, count = f"{stem}.html", 1
        while name.lower() in taken:  # one file per page on a case-insensitive file system too
            count += 1
            name = f"{stem}-{count}.html"
        taken.add(name.lower())
        names[model_id] = name
    return names


def _settings_text(settings: Mapping[str, Any]) -> str:
    return ", ".join(f"{printable(k, 60)} {printable(setting_text(v), 200)}" for k, v in settings.items()) or (
        "none recorded"
    )


def entry_lines(entry: Mapping[str, Any]) -> list[str]:
    """One atlas entry of a model as lines: its figure with interval and n, the published figure and the difference,
    its rank, then its settings, notes and source files (text from files made printable, never cut short)."""
    from empathybench.formatting import interval, number

    head = f"{printable(entry['model'], 300)} ({entry['status']}"
    head += ")" if entry["primary"] else ", another setting: not ranked)"
    if entry["value"] is not None:
        head += f": {number(entry['value'])} {interval(entry['ci95'])} over {number(entry['n'])}"
    published = entry["published"] or {}
    if published.get("value") is not None:
        head += f"; published {number(published['value'])}"
        if entry["difference"] is not None:
            head += f", difference {number(entry['difference'], signed=True)}"
    if entry["rank"] is not None:
        head += f"; rank {entry['rank']} of {entry['among']}"
    for name, value in entry.get("figures", {}).items():
        head += f"; {printable(name, 60)} {number(value)}"
    lines = [head, f"  settings: {_settings_text(entry['settings'])}"]
    if published.get("source"):
        lines.append(f"  published in: {printable(published['source'], 300)}")
    lines += [f"  note: {printable(note, 300)}" for note in entry["notes"]]
    lines += [
        f"  file: {printable(f['repo'], 100)}@{f['commit'][:8]} {printable(f['path'], 300)}" for f in entry["files"]
    ]
    return lines


def effect_line(effect: Mapping[str, Any]) -> str:
    from empathybench.formatting import interval, number

    changed = "; ".join(
        f"{printable(k, 40)} {printable(setting_text(a), 80)} → {printable(setting_text(b), 80)}"
        for k, (a, b) in effect["settings_changed"].items()
    )
    return (
        f"{effect['instrument']}: {changed}: {number(effect['published_setting_value'])} → "
        f"{number(effect['other_setting_value'])}, paired difference {number(effect['difference'], signed=True)} "
        f"{interval(effect['ci95'])} over {effect['n']}"
    )


def board_change_line(change: Mapping[str, Any]) -> str:
    """A model's change between two published boards: the setting, the boards, each figure on both and its change
    beside the mean change of every model on both."""
    from empathybench.formatting import number

    changed = "; ".join(
        f"{printable(k, 40)} {printable(setting_text(a), 80)} → {printable(setting_text(b), 80)}"
        for k, (a, b) in change["settings_changed"].items()
    )
    boards = " → ".join(printable(b, 80) for b in change["boards"])
    figures = "; ".join(
        f"{printable(f['label'], 80)} {number(f['first'])} → {number(f['second'])} "
        f"({number(f['change'], signed=True)}; all {f['n']} models on both: {number(f['mean_change'], signed=True)})"
        for f in change["figures"]
    )
    mark = " (it judges one of the boards: rated by itself there)" if change["judges_a_board"] else ""
    return f"{change['instrument']}: {changed} ({boards}){mark}: {figures}"


def render_model(view: Mapping[str, Any], console: Any) -> None:
    """`atlas model NAME` in the terminal: lines that wrap, never a cut model name."""
    from rich.text import Text

    def say(text: str, style: str = "") -> None:
        console.print(Text(text, style))

    if "model" not in view:
        what = f"the family {printable(view['family_name'], 200)}" if view["family"] else "different checkpoints"
        say(f"{printable(view['query'], 200)} names {what}; its checkpoints in the identity table:", "bold")
        for row in view["checkpoints"]:
            scope = row.get("scope")
            named = "" if scope is None else f" (as {', '.join(scope)}'s name)" if scope else " (as a run's model)"
            say(f"  {row['id']}{named}: {', '.join(row['instruments']) or 'no figure in the atlas'}")
        if view.get("run_family"):
            say(f"  as a run's model: only the family {printable(view['run_family'], 200)} (an undated name)")
        say("`empathybench atlas model ID` shows one checkpoint")
        return
    profile = view["model"]
    say(f"{profile['id']} (checkpoint of the family {printable(profile['family_name'], 200)})", "bold")
    names = ", ".join(
        f"{printable(a['name'], 300)}" + (f" ({a['instrument']} only)" if a["instrument"] else "")
        for a in profile["aliases"]
    )
    say(f"published as: {names}")
    if not profile["entries"]:
        say("the atlas has no figure of this checkpoint")
    current = None
    for entry in profile["entries"]:
        if (entry["instrument"], entry["metric"]) != current:
            current = (entry["instrument"], entry["metric"])
            say("")
            say(f"{printable(entry['title'], 200)}: {printable(entry['metric'], 300)}", "bold")
        for line in entry_lines(entry):
            say(f"  {line}")
    if profile["setting_effects"]:
        say("")
        say("One setting changed, the same checkpoint (paired over shared items):", "bold")
        for effect in profile["setting_effects"]:
            say(f"  {effect_line(effect)}")
    if profile["board_changes"]:
        say("")
        say("Between two published boards, one setting changed (the same model's published rows):", "bold")
        for change in profile["board_changes"]:
            say(f"  {board_change_line(change)}")
    for row in profile["capability"]:
        say(f"{printable(row['label'], 200)}: {row['value']} (as {printable(row['model'], 300)}; {row['source']})")
    others = view.get("other_checkpoints_of_its_family") or []
    if others:
        say("")
        say(f"Other checkpoints of {printable(profile['family_name'], 200)} (not this model):", "bold")
        for row in others:
            say(f"  {row['id']}: {', '.join(row['instruments']) or 'no figure in the atlas'}")
