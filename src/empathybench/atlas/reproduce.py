"""The reproduction check: does a run reproduce the published run of the same model?

For each instrument of the atlas the run has, the atlas entry of the same checkpoint (the identity table's match
of the run's --model), the published figure, the recomputed figure and the run's, and:
- where both carry per-item values (the same item ids): the paired difference run - published over the items both
  scored, with its bootstrap interval;
- where the published figure is not a mean over items (an Elo, a composite): run - published with the run's own
  interval shifted by the published figure (the weaker check, labelled so);
- either way the verdict is an equivalence test against the instrument's margin m (its `reproduction_margin`, with
  its source): `consistent` when the 95% interval lies within ±m, `differs` when it lies wholly outside ±m,
  `inconclusive` otherwise (too few items, or too noisy, to say);
- where the interval alone is wider than 2m, the check cannot come out `consistent` whatever the difference, and its
  line says so; where the published run's items are other questions than the run's, its line says that too;
- every setting of the run that differs from the published run's (its config and its judge and simulator), and the
  published run's settings the run does not record (not the keys that say which board a figure was published on).
"""

from collections.abc import Mapping
from typing import Any

from empathybench.atlas.boards import BOARD_KEYS
from empathybench.atlas.place import board_for_run, not_comparable_because, place_run, run_metric, standing
from empathybench.models.identity import identity_table
from empathybench.report.page import NO_PUBLISHED_RUN
from empathybench.rundir.reader import RunData
from empathybench.stats.equivalence import equivalence_verdict

ROLE_SETTINGS = ("judge", "simulator")
QUANTISATION = "quantisation"
NOT_RECORDED = "not recorded by the run"
MIN_SHARED_ITEMS = 2
NO_CHECKPOINT = "the atlas has no published run of this checkpoint"
TOO_WIDE = "the {what} alone is wider than ±m: no verdict of equivalence possible with this many items"
OTHER_ITEMS = (
    "the published run's items are other questions than the run's ({shared} shared): the figures are compared, "
    "not the answers"
)


def _role(run: RunData, role: str) -> str | None:
    """The model that played `role` in the run (its spec); "self": the model under test played it, so it is that
    model (compared as the judge or simulator of the published run)."""
    entry = run.run_info.get(role)
    spec = entry.get("spec") if isinstance(entry, dict) else None
    if spec == "self":
        return str(run.summary.get("model") or "self")
    return str(spec) if spec else None


def _same_model(first: Any, second: Any) -> bool:
    """Two model names for one setting (e.g. the simulator): the same checkpoint, or the same text."""
    if str(first).strip().lower() == str(second).strip().lower():
        return True
    table = identity_table()
    a, b = table.match(str(first)), table.match(str(second))
    return a is not None and b is not None and a.id is not None and a.id == b.id


def run_quantisation(run: RunData) -> str:
    """The quantisation of the weights a run used, as the run records it: a llama.cpp GGUF file's name states it
    ("GGUF Q4_K_M"); a provider's API or a name without a tag records none."""
    from empathybench.models.llamacpp_backend import gguf_quant_tag

    model = str(run.summary.get("model") or "")
    tag = gguf_quant_tag(model) if model.lower().startswith("llamacpp/") else None
    return f"GGUF {tag}" if tag else NOT_RECORDED


def setting_differences(run: RunData, instrument: str, published: Mapping[str, Any]) -> dict[str, Any]:
    """The run's settings beside the published run's: those that differ, and those the run does not record."""
    entry = (run.summary.get("benchmarks") or {}).get(instrument) or {}
    config = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    differs: dict[str, Any] = {}
    unknown: dict[str, Any] = {}
    for key, value in published.items():
        if key in BOARD_KEYS:
            continue  # where the figure was published, not how the run that made it ran
        if key in ROLE_SETTINGS:
            mine = _role(run, key)
            if mine is None:
                unknown[key] = value
            elif not _same_model(mine, value):
                differs[key] = {"run": mine, "published": value}
        elif key == QUANTISATION and key not in config and value is not None:
            quantised = run_quantisation(run)
            if quantised == NOT_RECORDED:
                unknown[key] = value
            elif quantised.lower() != str(value).lower():
                differs[key] = {"run": quantised, "published": value}
        elif key in config:
            if config[key] != value:
                differs[key] = {"run": config[key], "published": value}
        elif value is not None:
            unknown[key] = value
    return {"differs": differs, "not_recorded_by_the_run": unknown}


NO_MARGIN = {"value": 0.0, "source": "the instrument declares no margin: only an interval of [0, 0] agrees"}


def _too_wide(interval: tuple[float, float] | None, margin: float, what: str) -> str | None:
    """Why an `inconclusive` interval this wide could never have been `consistent`: it is wider than the 2m the
    margin allows (None otherwise, and for a `differs`, which needs no excuse)."""
    if interval is None or interval[1] - interval[0] <= 2 * margin:
        return None
    if equivalence_verdict(interval, margin) != "inconclusive":
        return None
    return TOO_WIDE.format(what=what)


def _paired(
    run_items: Mapping[str, Any], entry: Mapping[str, Any], run_scale: float, margin: float
) -> dict[str, Any] | None:
    items = entry.get("items") or {}
    shared = sorted(set(run_items) & set(items))
    usable = [k for k in shared if isinstance(run_items[k], int | float)]
    if len(usable) < MIN_SHARED_ITEMS:
        return None
    scale = float(entry.get("scale") or 1.0)
    if abs(scale - run_scale) > 1e-9:
        return None  # not the same quantity per item
    # numpy only here: a report of a model the atlas does not know loads none of it
    from empathybench.stats.intervals import bootstrap_method, paired_mean_difference

    difference, interval = paired_mean_difference(run_items, items, usable, scale=scale)
    return {
        "kind": "paired over items",
        "difference": round(difference, 4),
        "ci95": None if interval is None else [round(interval[0], 4), round(interval[1], 4)],
        "n": len(usable),
        "method": "run minus published run, item by item; " + bootstrap_method(),
        "verdict": equivalence_verdict(interval, margin),
        "notes": [note] if (note := _too_wide(interval, margin, "paired interval")) else [],
    }


def _within_interval(
    run_metric: Mapping[str, Any], entry: Mapping[str, Any], published_value: float, margin: float
) -> dict[str, Any] | None:
    """No item pairs with the published run's: the interval of run - published is the run's own interval shifted
    by the published figure (the published figure counted as exact), tested against ±m as the paired one is."""
    ci = run_metric.get("ci95")
    if not ci or ci[0] is None or ci[1] is None:
        return None
    shifted = (float(ci[0]) - published_value, float(ci[1]) - published_value)
    published_items = entry.get("items") or {}
    notes = [note] if (note := _too_wide(shifted, margin, "run's interval")) else []
    shared = len(set(published_items) & set(run_metric.get("items") or {}))
    if published_items and shared < MIN_SHARED_ITEMS:  # per-item values of other questions (another dataset)
        notes.append(OTHER_ITEMS.format(shared=shared))
        why = "the published run's items are not the run's"
    elif published_items:
        why = "the published run's per-item values are another quantity than the run's"
    else:
        why = "the published run has no per-item values"
    return {
        "kind": "published figure against the run's interval",
        "difference": round(float(run_metric["value"]) - published_value, 4),
        "ci95": [round(shifted[0], 4), round(shifted[1], 4)],
        "n": run_metric.get("n"),
        "method": f"{why}: the run's own 95% interval minus the published figure",
        "verdict": equivalence_verdict(shifted, margin),
        "notes": notes,
    }


def comparison_digits(comparison: Mapping[str, Any], margin: float | None = None) -> int:
    """Decimals that make a difference, its interval and the margin readable: two significant digits of the smallest
    nonzero of them, at least 2 and at most 4 (the check's own rounding); +0.0016 [0.0006, 0.0028], not +0.00."""
    values = [comparison.get("difference"), *(comparison.get("ci95") or ()), margin]
    smallest = min((abs(float(v)) for v in values if isinstance(v, int | float) and v), default=1.0)
    digits = 2
    while digits < 4 and smallest < 10 ** (1 - digits):
        digits += 1
    return digits


def comparison_text(comparison: Mapping[str, Any] | None, margin: Mapping[str, Any]) -> str:
    """ "difference +0.0016 [0.0006, 0.0028] over 171 (paired over items), margin ±1.00: consistent", with the
    check's notes after the verdict (why it cannot be `consistent`, other questions than the run's)."""
    from empathybench.formatting import interval, number

    if comparison is None:
        return "no comparison: no shared items and no interval"
    digits = comparison_digits(comparison, margin.get("value"))
    text = (
        f"difference {number(comparison.get('difference'), digits, signed=True)} "
        f"{interval(comparison.get('ci95'), digits)} over {number(comparison.get('n'))} ({comparison.get('kind')}), "
        f"margin ±{number(float(margin['value']), 2)}: {comparison.get('verdict') or 'no verdict'}"
    )
    return "; ".join([text, *(str(note) for note in comparison.get("notes") or ())])


def check_run(atlas: Mapping[str, Any], run: RunData) -> dict[str, Any]:
    """Per instrument the run has: the matched published model and the check (None where the atlas has no entry of
    the run's checkpoint)."""
    model = str(run.summary.get("model", ""))
    match = identity_table().match(model) if model else None
    checks: dict[str, Any] = {}
    for instrument, described in atlas["instruments"].items():
        metric_key = described.get("summary_metric")
        metric = run_metric(run, instrument, metric_key) if metric_key else None
        if metric is None:
            continue
        board, no_board = None, None
        if described.get("board_placement"):  # the row of the board rated by the run's judge, by its column
            board, pool, no_board = board_for_run(atlas, instrument, run)
        else:
            pool = [(e, None) for e in atlas["entries"] if e["instrument"] == instrument and e["primary"]]
        candidates = [
            (e, figure)
            for e, figure in pool
            if match is not None and match.id is not None and e["model_id"] == match.id
        ]
        if not candidates:
            checks[instrument] = {
                "matched": None,
                "why": no_board
                or (
                    NO_CHECKPOINT
                    if match is None or match.id is not None
                    else f"the model names only a family ({match.family}), not a checkpoint"
                ),
                "run_value": metric["value"],
            }
            continue
        entry, board_figure = candidates[0]
        published = entry.get("published") or {}
        if board_figure is not None:
            published = {"value": board_figure, "source": f"{published.get('source')} ({board})"}
        reference = entry["value"] if entry["value"] is not None else published.get("value")
        margin = described.get("reproduction_margin") or NO_MARGIN
        comparison = _paired(metric.get("items") or {}, entry, float(metric.get("scale") or 1.0), margin["value"])
        if comparison is None and reference is not None:
            comparison = _within_interval(metric, entry, float(reference), margin["value"])
        checks[instrument] = {
            "matched": {
                "model": entry["model"],
                "model_id": entry["model_id"],
                "status": entry["status"],
                "relation": match.relation if match else None,
                "alias_source": match.alias.source if match and match.alias else None,
                # which source decided the checkpoint, where the name alone does not: the run's name, the entry's
                "decided_by": match.alias.decided_by if match and match.alias else None,
                "published_identity": entry.get("identity"),
            },
            "metric": described["metric"],
            "published_value": published.get("value"),
            "published_source": published.get("source"),
            "recomputed_value": entry["value"],
            "run_value": metric["value"],
            "run_ci95": metric.get("ci95"),
            "comparison": comparison,
            "margin": {"value": margin["value"], "source": margin["source"]},
            "verdict": None if comparison is None else comparison["verdict"],
            "settings": setting_differences(run, instrument, entry["settings"]),
            "not_comparable_because": not_comparable_because(run, instrument),
        }
    return {"run": str(run.directory), "model": model, "instruments": checks}


def published_standing(summary: Mapping[str, Any], run_info: Mapping[str, Any]) -> list[dict[str, Any]]:
    """For a run's report: per instrument of the atlas the run has, its place among the published models and, where
    its model is an atlas model, the reproduction check ({} for an instrument with neither). The shipped atlas."""
    from pathlib import Path

    from empathybench.atlas.data import shipped_atlas

    atlas = shipped_atlas()
    run = RunData(Path(str(summary.get("run_dir") or ".")), dict(summary), dict(run_info))
    checks = check_run(atlas, run)["instruments"]
    rows = []
    for placement in place_run(atlas, run):
        check = checks.get(placement["instrument"]) or {}
        matched = bool(check.get("matched"))
        rows.append({**placement, "reproduction": check if matched else None, "no_check_because": check.get("why")})
    return rows


def standing_texts(summary: Mapping[str, Any], run_info: Mapping[str, Any]) -> list[dict[str, str]]:
    """`published_standing` as the lines a report prints: per instrument (its name under "instrument") the run's
    figure, its rank, the nearest published models and the reproduction check, as text."""
    from empathybench.formatting import number

    texts = []
    for row in published_standing(summary, run_info):
        nearest = ", ".join(f"{n['model']} {number(n['value'])}" for n in row["nearest"])
        check = row["reproduction"]
        if check is None:  # why there is no check (e.g. no board rated by the run's judge), in the terminal's words
            why = row.get("no_check_because")
            reproduction = NO_PUBLISHED_RUN if why in (None, NO_CHECKPOINT) else str(why)
        else:
            reproduction = (
                f"{check['matched']['model']}: published {number(check['published_value'])}, "
                f"{comparison_text(check['comparison'], check['margin'])} (margin: {check['margin']['source']})"
            )
            differs = ", ".join(sorted(check["settings"]["differs"]))
            if differs:
                reproduction += f"; settings that differ: {differs}"
        rank = standing(row)
        if not row["comparable"]:
            rank += " (not comparable: its section says why)"  # the instrument's label is said once, there
        texts.append(
            {
                "instrument": row["instrument"],
                "this run": number(row["value"]),
                "rank": rank,
                "nearest published models": nearest,
                "reproduction": reproduction,
            }
        )
    return texts


def report_standing(summary: Mapping[str, Any], run_info: Mapping[str, Any]) -> list[dict[str, str]]:
    """`standing_texts` for a run's report.html and report.md (computed once for both); none without a readable
    atlas: the report goes on without it."""
    from empathybench.errors import UserError

    try:
        return standing_texts(summary, run_info)
    except UserError:
        return []
