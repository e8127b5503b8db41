"""EmotionBench on the engine: presets, the default and evoked measures, and the run summary (spec §4-7, §11)."""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.data.fetch import fetch_pinned
from empathybench.engine.engine import ItemContext
from empathybench.errors import UserError
from empathybench.instruments.emotionbench.atlas import ATLAS as EMOTIONBENCH_ATLAS
from empathybench.instruments.emotionbench.canned import plausible_answer
from empathybench.instruments.emotionbench.data import (
    EMOTIONS,
    SITUATIONS_KEY,
    TESTED_SOURCE_KEY,
    Situation,
    load_situations_json,
    load_tested_situations,
)
from empathybench.instruments.emotionbench.parse import parse_reply
from empathybench.instruments.emotionbench.protocol import item_orders, messages, notebook_order, run_plan
from empathybench.instruments.emotionbench.questionnaires import (
    ALL_ITEMS,
    CHALLENGING_BY_EMOTION,
    QUESTIONNAIRES_KEY,
    Questionnaire,
    Scoring,
    load_questionnaires,
    panas_affect,
)
from empathybench.instruments.emotionbench.report import SHIFT_DOMAIN, report_section, sample_line
from empathybench.instruments.emotionbench.rescore import rescore_answer_sheet
from empathybench.instruments.emotionbench.stats import ScoredResponse, group_table, shift_interval
from empathybench.instruments.protocol import BenchItem, DemoPreset, Instrument, PreparedBenchmark, RescoreCommand
from empathybench.instruments.support import (
    MAX_ATTEMPTS,
    MAX_TEMPERATURE,
    MAX_TOKENS_LIMIT,
    apply_options,
    bounded,
    truncation_reasks,
)
from empathybench.models.base import Sampling
from empathybench.stats.intervals import bootstrap_method, mean_metric, metric

OPTION_HELP = {
    "scale": "PANAS (default) | a challenging scale (AGQ, DASS-21, BDI, FDS, MJS, GASP, FSS, BFNE): its emotion only",
    "variant": "repo (the repository's sheets: 'Prompt: ' prefix, shared seeded orders) | notebook (per-query shuffle)",
    "system": "true | false: send the inner_setting as a system message (false = completion-style, as davinci)",
    "orders": "number of item orders (order 0 canonical, 1.. seeded permutations shared by all situations)",
    "default_runs": "default-measure runs in total, spread over the orders in blocks (paper: 50)",
    "evoked_runs": "runs per situation, spread over the orders (paper: 10)",
    "attempts": "queries per run before it counts as failed and is dropped (default 3)",
    "reask_temperature_step": "temperature added per re-ask, so a greedy model can answer differently (0.3)",
    "max_tokens": "reply budget per query (paper helper: 1024)",
    "order_seed": "seed of the shared item permutations (default 0)",
}


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class EmotionBenchConfig:
    """Everything that defines an EmotionBench run; recorded in run.json. Defaults are the paper design."""

    scale: str = "PANAS"
    situations: str = "tested"  # tested (the paper's 175) | all (situations.json's 428) | one_per_emotion
    variant: str = "repo"
    system: bool = True
    orders: int = field(default=10, metadata=bounded(1, 100))
    default_runs: int = field(default=50, metadata=bounded(2, 1000))
    evoked_runs: int = field(default=10, metadata=bounded(1, 100))
    temperature: float = field(default=0.0, metadata=bounded(0, MAX_TEMPERATURE))
    reask_temperature_step: float = field(default=0.3, metadata=bounded(0, MAX_TEMPERATURE))
    attempts: int = field(default=3, metadata=bounded(1, MAX_ATTEMPTS))
    max_tokens: int = field(default=1024, metadata=bounded(1, MAX_TOKENS_LIMIT))
    order_seed: int = field(default=0, metadata=bounded(0, 2**32 - 1))


PRESET_CONFIGS = {
    "paper": EmotionBenchConfig(),
    "quick": EmotionBenchConfig(situations="one_per_emotion", orders=2, default_runs=5, evoked_runs=2),
    "full": EmotionBenchConfig(situations="all"),
}


def config_from(preset: str, options: dict[str, str]) -> EmotionBenchConfig:
    if preset not in PRESET_CONFIGS:
        raise UserError(f"unknown emotionbench preset {preset!r}; known: {', '.join(PRESET_CONFIGS)}")
    config = apply_options(
        PRESET_CONFIGS[preset],
        options,
        benchmark="emotionbench",
        known=OPTION_HELP,
        choices={
            "scale": ("PANAS", *CHALLENGING_BY_EMOTION.values()),
            "variant": ("repo", "notebook"),
        },
    )
    return config


def choose_situations(config: EmotionBenchConfig, *, allow_unverified: bool) -> list[Situation]:
    if config.situations == "all":
        return load_situations_json(allow_unverified=allow_unverified)[1]
    tested = load_tested_situations(allow_unverified=allow_unverified)
    if config.scale != "PANAS":
        # A challenging scale is asked only after its own emotion's situations (spec §4.2).
        emotion = next(e for e, scale in CHALLENGING_BY_EMOTION.items() if scale == config.scale)
        tested = [s for s in tested if s.emotion == emotion]
        if config.situations == "one_per_emotion":
            return [
                next(s for s in tested if s.factor_key == key) for key in dict.fromkeys(s.factor_key for s in tested)
            ]
        return tested
    if config.situations == "one_per_emotion":
        return [next(s for s in tested if s.emotion == emotion) for emotion in EMOTIONS]
    return tested


@dataclass(frozen=True)
class MeasureItem:
    situation: Situation | None  # None: the default measure


class EmotionBench(Instrument[EmotionBenchConfig, MeasureItem]):
    name = "emotionbench"
    order = 50  # position in the profile and in a run (part of the run's fingerprint)
    title = "EmotionBench: PANAS before and after imagining 175 negative situations, beside 1,266 people"
    presets: ClassVar[dict[str, str]] = {
        "quick": "one tested situation per emotion, 2 item orders, 5 default runs, 2 runs per situation",
        "paper": "the paper design: 175 tested situations x 10 orders, default 10 orders x 5 (1,800 queries), T=0",
        "full": "all 428 situations of situations.json, paper design (not comparable with the human baseline)",
    }
    options = OPTION_HELP
    limit_unit = (  # what `--limit N` bounds
        "situations besides the default measure, and at most N runs per measure (the default measure at least 2)"
    )

    @staticmethod
    def item_value(fields: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, float | None]:
        """One measure's PANAS scores: the mean positive and negative affect over its parsed runs."""
        runs = [run for run in fields.get("runs") or () if run.get("failure") is None]

        def mean(scale: str) -> float | None:
            values = [float(run[scale]) for run in runs if isinstance(run.get(scale), int | float)]
            return sum(values) / len(values) if values else None

        return {"PA": mean("PA"), "NA": mean("NA")}

    chart_domain = SHIFT_DOMAIN
    demo = DemoPreset(items=1, options={"orders": "1", "default_runs": "2", "evoked_runs": "1", "attempts": "1"})
    profile_position = 3  # after EQ-Bench and SECEU, as in every report so far
    profile_title = "EmotionBench"
    profile_question = "Does its mood move as people's does after imagining a situation?"
    canned = staticmethod(plausible_answer)
    report_section = staticmethod(report_section)
    sample_line = staticmethod(sample_line)
    atlas = EMOTIONBENCH_ATLAS
    rescore = RescoreCommand(
        help="Recompute the EmotionBench default-vs-evoked table (n, means, SDs, deltas, test markers) of an answer "
        "sheet.",
        argument_help="An upstream *-PANAS-testing.csv (or, with --challenging, *-<scale>-testing.csv)",
        run=lambda path, challenging=False: rescore_answer_sheet(path, challenging=challenging),
        flags={"challenging": "A challenging-scale sheet: both scorings"},
    )
    preset_configs: ClassVar[Mapping[str, EmotionBenchConfig]] = PRESET_CONFIGS

    def configure(self, preset: str, options: Mapping[str, str]) -> EmotionBenchConfig:
        """The config a preset and `--option`s give (before `--limit`); every mistake is a one-line UserError."""
        return config_from(preset, dict(options))

    def prepare(
        self, config: EmotionBenchConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark:
        questionnaire = load_questionnaires(allow_unverified=allow_unverified)[config.scale]
        situations = choose_situations(config, allow_unverified=allow_unverified)
        if limit is not None:
            # --limit bounds the calls, not just the situations: each measure is many runs of the questionnaire.
            situations = situations[:limit]
            config = replace(
                config, default_runs=min(config.default_runs, max(2, limit)), evoked_runs=min(config.evoked_runs, limit)
            )
        orders = item_orders(len(questionnaire.items), config.orders, config.order_seed)
        # The default item first, then situations in factor order: consecutive queries share long prompt prefixes.
        items = [BenchItem("default", MeasureItem(None))] + [BenchItem(s.key, MeasureItem(s)) for s in situations]
        data_files = [
            fetch_pinned(__package__, key, allow_unverified=allow_unverified)
            for key in (QUESTIONNAIRES_KEY, SITUATIONS_KEY)
        ]
        if config.situations != "all":
            data_files.append(fetch_pinned(__package__, TESTED_SOURCE_KEY, allow_unverified=allow_unverified))

        async def run_item(item: BenchItem, ctx: ItemContext) -> dict[str, Any]:
            return await run_measure(config, questionnaire, orders, item, ctx)

        def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
            if config.scale != "PANAS":
                return summarize_challenging(config, questionnaire, records)
            return summarize_records(config, records, allow_unverified=allow_unverified, seed=seed)

        return PreparedBenchmark(
            name=self.name,
            config={**asdict(config), "preset": preset, "n_situations": len(situations), "item_orders": orders},
            items=items,
            run_item=run_item,
            summarize=summarize,
            data_files=data_files,
        )


async def run_measure(
    config: EmotionBenchConfig,
    questionnaire: Questionnaire,
    orders: list[tuple[int, ...]],
    item: BenchItem,
    ctx: ItemContext,
) -> dict[str, Any]:
    measure: MeasureItem = item.payload
    situation = measure.situation
    n_runs = config.default_runs if situation is None else config.evoked_runs
    low, high = questionnaire.answer_range
    runs: list[dict[str, Any]] = []
    for planned in run_plan(n_runs, config.orders):
        answers: dict[int, int] | None = None
        failure: str | None = None
        attempts_used = 0
        for attempt in range(config.attempts):
            if config.variant == "notebook":
                order = notebook_order(len(questionnaire.items), f"{item.id}/{planned.run}/{attempt}")
            else:
                order = orders[planned.order]
            sampling = Sampling(
                temperature=round(config.temperature + config.reask_temperature_step * attempt, 4),
                max_tokens=config.max_tokens,
                top_p=1.0,
                seed=ctx.seed,
            )
            prompt = messages(
                questionnaire,
                order,
                situation.text if situation else None,
                variant=config.variant,  # type: ignore[arg-type]
                system=config.system,
            )
            generation = await ctx.generate(
                prompt,
                sampling,
                repetition=planned.run,
                attempt=attempt,
                budget_reasks=truncation_reasks(config.attempts),
            )
            attempts_used = attempt + 1
            parsed = parse_reply(generation.text, [questionnaire.items[i] for i in order], low, high)
            if parsed.values is not None:
                # Answers are stored by canonical item id, whatever order they were asked in.
                answers = {order[position - 1]: value for position, value in parsed.values.items()}
                failure = None
                break
            failure = parsed.failure
        run: dict[str, Any] = {"run": planned.run, "order": planned.order, "attempts": attempts_used}
        if answers is None:
            run.update(answers=None, failure=failure)
        else:
            run.update(answers=[answers[i] for i in sorted(answers)], failure=None)
            if questionnaire.name == "PANAS":
                run["PA"], run["NA"] = panas_affect(questionnaire, {k: float(v) for k, v in answers.items()})
        runs.append(run)
    return {
        "condition": "default" if situation is None else "evoked",
        "factor": situation.factor_key if situation else None,
        "emotion": situation.emotion if situation else None,
        "runs": runs,
    }


def _shift(row: dict[str, Any], affect: str) -> dict[str, Any]:
    return {
        "mean": row[f"{affect}_mean"],
        "sd": row[f"{affect}_sd"],
        "delta": row[f"{affect}_delta"],
        "marker": row[f"{affect}_marker"],
    }


def summarize_records(
    config: EmotionBenchConfig, records: list[dict[str, Any]], *, allow_unverified: bool = False, seed: int = 0
) -> dict[str, Any]:
    scored: list[ScoredResponse] = []
    total_runs = failed_runs = reasked_runs = 0
    for record in records:
        for run in record.get("runs") or []:
            total_runs += 1
            reasked_runs += run["attempts"] > 1
            if run["answers"] is None:
                failed_runs += 1  # dropped from the statistics, as the paper dropped empty runs
                continue
            scored.append(ScoredResponse(record["factor"], {"PA": run["PA"], "NA": run["NA"]}))
    n_default = sum(1 for r in scored if r.factor_key is None)
    summary: dict[str, Any] = {
        "score": None,
        "score_name": "overall NA shift: mean evoked minus mean default Negative Affect (PANAS sums, 10-50)",
        "n_items": total_runs,  # runs, not situations: each run is one PANAS questionnaire
        "n_parsed": total_runs - failed_runs,
        "parse_failure_rate": round(failed_runs / total_runs, 4) if total_runs else None,
        "runs": {"total": total_runs, "failed_dropped": failed_runs, "reasked": reasked_runs},
        "items_failed": sum(1 for r in records if r.get("status") == "error"),
        "comparable_with_humans": config.situations != "all",
        "config": asdict(config),
    }
    if n_default < 2 or len(scored) == n_default:
        summary["headline_note"] = "too few parsed runs for the default-vs-evoked comparison"
        return summary
    rows = group_table(scored, ("PA", "NA"))
    default, overall = rows[0], rows[-1]
    summary["score"] = overall["NA_delta"]
    summary["shifts"] = {"PA_delta": overall["PA_delta"], "NA_delta": overall["NA_delta"]}
    summary["default"] = {"n": default["n"], "PA": _shift(default, "PA"), "NA": _shift(default, "NA")}
    summary["overall"] = {"n": overall["n"], "PA": _shift(overall, "PA"), "NA": _shift(overall, "NA")}
    summary["emotions"] = {
        r["emotion"]: {"n": r["n"], "PA": _shift(r, "PA"), "NA": _shift(r, "NA")}
        for r in rows
        if r["level"] == "emotion"
    }
    summary["table"] = rows
    summary["human_alignment"] = _human_alignment(rows, config, allow_unverified=allow_unverified)
    summary["headline_metric"] = "alignment_NA_r"
    summary["score_metric"] = "NA_delta"
    summary["metrics"] = _emotionbench_metrics(records, summary["human_alignment"], seed)
    return summary


def _shift_metric(records: list[dict[str, Any]], affect: str, human_delta: float | None, seed: int) -> dict[str, Any]:
    """Evoked minus default mean for one affect. The items are the evoked runs (each minus the default mean), so
    their mean is the published delta; the interval resamples situations (with all their runs, which share the
    situation) and default runs independently."""
    default = [run[affect] for r in records if r["factor"] is None for run in r["runs"] if run["answers"] is not None]
    situations = [
        (str(r["item_id"]), [(run["run"], run[affect]) for run in r["runs"] if run["answers"] is not None])
        for r in records
        if r["factor"] is not None
    ]
    situations = [(key, runs) for key, runs in situations if runs]
    default_mean = sum(default) / len(default)
    items = {f"{key}#{run}": value - default_mean for key, runs in situations for run, value in runs}
    reference = (
        {"kind": "human_crowd", "label": "people (1,266, paired before/after)", "value": human_delta}
        if human_delta is not None
        else None
    )
    result = mean_metric(
        f"{affect} shift (evoked minus default)",
        items,
        unit="PANAS points",
        higher_is_better=None,
        paired_test="paired_t",
        reference=reference,
        seed=seed,
    )
    interval = shift_interval(default, [[value for _, value in runs] for _, runs in situations], seed)
    result["ci95"] = None if interval is None else [round(interval[0], 4), round(interval[1], 4)]
    result["method"] = bootstrap_method(seed=seed, unit="situations (clustered runs) and default runs")
    return result


def _interval(pair: list[float | None] | None) -> tuple[float, float] | None:
    if not pair or pair[0] is None or pair[1] is None:
        return None
    return float(pair[0]), float(pair[1])


def _percent_interval(pair: list[float | None] | None) -> tuple[float, float] | None:
    interval = _interval(pair)
    return None if interval is None else (100.0 * interval[0], 100.0 * interval[1])


def _emotionbench_metrics(
    records: list[dict[str, Any]], alignment: dict[str, Any] | None, seed: int
) -> dict[str, dict[str, Any]]:
    human_overall = (alignment or {}).get("human_overall", {})
    metrics = {
        f"{affect}_delta": _shift_metric(records, affect, human_overall.get(f"{affect}_delta"), seed)
        for affect in ("PA", "NA")
    }
    for affect in ("PA", "NA"):
        figures = (alignment or {}).get(affect)
        if not isinstance(figures, dict):
            continue
        n_factors = int((alignment or {}).get("n_factors", 0))
        method = bootstrap_method(unit="factors")
        metrics[f"alignment_{affect}_r"] = metric(
            f"alignment with people: Pearson r of {affect} shifts across factors",
            figures["pearson_r"],
            _interval(figures.get("pearson_r_ci95")),
            n=n_factors,
            method=method,
            unit="r",
            reference={"kind": "perfect_alignment", "label": "same pattern as people", "value": 1.0},
        )
        metrics[f"alignment_{affect}_sign"] = metric(
            f"alignment with people: factors where the {affect} shift has the people's sign",
            None if figures["sign_agreement"] is None else 100.0 * figures["sign_agreement"],
            _percent_interval(figures.get("sign_agreement_ci95")),
            n=n_factors,
            method=method,
            unit="% of factors",
            reference={"kind": "chance", "label": "coin flip", "value": 50.0},
        )
    return metrics


def _human_alignment(
    rows: list[dict[str, Any]], config: EmotionBenchConfig, *, allow_unverified: bool
) -> dict[str, Any] | None:
    """Model delta beside the crowd's paired delta per factor; only meaningful on the tested situations."""
    if config.situations == "all":
        return {"note": "situations.json texts differ from what people saw; run the paper preset to compare"}
    from empathybench.errors import DataError
    from empathybench.instruments.emotionbench.crowd import alignment, human_table, load_crowd

    try:
        human_rows = human_table(load_crowd(allow_unverified=allow_unverified))
    except DataError as exc:
        return {"note": f"crowd data unavailable: {exc}"}
    result = alignment(rows, human_rows, seed=config.order_seed)
    human_overall = human_rows[-1]
    result["human_overall"] = {"PA_delta": human_overall["PA_delta"], "NA_delta": human_overall["NA_delta"]}
    result["human_by_emotion"] = {
        row["emotion"]: {"PA_delta": row["PA_delta"], "NA_delta": row["NA_delta"]}
        for row in human_rows
        if row["level"] == "emotion"
    }
    if config.situations == "one_per_emotion":
        result["note"] = "one situation per factor of 8 only: a smoke test, not an alignment estimate"
    return result


def summarize_challenging(
    config: EmotionBenchConfig, questionnaire: Questionnaire, records: list[dict[str, Any]]
) -> dict[str, Any]:
    """A challenging scale: every category under both scorings, "paper" (plain sums) and "corrected" (spec §3.2)."""
    answered: list[tuple[str | None, dict[int, float]]] = []
    total_runs = failed_runs = 0
    for record in records:
        for run in record.get("runs") or []:
            total_runs += 1
            if run["answers"] is None:
                failed_runs += 1
                continue
            answered.append((record["factor"], {i + 1: float(v) for i, v in enumerate(run["answers"])}))
    summary: dict[str, Any] = {
        "score": None,
        "score_name": f"{questionnaire.name}: emotion-level shift of the plain item sum (the paper's scoring)",
        "n_items": total_runs,
        "n_parsed": total_runs - failed_runs,
        "parse_failure_rate": round(failed_runs / total_runs, 4) if total_runs else None,
        "config": asdict(config),
    }
    n_default = sum(1 for factor, _ in answered if factor is None)
    if n_default < 2 or len(answered) == n_default:
        summary["headline_note"] = "too few parsed runs for the default-vs-evoked comparison"
        return summary
    rows: list[dict[str, Any]] = []
    scorings: tuple[Scoring, ...] = ("paper", "corrected")
    for scoring in scorings:
        for category in questionnaire.category_names(scoring):
            scored = [ScoredResponse(f, {"score": questionnaire.score(a, category, scoring)}) for f, a in answered]
            rows.extend(
                {"scoring": scoring, "category": category, **row}
                for row in group_table(scored, ("score",))
                if row["level"] != "overall"
            )
    headline = next(
        r for r in rows if r["scoring"] == "paper" and r["category"] == ALL_ITEMS and r["level"] == "emotion"
    )
    summary["score"] = headline["score_delta"]
    summary["table"] = rows
    return summary
