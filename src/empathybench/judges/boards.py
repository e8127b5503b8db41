"""The atlas's published boards as judge evidence: where an instrument's two published boards rated the same models
and differ only in their judge (atlas/boards.py `board_effects`, settings changed: `judge` alone), each judge is held
to the other on those models: whether the models' order holds (Spearman's rho of each figure, with its bootstrap
interval over models) and how far the level moves (the mean change of each of the instrument's board figures, e.g. a
rubric score). Unit: model, n: the models on both boards.

The board's own headline figure (e.g. a pairwise Elo) is anchored within each board's pool of models, so only its
order is compared. Nothing here names an instrument or a judge: both come from the atlas. The rows are kept in the
cache by the shipped atlas's SHA-256 and the package's version (computing them takes ~1 s of CPU, reading them back
a few ms), so a run's report can look them up for its judge.
"""

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from empathybench.judges.evidence import Evidence, from_record, is_records
from empathybench.version import __version__

KEPT = "board-judge-evidence-3"  # raise it whenever the rows computed change
JUDGE_SETTING = "judge"  # the atlas entries' setting that names the judge
HEADLINE = "headline"  # atlas/boards.py's name of a board's own published figure


def _negated(ci: Sequence[float] | None) -> tuple[float, float] | None:
    return None if ci is None else (-ci[1], -ci[0])


def _interval(ci: Sequence[float] | None) -> tuple[float, float] | None:
    return None if ci is None else (ci[0], ci[1])


def judge_change_rows(atlas: Mapping[str, Any], effects: Sequence[Mapping[str, Any]]) -> list[Evidence]:
    """Both judges' rows of every board pair (of `effects`, atlas/boards.py `board_effects`) whose only changed
    setting is the judge."""
    rows: list[Evidence] = []
    for effect in effects:
        changed = effect["settings_changed"]
        if set(changed) != {JUDGE_SETTING}:
            continue  # another setting moved too: the judge's part cannot be told apart
        first, second = (str(judge) for judge in changed[JUDGE_SETTING])
        title = str(atlas["instruments"][effect["instrument"]].get("title") or effect["instrument"])
        boards = " and ".join(str(board) for board in effect["boards"])
        for judge, other, sign in ((first, second, -1.0), (second, first, 1.0)):
            # The other judge is named in the note: a dated checkpoint name in `against` would widen every table.
            against = "the other board's judge"
            note = f"against {other}; the models on both boards {boards}, each board judged by one of the two"
            for figure in effect["figures"]:
                label = f"{title} {figure['label']}"
                rho = figure["spearman"]
                rows.append(
                    Evidence(
                        judge=judge,
                        source=BoardJudgeChangeSource.name,
                        against=against,
                        aspect=f"{label}: model order",
                        statistic="Spearman's rho",
                        value=rho["rho"],
                        ci95=_interval(rho["ci95"]),
                        n=rho["n"],
                        unit="model",
                        headline=figure["figure"] == HEADLINE,
                        note=note,
                    )
                )
                if figure["figure"] == HEADLINE:
                    continue  # anchored within each board: its level is not comparable across boards
                difference = figure["difference"]
                low, high = figure["range"] if sign > 0 else (-figure["range"][1], -figure["range"][0])
                rows.append(
                    Evidence(
                        judge=judge,
                        source=BoardJudgeChangeSource.name,
                        against=against,
                        aspect=f"{label}: mean",
                        statistic="mean change (this judge - the other)",
                        value=None if difference is None else sign * difference,
                        ci95=_interval(figure["ci95"]) if sign > 0 else _negated(figure["ci95"]),
                        n=rho["n"],
                        unit="model",
                        note=f"{note}; per model from {low:+g} to {high:+g}",
                    )
                )
    return rows


def _computed(atlas: Mapping[str, Any]) -> dict[str, Any]:
    from empathybench.atlas.boards import board_effects

    effects = [e for e in board_effects(atlas) if set(e["settings_changed"]) == {JUDGE_SETTING}]
    return {"rows": [row.as_record() for row in judge_change_rows(atlas, effects)], "effects": effects}


def _is_kept(kept: Any) -> bool:
    return isinstance(kept, dict) and is_records(kept.get("rows")) and isinstance(kept.get("effects"), list)


@cache
def shipped_judge_change() -> dict[str, Any]:
    """{"rows": every judge's records, "effects": the board pairs behind them} of the shipped atlas, kept in the cache
    by the atlas's SHA-256 and the package's version."""
    from empathybench.atlas.data import shipped_atlas, shipped_path
    from empathybench.data.fetch import FetchedFile, sha256_of
    from empathybench.data.parsed import parsed_document

    path = shipped_path()
    try:
        digest = sha256_of(path.read_bytes())
    except OSError as exc:
        from empathybench.errors import UserError

        raise UserError(f"cannot read the shipped atlas {path}: {exc.strerror or exc}") from None
    shipped = FetchedFile(key="atlas", path=path, sha256=digest, verified=True, source="the shipped atlas")
    return parsed_document(shipped, f"{KEPT}-{__version__}", lambda _: _computed(shipped_atlas()), _is_kept)


def shipped_rows() -> list[Evidence]:
    return [from_record(record) for record in shipped_judge_change()["rows"]]


@cache
def board_judges() -> frozenset[str]:
    """The judges the shipped atlas's boards name (read from their entries, nothing computed): a report whose judge
    is none of them needs no board rows, so it never computes them."""
    from empathybench.atlas.data import shipped_atlas

    return frozenset(
        str(entry["settings"][JUDGE_SETTING])
        for entry in shipped_atlas()["entries"]
        if entry["settings"].get("board") and entry["settings"].get(JUDGE_SETTING)
    )


class BoardJudgeChangeSource:
    """The shipped atlas's boards that differ only in their judge (module docstring)."""

    name = "board-judge-change"
    title = (
        "Leaderboards' judge change: the same models on an instrument's two published boards, each board rated by "
        "another judge (the atlas)"
    )

    def __init__(self) -> None:
        kept = shipped_judge_change()
        self.rows = [from_record(record) for record in kept["rows"]]
        self.effects: list[dict[str, Any]] = kept["effects"]

    def evidence(self) -> list[Evidence]:
        return list(self.rows)

    def detail(self) -> dict[str, Any]:
        notes = [
            f"{effect['instrument']}: {' and '.join(effect['boards'])}, {effect['n']} models on both; intervals: "
            "bootstrap over the models (--json: each figure and the method)"
            for effect in self.effects
        ]
        return {"effects": self.effects, "notes": notes}
