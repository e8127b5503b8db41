"""The atlas site's model pages (DIR/models/<id>.html): everything the atlas holds about one checkpoint, as
`empathybench atlas model ID` shows it, drawn with the report's parts (escaping by the templates)."""

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from empathybench.atlas.analysis import setting_effects
from empathybench.atlas.boards import model_board_changes
from empathybench.atlas.model import leaderboard_ranks, model_profile, page_names
from empathybench.atlas.views import setting_text
from empathybench.formatting import interval, number
from empathybench.models.identity import identity_table
from empathybench.report.page import Block, Piece, Table

MODELS_DIR = "models"
MAX_TEXT = 300
MAX_FILES_TEXT = 3000  # every source file of an entry (TactfulToM's five sets), never cut in practice


def _changed(settings_changed: Mapping[str, Any]) -> str:
    """The settings an effect changed, each "name: before → after"."""
    return "; ".join(f"{k}: {setting_text(a)} → {setting_text(b)}" for k, (a, b) in settings_changed.items())


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell(value: Any) -> tuple[Piece, ...]:
    return (Piece(_text(value)),)


def model_links(atlas: Mapping[str, Any]) -> dict[str, str]:
    """model id -> its page, relative to the site's index (every checkpoint with an atlas entry)."""
    ids = [e["model_id"] for e in atlas["entries"] if e["model_id"]]
    return {model_id: f"{MODELS_DIR}/{name}" for model_id, name in page_names(ids).items()}


def _figure_row(entry: Mapping[str, Any]) -> tuple[tuple[Piece, ...], ...]:
    published = entry["published"] or {}
    status = "published only" if entry["status"] == "published-only" else "recomputed"
    return (
        _cell(entry["model"]),
        _cell(f"{status}, {'published' if entry['primary'] else 'another (not ranked)'}"),
        _cell(number(entry["value"])),
        _cell(interval(entry["ci95"])),
        _cell(number(entry["n"])),
        _cell(number(published.get("value"))),
        _cell(number(entry["difference"], signed=True)),
        _cell("" if entry["rank"] is None else f"{entry['rank']} of {entry['among']}"),
        _cell("; ".join(f"{k} {number(v)}" for k, v in entry.get("figures", {}).items())),
    )


def _source_row(entry: Mapping[str, Any]) -> tuple[tuple[Piece, ...], ...]:
    published = entry["published"] or {}
    files = "; ".join(f"{f['repo']}@{f['commit'][:8]} {f['path']}" for f in entry["files"])
    return (
        _cell(entry["model"]),
        # every setting whole (the judge last but one of six on a board's row): the page's width, never cut
        (Piece(_text("; ".join(f"{k}: {setting_text(v)}" for k, v in entry["settings"].items()), MAX_FILES_TEXT)),),
        _cell(published.get("source")),
        (Piece(_text(files, MAX_FILES_TEXT)),),
    )


FIGURE_HEADERS = (
    "as published",
    "figure, setting",
    "recomputed",
    "95% interval",
    "n",
    "published",
    "difference",
    "rank",
    "other figures",
)


def _instrument_block(name: str, entries: Sequence[Mapping[str, Any]]) -> Block:
    """One instrument's entries of the model: a table per figure they are (the leaderboard's metric, each published
    board's own), titled by it, then their settings and sources."""
    notes = "; ".join(dict.fromkeys(note for e in entries for note in e["notes"]))
    sources = Table(
        ("as published", "settings", "published in", "released files"),
        tuple(_source_row(e) for e in entries),
        title="Settings and sources",
    )
    figures = tuple(
        Table(
            FIGURE_HEADERS,
            tuple(_figure_row(e) for e in entries if e["metric"] == metric),
            numeric=(2, 4, 5, 6),
            title=_text(metric),
        )
        for metric in dict.fromkeys(e["metric"] for e in entries)
    )
    return Block(
        anchor=f"model-{name}",
        title=_text(entries[0]["title"]),
        intro=_text(f"Notes: {notes}" if notes else "", MAX_FILES_TEXT),
        tables=(*figures, sources),
    )


def _setting_effects_block(effects: Sequence[Mapping[str, Any]]) -> Block:
    rows = tuple(
        (
            _cell(e["instrument"]),
            _cell(_changed(e["settings_changed"])),
            _cell(f"{number(e['published_setting_value'])} → {number(e['other_setting_value'])}"),
            _cell(f"{number(e['difference'], signed=True)} {interval(e['ci95'])}"),
            _cell(e["n"]),
        )
        for e in effects
    )
    return Block(
        anchor="model-effects",
        title="One setting changed",
        intro="The same checkpoint under the published setting and another: the paired difference over the "
        "items both runs scored, with its 95% bootstrap interval.",
        tables=(Table(("instrument", "setting", "figure", "paired difference [95%]", "n"), rows),),
    )


def _board_changes_block(changes: Sequence[Mapping[str, Any]]) -> Block:
    rows = tuple(
        (
            _cell(c["instrument"]),
            _cell(_changed(c["settings_changed"]) + (" (it judges one of the boards)" if c["judges_a_board"] else "")),
            _cell(" → ".join(c["boards"])),
            _cell(f["label"]),
            _cell(f"{number(f['first'])} → {number(f['second'])}"),
            _cell(number(f["change"], signed=True)),
            _cell(f"{number(f['mean_change'], signed=True)} over {f['n']}"),
        )
        for c in changes
        for f in c["figures"]
    )
    headers = ("instrument", "setting", "boards", "figure", "on both", "change", "every model on both")
    return Block(
        anchor="model-board-changes",
        title="Between two published boards",
        intro="This model's published rows on two boards of one instrument that differ in one setting (e.g. "
        "the judge): its figures on both and their change, beside the mean change of every model on both.",
        tables=(Table(headers, rows),),
    )


def _names_block(profile: Mapping[str, Any], links: Mapping[str, str]) -> Block:
    """The names the checkpoint was published under, its capability figures and the other checkpoints of its family."""
    names = tuple(
        (_cell(a["name"]), _cell(a["instrument"] or "every instrument"), _cell(a["source"])) for a in profile["aliases"]
    )
    capability = tuple(
        (_cell(f"{c['label']}: {c['value']}"), _cell(c["from"]), _cell(c["source"])) for c in profile["capability"]
    )
    table = identity_table()
    siblings = sorted(m for m in table.models if table.models[m].family == profile["family"] and m != profile["id"])
    family_rows = tuple(((Piece(_text(m), href=f"../{links[m]}"),) if m in links else _cell(m),) for m in siblings)
    tables = [Table(("name", "in", "source"), names, title="Published as")]
    if capability:
        tables.append(Table(("figure", "published beside", "source"), capability, title="General capability"))
    if family_rows:
        tables.append(Table(("checkpoint",), family_rows, title=f"Other checkpoints of {profile['family_name']}"))
    return Block(anchor="model-names", title="Names and family", tables=tuple(tables))


def model_blocks(profile: Mapping[str, Any], links: Mapping[str, str]) -> list[Block]:
    """A model page's parts: per instrument its entries; the setting effects; the changes between published boards;
    its names with their sources and the other checkpoints of its family."""
    blocks = [
        _instrument_block(name, [e for e in profile["entries"] if e["instrument"] == name])
        for name in dict.fromkeys(e["instrument"] for e in profile["entries"])
    ]
    if profile["setting_effects"]:
        blocks.append(_setting_effects_block(profile["setting_effects"]))
    if profile["board_changes"]:
        blocks.append(_board_changes_block(profile["board_changes"]))
    blocks.append(_names_block(profile, links))
    return blocks


def model_pages(atlas: Mapping[str, Any], links: Mapping[str, str]) -> Iterator[tuple[str, str, str, list[Block]]]:
    """Per checkpoint with a page (`links`): its page's path under the site, title, introduction and parts."""
    table = identity_table()
    effects, ranks, changes = setting_effects(atlas), leaderboard_ranks(atlas), model_board_changes(atlas)
    for model_id, link in links.items():
        if model_id not in table.models:
            continue  # an atlas built with another identity table: its id has no profile here
        profile = model_profile(atlas, model_id, table, effects=effects, ranks=ranks, board_changes=changes)
        intro = (
            f"A checkpoint of the family {profile['family_name']}: each instrument's figure, recomputed from its "
            "released outputs or published only, with its settings and sources."
        )
        yield link, _text(f"{model_id}: everything the atlas holds"), _text(intro), model_blocks(profile, links)
