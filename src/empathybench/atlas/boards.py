"""Published boards beside an instrument's ranked leaderboard (e.g. EQ-Bench 3 on eqbench.com, one board per judge),
and what changes between two boards that rated the same models under another setting.

A board is the non-primary published-only entries of one instrument that name it under `settings.board`. The
effect of a setting between two boards (e.g. the judge) is measured as SAGE's simulator effect is, with the models
as the pairs: for the headline (the published figure) and each figure the instrument names (`board_figures`), the
mean paired change over the models on both boards with its bootstrap interval and range, and whether the order
holds (Spearman's rho with its bootstrap interval over models). Nothing here names an instrument.
"""

import math
from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations
from typing import Any

from empathybench.atlas.place import boards_of

# The settings that say which board a row is on, not how its figures were made.
BOARD_KEYS = frozenset({"board", "board_source", "board_judge_source", "board_date"})
HEADLINE = "headline"
JUDGE_SETTING = "judge"  # the atlas entries' setting that names the judge (as judges/boards.py reads it)
DIGITS = 4


def _rounded(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else round(float(value), DIGITS)


def pairs(rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]]) -> dict[str, tuple[Any, Any]]:
    """The models on both boards: by the name both published (one upstream's two boards), else by checkpoint where
    each board has one row of it (two rows of one id, e.g. two dated snapshots under one alias, pair by name only)."""
    by_name_a = {e["model"]: e for e in reversed(rows_a)}  # a name listed twice: its first row
    by_name_b = {e["model"]: e for e in reversed(rows_b)}
    found = {f"name:{name}": (by_name_a[name], by_name_b[name]) for name in by_name_a.keys() & by_name_b.keys()}
    rest_a = [e for e in rows_a if e["model"] not in by_name_b and e.get("model_id")]
    rest_b = [e for e in rows_b if e["model"] not in by_name_a and e.get("model_id")]
    for model_id in {e["model_id"] for e in rest_a} & {e["model_id"] for e in rest_b}:
        a = [e for e in rest_a if e["model_id"] == model_id]
        b = [e for e in rest_b if e["model_id"] == model_id]
        if len(a) == len(b) == 1:
            found[f"id:{model_id}"] = (a[0], b[0])
    return found


def _figure(entry: Mapping[str, Any], name: str) -> float | None:
    value = (entry.get("published") or {}).get("value") if name == HEADLINE else (entry.get("figures") or {}).get(name)
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def board_summaries(atlas: Mapping[str, Any], instrument: str) -> list[dict[str, Any]]:
    """Each board of the instrument: its label, source, date and settings, and its rows best first."""
    summaries = []
    columns = list(atlas["instruments"][instrument].get("board_figures", []))
    for label, rows in boards_of(atlas, instrument).items():
        settings = {k: v for k, v in rows[0]["settings"].items()}
        ordered = sorted(rows, key=lambda e: (-(_figure(e, HEADLINE) or -math.inf), e["model"]))
        summaries.append(
            {
                "board": label,
                "source": settings.get("board_source"),
                "date": settings.get("board_date"),
                "settings": {k: v for k, v in settings.items() if k not in BOARD_KEYS},
                "n": len(rows),
                "columns": columns,
                "rows": [
                    {
                        "rank": rank,
                        "model": e["model"],
                        "model_id": e["model_id"],
                        "published": _figure(e, HEADLINE),
                        "published_ci95": (e.get("published") or {}).get("ci95"),
                        "figures": e.get("figures") or {},
                        "notes": e.get("notes") or [],
                    }
                    for rank, e in enumerate(ordered, start=1)
                ],
            }
        )
    return summaries


def _figure_effect(
    first: Mapping[str, float], second: Mapping[str, float], shared: Sequence[str], seed: int
) -> dict[str, Any]:
    from empathybench.stats.agreement import spearman, spearman_interval
    from empathybench.stats.intervals import paired_mean_difference

    difference, interval = paired_mean_difference(second, first, shared)
    changes = [second[k] - first[k] for k in shared]
    x, y = [first[k] for k in shared], [second[k] for k in shared]
    rho, _ = spearman(x, y)
    rho_interval = spearman_interval(x, y, seed=seed) if rho is not None else None
    return {
        "mean_first": _rounded(math.fsum(first[k] for k in shared) / len(shared)),
        "mean_second": _rounded(math.fsum(second[k] for k in shared) / len(shared)),
        "difference": _rounded(difference),
        "ci95": None if interval is None else [_rounded(interval[0]), _rounded(interval[1])],
        "range": [_rounded(min(changes)), _rounded(max(changes))],
        "spearman": {
            "rho": _rounded(rho),
            "ci95": None if rho_interval is None else [_rounded(rho_interval[0]), _rounded(rho_interval[1])],
            "n": len(shared),
        },
    }


def _judges_of(settings_a: Mapping[str, Any], settings_b: Mapping[str, Any]) -> set[str]:
    """The checkpoints that judged either board (their `judge` setting, through the identity table; the name itself
    where the table does not know it)."""
    from empathybench.models.identity import identity_table

    table = identity_table()
    judges = set()
    for settings in (settings_a, settings_b):
        judge = settings.get(JUDGE_SETTING)
        if isinstance(judge, str) and judge.strip():
            match = table.match(judge)
            judges.add(match.id if match is not None and match.id is not None else judge.strip())
    return judges


def _board_pairs(
    atlas: Mapping[str, Any], instruments: Sequence[str] | None
) -> Iterator[tuple[str, list[str], dict[str, list[Any]], dict[str, tuple[Any, Any]], set[str]]]:
    """Every pair of boards of one instrument whose settings differ: (instrument, [first, second] board, the settings
    changed, the models on both, the checkpoints that judged either board)."""
    for instrument in atlas["instruments"]:
        if instruments is not None and instrument not in instruments:
            continue
        for (a, rows_a), (b, rows_b) in combinations(boards_of(atlas, instrument).items(), 2):
            settings_a = {k: v for k, v in rows_a[0]["settings"].items() if k not in BOARD_KEYS}
            settings_b = {k: v for k, v in rows_b[0]["settings"].items() if k not in BOARD_KEYS}
            changed = sorted(k for k in set(settings_a) | set(settings_b) if settings_a.get(k) != settings_b.get(k))
            if changed:
                settings_changed = {k: [settings_a.get(k), settings_b.get(k)] for k in changed}
                yield instrument, [a, b], settings_changed, pairs(rows_a, rows_b), _judges_of(settings_a, settings_b)


def _figures_of(described: Mapping[str, Any], paired: Mapping[str, tuple[Any, Any]], seed: int) -> list[dict[str, Any]]:
    figures = []
    for name in [HEADLINE, *described.get("board_figures", [])]:
        x = {k: v for k, (e, _) in paired.items() if (v := _figure(e, name)) is not None}
        y = {k: v for k, (_, e) in paired.items() if (v := _figure(e, name)) is not None}
        shared = sorted(set(x) & set(y))
        if len(shared) >= 2:
            figures.append({"figure": name, "label": _label(described, name), **_figure_effect(x, y, shared, seed)})
    return figures


def _label(described: Mapping[str, Any], name: str) -> str:
    return str(described.get("board_headline") or "published figure") if name == HEADLINE else name


def _is_judge(pair: tuple[Any, Any], judges: set[str]) -> bool:
    return any(e.get("model_id") in judges or str(e["model"]).strip() in judges for e in pair)


def board_effects(
    atlas: Mapping[str, Any], *, instruments: Sequence[str] | None = None, seed: int = 0
) -> list[dict[str, Any]]:
    """Every pair of boards of one instrument (of `instruments`; None: all) whose settings differ: the change of
    each figure over the models on both (second board minus first), and whether their order holds; and the same
    without the models that judged either board (`without_judges`: a judge rating its own replies may favour them)."""
    from empathybench.stats.intervals import bootstrap_method

    effects = []
    for instrument, boards, changed, paired, judges in _board_pairs(atlas, instruments):
        described = atlas["instruments"][instrument]
        figures = _figures_of(described, paired, seed)
        if not figures:
            continue
        left_out = sorted(k for k, pair in paired.items() if _is_judge(pair, judges))
        kept = {k: pair for k, pair in paired.items() if k not in left_out}
        without = _figures_of(described, kept, seed) if left_out else []
        effects.append(
            {
                "instrument": instrument,
                "boards": boards,
                "settings_changed": changed,
                "n": figures[0]["spearman"]["n"],
                "figures": figures,
                "without_judges": None
                if not without
                else {
                    "left_out": [paired[k][0]["model"] for k in left_out],
                    "n": without[0]["spearman"]["n"],
                    "figures": without,
                },
                "method": "the same models on both boards (the same published name, else the same checkpoint); "
                "mean change second minus first, " + bootstrap_method(unit="models") + "; Spearman's rho, "
                f"percentile bootstrap over models, 2000 resamples, seed {seed}",
            }
        )
    return effects


def model_board_changes(atlas: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """model id -> each board pair (as `board_effects`) it is on: its own figures on both boards and their change,
    beside the plain mean change over all the models on both (no bootstrap: one model's row needs none)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for instrument, boards, changed, paired, judges in _board_pairs(atlas, None):
        described = atlas["instruments"][instrument]
        for first, second in paired.values():
            model_id = first.get("model_id") or second.get("model_id")
            if not model_id:
                continue
            figures = []
            for name in [HEADLINE, *described.get("board_figures", [])]:
                a, b = _figure(first, name), _figure(second, name)
                if a is None or b is None:
                    continue
                changes = [
                    y - x
                    for e, f in paired.values()
                    if (x := _figure(e, name)) is not None and (y := _figure(f, name)) is not None
                ]
                figures.append(
                    {
                        "figure": name,
                        "label": _label(described, name),
                        "first": _rounded(a),
                        "second": _rounded(b),
                        "change": _rounded(b - a),
                        "mean_change": _rounded(math.fsum(changes) / len(changes)),
                        "n": len(changes),
                    }
                )
            if figures:
                found.setdefault(model_id, []).append(
                    {
                        "instrument": instrument,
                        "model": first["model"],
                        "boards": boards,
                        "settings_changed": changed,
                        "judges_a_board": _is_judge((first, second), judges),
                        "figures": figures,
                    }
                )
    return found
