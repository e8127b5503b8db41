"""Pairwise Elo among the user's own EQ-Bench 3 runs: `empathybench report A B C ... --judge SPEC` (spec §5).

Which matchups: every pair of runs on every scenario both finished (turns and, where the task has one, the
debrief), always in both orders, because the first-shown respondent wins 70.6% of role-play judgements in the
April 2025 file (spec §6.1 item 4). This is upstream's last stage ("full depth") without its ladder schedule, which
exists to save judge calls against a 27-model leaderboard; a few runs of one's own can afford every pair.

Verdicts are read and turned into margins as upstream (the plus counting, the trailing-comma JSON, the 3c21bcc rules:
identity blend, analysis judgements clamped), grouped per (pair, scenario) and solved with the `trueskill` package in
upstream's environment: mu from a B = 20 solve, sigma from a B = 5 solve, interval mu ± 1.96 sigma (upstream's own
"guesstimate", not a calibrated interval).

Anchors. Upstream normalises o3 to 1500 and meta-llama/llama-3.2-1b-instruct to 200. When both are among the runs
(by their model names) the same map is used; otherwise the first run given is fixed at 1200 and the others keep
their raw TrueSkill distance from it (scale 1): the numbers compare these runs with one another, never with the
leaderboard.

This module is pure: `prepare_comparison` gives the matchups, how to judge one through an ItemContext and how to
turn the verdicts into the output; run/comparisons.py asks the judge as a run asks (engine, response cache, retries,
cost and --max-cost, --batch, --dry-run) and keeps each verdict in a judgements file keyed by the judge and the exact
prompt, so a comparison with one more run asks the judge only about the pairs with the new run.
"""

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from empathybench.errors import UserError
from empathybench.formatting import number
from empathybench.instruments.eqbench3.data import Protocol, Scenario
from empathybench.instruments.eqbench3.pairwise import (
    BIN_SIZE,
    BIN_SIZE_FOR_CI,
    CI_Z,
    DEFAULT_ANCHORS,
    RANK_WINDOW,
    Judgement,
    Normalisation,
    Respondent,
    group_judgements,
    judgement_from_verdict,
    normalisation,
    pairwise_prompt,
    parse_pairwise_reply,
    solve_trueskill,
    within_window,
)
from empathybench.instruments.protocol import (
    ChartPoint,
    ComparisonJudging,
    ComparisonOutput,
    FactsTable,
    HeatmapChart,
    ItemContext,
    PreparedComparison,
    ReportSection,
    StripChart,
)

INSTRUMENT = "eqbench3"
FIRST_RUN_RATING = 1200.0  # the first run's fixed rating when the published anchors are not among the runs
MAX_STORED_ERROR_REPLY = 2000  # characters of an unreadable judge reply kept in the judgements file


@dataclass(frozen=True)
class ComparedRun:
    """One run's finished EQ-Bench 3 transcripts, by scenario id."""

    label: str
    directory: str
    judge_model: str  # its rubric judge (the pairwise judge may differ)
    respondents: dict[str, Respondent]


def respondent(record: Mapping[str, Any], scenario: Scenario) -> Respondent | None:
    """The transcript of one finished task (every turn, and the debrief where the task has one); None: unfinished."""
    from empathybench.instruments.eqbench3.conversation import has_debrief

    turns = record.get("turns")
    if not isinstance(turns, list) or len(turns) != len(scenario.turns):
        return None
    if not all(isinstance(t, Mapping) and isinstance(t.get("reply"), str) for t in turns):
        return None
    debrief_entry = record.get("debrief")
    debrief = debrief_entry.get("text") if isinstance(debrief_entry, Mapping) else None
    if has_debrief(scenario) and not isinstance(debrief, str):
        return None
    parsed = [{k: str(v) for k, v in (t.get("sections") or {}).items()} for t in turns]
    return Respondent([t["reply"] for t in turns], parsed, debrief if isinstance(debrief, str) else None)


def _labels(runs: Sequence[Any]) -> list[str]:
    """The runs' model names, made unique with the run directory's name when two runs share a model."""
    names = [str(run.summary.get("model") or run.directory.name) for run in runs]
    labels: list[str] = []
    for name, run in zip(names, runs, strict=True):
        label = name if names.count(name) == 1 else f"{name} ({run.directory.name})"
        while label in labels:
            label += "'"
        labels.append(label)
    return labels


def compared_runs(runs: Sequence[Any], protocol: Protocol) -> list[ComparedRun]:
    """Each run's finished transcripts (scenarios the protocol does not know are left out)."""
    compared: list[ComparedRun] = []
    for run, label in zip(runs, _labels(runs), strict=True):
        respondents: dict[str, Respondent] = {}
        for record in run.samples():
            if record.get("benchmark", INSTRUMENT) != INSTRUMENT:
                continue
            scenario_id = str(record.get("scenario_id") or record.get("item_id") or "")
            scenario = protocol.scenarios.get(scenario_id)
            found = respondent(record, scenario) if scenario is not None else None
            if found is not None:
                respondents[scenario_id] = found
        result = run.summary.get("benchmarks", {}).get(INSTRUMENT, {})
        compared.append(ComparedRun(label, str(run.directory), str(result.get("judge_model") or ""), respondents))
    return compared


@dataclass(frozen=True)
class Matchup:
    """One judge call: a scenario, the run shown first (A0493) and the run shown second (A0488)."""

    scenario_id: str
    first: int  # index into the runs
    second: int
    prompt: str
    key: str  # judge + prompt: the judgements file's key

    @property
    def label(self) -> str:
        return f"scenario {self.scenario_id}"


def _sort_key(scenario_id: str) -> tuple[int, str]:
    return (int(scenario_id), scenario_id) if scenario_id.isdigit() else (10**9, scenario_id)


def matchups(protocol: Protocol, runs: Sequence[ComparedRun], judge_key: str) -> list[Matchup]:
    """Every pair of runs on every scenario both finished, in both orders (the earlier run's forward order first)."""
    result: list[Matchup] = []
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            shared = sorted(set(runs[i].respondents) & set(runs[j].respondents), key=_sort_key)
            for scenario_id in shared:
                scenario = protocol.scenarios[scenario_id]
                for first, second in ((i, j), (j, i)):
                    prompt = pairwise_prompt(
                        protocol, scenario, runs[first].respondents[scenario_id], runs[second].respondents[scenario_id]
                    )
                    key = hashlib.sha256(f"{judge_key}\n{prompt}".encode()).hexdigest()
                    result.append(Matchup(scenario_id, first, second, prompt, key))
    return result


def _judge_key(identity: Mapping[str, Any]) -> str:
    return json.dumps({k: identity.get(k) for k in ("provider", "model", "base_url")}, sort_keys=True)


async def judge_matchup(matchup: Matchup, ctx: ItemContext) -> dict[str, Any]:
    """One judge call on one matchup; the verdict as the judgements file keeps it."""
    from empathybench.instruments.eqbench3.conversation import JUDGE_SAMPLING

    judged = await ctx.judge_generate(matchup.prompt, JUDGE_SAMPLING)
    parsed = parse_pairwise_reply(judged.text)
    entry: dict[str, Any] = {
        "scenario_id": matchup.scenario_id,
        "judge_model": str(ctx.judge_identity.get("model", "")),
        "verdict": parsed.verdict,
        "error": parsed.error,
        "repairs": list(parsed.repairs),
    }
    if parsed.verdict is None:
        entry["raw_judge_response"] = judged.text[:MAX_STORED_ERROR_REPLY]
    return entry


def judgements_of(
    matches: Sequence[Matchup], verdicts: Mapping[str, Mapping[str, Any]], runs: Sequence[ComparedRun]
) -> list[Judgement]:
    """Valid verdicts as upstream's comparison records: the earlier run of each pair is the "test model"."""
    judgements: list[Judgement] = []
    for matchup in matches:
        verdict = (verdicts.get(matchup.key) or {}).get("verdict")
        if not isinstance(verdict, dict):
            continue
        test, other = sorted((matchup.first, matchup.second))
        judgements.append(
            judgement_from_verdict(
                verdict,
                scenario_id=matchup.scenario_id,
                iteration="1",
                test_model=runs[test].label,
                other_model=runs[other].label,
                test_first=matchup.first == test,
            )
        )
    return judgements


def anchor_map(raw: Mapping[str, float], first_label: str) -> tuple[Normalisation, str]:
    """Upstream's anchors when both anchor models are among the runs; else the first run fixed at 1200."""
    published = normalisation(raw, DEFAULT_ANCHORS)
    if published.anchored:
        (high, high_value), (low, low_value) = DEFAULT_ANCHORS
        return published, f"published anchors: {high} = {high_value:g}, {low} = {low_value:g} (as upstream)"
    shift = FIRST_RUN_RATING - raw[first_label]
    return Normalisation(1.0, shift, True), (
        f"the first run ({first_label}) fixed at {FIRST_RUN_RATING:g}; the others at their raw TrueSkill distance "
        "from it. Comparable within this comparison only, not with the leaderboard's Elo"
    )


def solve(judgements: Sequence[Judgement], labels: Sequence[str]) -> tuple[dict[str, dict[str, float]], str]:
    """Ratings as the pinned commit's final solve (rank window 16 on a B = 20 ladder; mu B = 20, sigma B = 5)."""
    groups = group_judgements(judgements)
    ladder = {model: mu for model, (mu, _) in solve_trueskill(groups, labels).items()}
    kept = within_window(groups, ladder, RANK_WINDOW)
    solved = solve_trueskill(kept, labels, bin_size=BIN_SIZE)
    for_ci = solve_trueskill(kept, labels, bin_size=BIN_SIZE_FOR_CI)
    norm, anchors = anchor_map({m: mu for m, (mu, _) in solved.items()}, labels[0])
    rows: dict[str, dict[str, float]] = {}
    for model in labels:
        mu, sigma = solved[model][0], for_ci[model][1]
        low, high = round(mu - CI_Z * sigma, 2), round(mu + CI_Z * sigma, 2)
        rows[model] = {
            "elo": round(norm.apply(mu), 2),
            "ci_low": round(norm.apply(low), 2),
            "ci_high": round(norm.apply(high), 2),
            "elo_raw": round(mu, 2),
            "sigma": round(sigma, 2),
        }
    return rows, anchors


BT_PRIOR = 0.5  # pseudo-wins each way per compared pair: keeps a run that won every scenario at a finite rating
BT_RESAMPLES = 1000
BT_SCALE = 400.0  # Elo points per factor 10 of strength


def bradley_terry(outcomes: Sequence[tuple[int, int, float]], n_models: int) -> list[float]:
    """Elo-scaled Bradley-Terry ratings (mean 0) from (i, j, score of i) outcomes, draws half a win each way.

    Minorise-maximise iterations (Hunter 2004) with BT_PRIOR pseudo-wins each way on every compared pair.
    """
    return [float(v) for v in _bradley_terry_fits(_win_matrix(outcomes, n_models)[None])[0]]


def _win_matrix(outcomes: Sequence[tuple[int, int, float]], n_models: int) -> Any:
    """wins[i, j]: how often i beat j (a draw is half a win each way)."""
    import numpy as np

    wins = np.zeros((n_models, n_models))
    for i, j, score in outcomes:
        wins[i, j] += score
        wins[j, i] += 1.0 - score
    return wins


def _bradley_terry_fits(wins: Any) -> Any:
    """Elo-scaled ratings (mean 0 in each row) for a stack of win matrices (fits, n, n), all fitted at once: each
    fit takes the same steps it would take alone and stops at its own convergence (a bootstrap's 1,000 resamples
    cost about what one fit did)."""
    import numpy as np

    swapped = wins.transpose(0, 2, 1)
    wins = wins + BT_PRIOR * ((wins + swapped) > 0)
    games = wins + wins.transpose(0, 2, 1)
    won = wins.sum(axis=2)
    strength = np.ones(won.shape)
    active = np.ones(len(won), dtype=bool)
    for _ in range(500):
        denominator = (games / (strength[:, :, None] + strength[:, None, :])).sum(axis=2)
        updated = np.where(denominator > 0, won / np.where(denominator > 0, denominator, 1.0), 1.0)
        updated = updated / np.exp(np.log(updated).mean(axis=1, keepdims=True))
        converged = np.max(np.abs(updated - strength), axis=1) < 1e-12
        strength = np.where(active[:, None], updated, strength)
        active &= ~converged
        if not active.any():
            break
    elo = BT_SCALE * np.log10(strength)
    return elo - elo.mean(axis=1, keepdims=True)


def bradley_terry_table(
    judgements: Sequence[Judgement], labels: Sequence[str], *, seed: int = 0
) -> dict[str, dict[str, float]]:
    """A plain Bradley-Terry fit on the per-scenario outcomes, with percentile intervals from resampling scenarios.

    The honest companion of upstream's TrueSkill (spec §10): one outcome per (pair, scenario), no margin bins, and an
    interval that reflects how much the ranking depends on which scenarios were asked. The first run is at 1200.
    """
    import numpy as np

    index = {label: i for i, label in enumerate(labels)}
    by_scenario: dict[str, list[tuple[int, int, float]]] = {}
    for group in group_judgements(judgements):
        score = 1.0 if group.plus_1 > group.plus_2 else 0.0 if group.plus_1 < group.plus_2 else 0.5
        by_scenario.setdefault(group.scenario_id, []).append((index[group.model_1], index[group.model_2], score))
    scenarios = sorted(by_scenario, key=_sort_key)

    # One win matrix per scenario; a resample's is the sum of its scenarios', counted with repetition (exact: every
    # entry is a multiple of one half).
    per_scenario = np.array([_win_matrix(by_scenario[sid], len(labels)) for sid in scenarios]).reshape(
        len(scenarios), len(labels) ** 2
    )

    def fits(counts: Any) -> Any:
        ratings = _bradley_terry_fits((counts @ per_scenario).reshape(len(counts), len(labels), len(labels)))
        return FIRST_RUN_RATING + ratings - ratings[:, :1]

    point = [float(v) for v in fits(np.ones((1, len(scenarios))))[0]]
    from empathybench.stats.bootstrap import generator

    rng = generator(seed)  # the one bootstrap RNG (stats/bootstrap.py), drawn as one resample after another
    if scenarios:
        picks = [rng.integers(0, len(scenarios), len(scenarios)) for _ in range(BT_RESAMPLES)]
        draws = fits(np.array([np.bincount(p, minlength=len(scenarios)) for p in picks], dtype=float))
    else:
        draws = np.zeros((0, len(labels)))
    table: dict[str, dict[str, float]] = {}
    for i, label in enumerate(labels):
        low, high = np.percentile(draws[:, i], [2.5, 97.5]) if len(draws) else (point[i], point[i])
        table[label] = {"elo": round(point[i], 2), "ci_low": round(float(low), 2), "ci_high": round(float(high), 2)}
    return table


def win_matrix(judgements: Sequence[Judgement], labels: Sequence[str]) -> dict[str, dict[str, dict[str, float | None]]]:
    """Per ordered pair of runs: scenarios won, drawn and lost (both orders' pluses summed, as the solver groups)."""
    matrix: dict[str, dict[str, dict[str, float | None]]] = {
        a: {b: {"won": 0, "drawn": 0, "lost": 0} for b in labels if b != a} for a in labels
    }
    for group in group_judgements(judgements):
        if group.plus_1 == group.plus_2:
            matrix[group.model_1][group.model_2]["drawn"] += 1  # type: ignore[operator]
            matrix[group.model_2][group.model_1]["drawn"] += 1  # type: ignore[operator]
            continue
        winner, loser = (
            (group.model_1, group.model_2) if group.plus_1 > group.plus_2 else (group.model_2, group.model_1)
        )
        matrix[winner][loser]["won"] += 1  # type: ignore[operator]
        matrix[loser][winner]["lost"] += 1  # type: ignore[operator]
    for row in matrix.values():
        for cell in row.values():
            n = cell["won"] + cell["drawn"] + cell["lost"]  # type: ignore[operator]
            cell["win_share"] = (cell["won"] + cell["drawn"] / 2) / n if n else None
    return matrix


def position_bias(judgements: Sequence[Judgement]) -> dict[str, Any]:
    """How often the first-shown respondent wins, and how often the two orders of a scenario disagree."""
    first_wins = decided = 0
    winners: dict[tuple[str, str, str], list[str]] = {}
    for j in judgements:
        if j.outcome_for_test == 0.5:
            continue
        decided += 1
        test_won = j.outcome_for_test == 1.0
        first_wins += test_won == j.test_first
        winners.setdefault((j.test_model, j.other_model, j.scenario_id), []).append("test" if test_won else "other")
    both = [w for w in winners.values() if len(w) == 2]
    return {
        "first_shown_win_share": first_wins / decided if decided else None,
        "decided_judgements": decided,
        "order_disagreement_share": sum(w[0] != w[1] for w in both) / len(both) if both else None,
        "groups_with_both_orders_decided": len(both),
    }


def _section(result: Mapping[str, Any]) -> ReportSection:
    labels = list(result["ratings"])
    ranked = sorted(labels, key=lambda m: -result["ratings"][m]["elo"])
    matrix = result["win_matrix"]
    rows = tuple(
        (
            rank,
            model,
            result["ratings"][model]["elo"],
            result["ratings"][model]["ci_low"],
            result["ratings"][model]["ci_high"],
            result["ratings"][model]["elo_raw"],
            result["ratings"][model]["sigma"],
            sum(c["won"] for c in matrix[model].values()),
            sum(c["drawn"] for c in matrix[model].values()),
            sum(c["lost"] for c in matrix[model].values()),
            result["bradley_terry"][model]["elo"],
            result["bradley_terry"][model]["ci_low"],
            result["bradley_terry"][model]["ci_high"],
        )
        for rank, model in enumerate(ranked, start=1)
    )
    points = tuple(
        ChartPoint(m, result["ratings"][m]["elo"], result["ratings"][m]["ci_low"], result["ratings"][m]["ci_high"])
        for m in ranked
    )
    heat = tuple(
        tuple(None if a == b or matrix[a][b]["win_share"] is None else 100 * matrix[a][b]["win_share"] for b in ranked)
        for a in ranked
    )
    bounds = [v for p in points for v in (p.value, p.low, p.high) if v is not None] or [0.0, 1.0]
    bias = result["position_bias"]
    counts = result["counts"]
    warnings: list[str] = []
    if result["self_judged"]:
        warnings.append(f"the judge is also compared here ({', '.join(result['self_judged'])}): it may favour itself")
    if counts["failed_calls"] or counts["unreadable_verdicts"]:
        warnings.append(
            f"{counts['failed_calls']} judge calls failed and {counts['unreadable_verdicts']} verdicts were unreadable:"
            " they are left out of the ratings (failed calls are asked again by the same command)"
        )
    warning = "; ".join(warnings) or None
    return ReportSection(
        note=(
            f"Pairwise judge {result['judge']['model']} ({result['judge_era']}); every shared scenario judged in both"
            f" orders: {counts['judgements']} judgements, {counts['new_judge_calls']} asked now,"
            f" {counts['from_judgements_file']} from the judgements file. Anchors: {result['anchors']}."
        ),
        warning=warning,
        charts=(
            StripChart(
                points,
                domain=(min(bounds), max(bounds)),
                title="EQ-Bench 3 pairwise Elo with upstream's ±1.96 sigma interval",
                caption="TrueSkill as upstream (mu from 20 margin bins, sigma from 5); the interval is upstream's "
                "heuristic, not a calibrated 95% interval.",
            ),
            HeatmapChart(
                tuple(ranked),
                tuple(ranked),
                heat,
                title="Pairwise win share (%) of the row's run against the column's, per scenario (draws half)",
                caption="Both orders' pluses summed per scenario, as the solver groups them.",
                center=50.0,
                unit="%",
            ),
        ),
        tables=(
            FactsTable(
                (
                    *("rank", "run", "Elo", "low", "high", "raw", "sigma", "scenarios won", "drawn", "lost"),
                    *("Bradley-Terry", "BT 95% low", "BT 95% high"),
                ),
                rows,
                digits=(0, 0, 1, 1, 1, 1, 2, 0, 0, 0, 1, 1, 1),
                numeric=(0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
                title="EQ-Bench 3 pairwise Elo (TrueSkill as upstream; Bradley-Terry with a scenario bootstrap "
                "beside it)",
            ),
            FactsTable(
                ("first-shown wins", "decided judgements", "orders disagree", "scenarios with both orders decided"),
                (
                    (
                        bias["first_shown_win_share"],
                        bias["decided_judgements"],
                        bias["order_disagreement_share"],
                        bias["groups_with_both_orders_decided"],
                    ),
                ),
                digits=(3, 0, 3, 0),
                numeric=(0, 1, 2, 3),
                title="Position bias of the pairwise judge (why both orders are judged)",
            ),
        ),
    )


def _same_model(label: str, judge_model: str) -> bool:
    """Whether a run's model (a spec such as openai/gpt-4.1, maybe with its directory) is the judge's model."""
    model = label.split(" (", 1)[0]
    return bool(judge_model) and judge_model in (model, model.split("/", 1)[-1])


def prepare_comparison(runs: Sequence[Any], *, judge: str, judge_identity: Mapping[str, Any]) -> PreparedComparison:
    """Every shared scenario of every pair of runs in both orders, to judge; `finish` solves the Elo, draws the
    section (run/comparisons.py asks the judge, through the engine and the judgements file)."""
    from empathybench.instruments.eqbench3.data import load_protocol

    if len(runs) < 2:
        raise UserError("the EQ-Bench 3 pairwise Elo needs at least two runs of eqbench3")
    modes = {
        str(run.summary["benchmarks"][INSTRUMENT].get("config", {}).get("parse_mode") or "upstream") for run in runs
    }
    protocol = load_protocol("all" if "all" in modes else "upstream")  # type: ignore[arg-type]
    compared = compared_runs(runs, protocol)
    identity = dict(judge_identity)
    matches = matchups(protocol, compared, _judge_key(identity))
    if not matches:
        raise UserError("these EQ-Bench 3 runs share no finished scenario: nothing to judge pairwise")

    def finish(judging: ComparisonJudging) -> ComparisonOutput:
        return _output(judge, identity, compared, matches, judging)

    return PreparedComparison(tasks=matches, judge=judge_matchup, finish=finish)


def _output(
    judge: str,
    identity: Mapping[str, Any],
    compared: Sequence[ComparedRun],
    matches: Sequence[Matchup],
    judging: ComparisonJudging,
) -> ComparisonOutput:
    from empathybench.instruments.eqbench3.conversation import JUDGE_SAMPLING
    from empathybench.instruments.eqbench3.data import pins
    from empathybench.instruments.eqbench3.eras import judge_era

    verdicts = judging.verdicts
    labels = [run.label for run in compared]
    judgements = judgements_of(matches, verdicts, compared)
    ratings, anchors = solve(judgements, labels)
    used = [verdicts[m.key] for m in matches if m.key in verdicts]
    failures = list(judging.failures)
    from_file = sum(1 for m in matches if m.key in judging.stored_keys)
    result: dict[str, Any] = {
        "judge": {"spec": judge, **identity},
        # the judge is pinned by its settings and the exact templates (pins.json of the instrument)
        "judge_settings": {"temperature": JUDGE_SAMPLING.temperature, "max_tokens": JUDGE_SAMPLING.max_tokens},
        "templates": {
            name: {"commit": pin.commit, "sha256": pin.sha256}
            for name, pin in ((key.removeprefix("eqbench3/"), pin) for key, pin in pins().items())
            if name.startswith("pairwise_prompt") or name == "scenario_notes.txt"
        },
        "judge_era": judge_era(str(identity.get("model", ""))),
        "margin_rules": "3c21bcc",
        "anchors": anchors,
        "runs": [{"label": r.label, "directory": r.directory, "rubric_judge": r.judge_model} for r in compared],
        "ratings": ratings,
        "bradley_terry": bradley_terry_table(judgements, labels),
        "win_matrix": win_matrix(judgements, labels),
        "position_bias": position_bias(judgements),
        "counts": {
            "matchups": len(matches),
            "judgements": len(judgements),
            "new_judge_calls": len(judging.new_keys),
            "from_judgements_file": from_file,
            "failed_calls": len(failures),
            "unreadable_verdicts": sum(1 for v in used if not isinstance(v.get("verdict"), dict)),
            "trailing_comma_repairs": sum(1 for v in used if "trailing_comma" in (v.get("repairs") or [])),
        },
        "self_judged": [r.label for r in compared if _same_model(r.label, str(identity.get("model", "")))],
        "judgements_file": judging.judgements_file,
        "usage": dict(judging.usage),
        "failures": failures[:20],
    }
    ranked = sorted(labels, key=lambda m: -ratings[m]["elo"])
    notes = (
        "EQ-Bench 3 pairwise Elo: "
        + ", ".join(
            f"{m} {number(ratings[m]['elo'], 0)} "
            f"[{number(ratings[m]['ci_low'], 0)}, {number(ratings[m]['ci_high'], 0)}]"
            for m in ranked
        ),
        f"  {len(judging.new_keys)} judge calls now, {from_file} verdicts from {judging.judgements_file}"
        + (f"; {len(failures)} calls failed (run the same command again to retry them)" if failures else ""),
    )
    return ComparisonOutput("EQ-Bench 3 pairwise Elo", result, _section(result), notes)
