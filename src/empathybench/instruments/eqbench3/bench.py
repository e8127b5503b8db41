"""EQ-Bench 3 on the typed protocol: presets, one task per item (turns, debrief, rubric judge), the run summary.

Rubric mode per run; the pairwise Elo among several runs is its `comparison` (`empathybench report A B C --judge`,
elo.py).
"""

from collections.abc import Mapping
from dataclasses import asdict, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.engine.engine import CallFailedError, ItemContext
from empathybench.errors import UserError
from empathybench.instruments.eqbench3.atlas import ATLAS as EQBENCH3_ATLAS
from empathybench.instruments.eqbench3.canned import canned_answer, expected_reply_tokens
from empathybench.instruments.eqbench3.eras import judge_era, published_reference
from empathybench.instruments.eqbench3.report import SCORE_DOMAIN, report_section, sample_line, sample_text
from empathybench.instruments.protocol import (
    BenchItem,
    DemoPreset,
    Instrument,
    PreparedBenchmark,
    PreparedComparison,
    RescoreCommand,
    RunComparison,
)
from empathybench.instruments.support import apply_options, bounded, evenly_spread

# A handful of each task type for the quick preset (25 role-play, 1 drafting, 19 analysis at 3c21bcc).
QUICK_PER_TYPE = {"roleplay": 3, "drafting": 1, "analysis": 2}


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class EQBench3Config:
    """Everything that defines an EQ-Bench 3 run (1 iteration, as upstream's default)."""

    parse_mode: str = "upstream"  # "all" also accepts the misspelled block of scenario 409
    strictness: str = "faithful"  # "strict": range-check rubric scores and record what was rejected
    upstream_quirks: bool = False  # upstream's silent vendor tweaks (spec §3)
    # The demo's cut (not EQ-Bench 3's protocol; the run is labelled self-judged and never compared): the model
    # judges itself, only the first turns are played, every call's token budget is capped.
    self_judge: bool = False
    max_turns: int | None = field(default=None, metadata=bounded(1, 20))
    max_tokens: int | None = field(default=None, metadata=bounded(16, 12000))


# The demo's cut, recorded (run.json, the run's fingerprint) only when used: runs without it keep the fingerprints
# they had before it existed.
DEMO_CUT_DEFAULTS: dict[str, Any] = {"self_judge": False, "max_turns": None, "max_tokens": None}


def recorded_config(config: EQBench3Config) -> dict[str, Any]:
    """The config as run.json records it and the fingerprint takes it: the demo's cut left out where unused."""
    return {k: v for k, v in asdict(config).items() if not (k in DEMO_CUT_DEFAULTS and v == DEMO_CUT_DEFAULTS[k])}


OPTION_HELP = {
    "parse_mode": "upstream (45 tasks, as the pinned parser) | all (also the misspelled block of scenario 409)",
    "strictness": "faithful (first number, no range check, as upstream) | strict (range-checked, rejections listed)",
    "upstream_quirks": "true | false: upstream's silent per-vendor tweaks (default false)",
    "self_judge": "true | false: the model judges itself (the demo's cut: labelled self-judged, not EQ-Bench 3)",
    "max_turns": "play only the first N turns of each scenario (the demo's cut; upstream plays them all)",
    "max_tokens": "cap every call's token budget at N (the demo's cut; upstream allows 12000, the judge 8000)",
}
PRESET_CONFIGS: dict[str, EQBench3Config] = {
    "quick": EQBench3Config(),
    "paper": EQBench3Config(),
    "full": EQBench3Config(),
}


def quick_scenarios(ids_by_type: Mapping[str, list[str]]) -> list[str]:
    """A fixed handful of each task type, spread evenly: the same scenarios on every machine."""
    chosen: list[str] = []
    for kind, size in QUICK_PER_TYPE.items():
        chosen.extend(evenly_spread(ids_by_type.get(kind, []), size))
    return chosen


class EQBench3(Instrument[EQBench3Config, Any]):
    """EQ-Bench 3: `Instrument[EQBench3Config, Scenario]` (instruments/protocol.py)."""

    name = "eqbench3"
    order = 70
    title = "EQ-Bench 3: judged multi-turn role-play and analysis, rubric score 0-100 (needs --judge)"
    presets: ClassVar[dict[str, str]] = {
        "quick": "a handful of scenarios of each type ({}), 1 iteration".format(
            ", ".join(f"{n} {k}" for k, n in QUICK_PER_TYPE.items())
        ),
        "paper": "all 45 tasks, 1 iteration, as upstream",
        "full": "all 45 tasks, 1 iteration, as upstream",
    }
    options = OPTION_HELP
    limit_unit = "tasks (a conversation of up to 7 turns + debrief, then 1 judge call)"
    preset_configs: ClassVar[Mapping[str, EQBench3Config]] = PRESET_CONFIGS
    chart_domain = SCORE_DOMAIN
    profile_position = 7  # after EmoBench
    profile_title = "EQ-Bench 3"

    @staticmethod
    def item_value(fields: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, float | None]:
        """The judge's rubric score of the task, 0-20 (None when it was not scored)."""
        score = fields.get("score_0_20")
        return {"score_0_20": float(score) if isinstance(score, int | float) else None}

    profile_question = "How emotionally intelligent are its role-play replies and analyses, as judged?"
    canned = staticmethod(canned_answer)
    expected_output_tokens = staticmethod(expected_reply_tokens)  # for --dry-run: its replies are long free text
    report_section = staticmethod(report_section)
    sample_line = staticmethod(sample_line)  # the samples table's one-line view of a task
    sample_text = staticmethod(sample_text)  # its transcript, debrief and judge text, folded under the row
    required_roles = frozenset({"judge"})  # a run without --judge is refused before any call: self-judging is not it
    in_default_run = False  # as its package (__init__.py) declares it for the registry, which checks the two agree
    # The bare demo shows it end to end on the embedded model: one scenario, its first turn at 48 tokens (no debrief),
    # the model as its own judge (labelled self-judged).
    demo = DemoPreset(
        items=1,
        options={"self_judge": "true", "max_turns": "1", "max_tokens": "48"},
        self_judged=True,
        in_bare_demo=True,
    )
    atlas = EQBENCH3_ATLAS
    rescore = RescoreCommand(
        help="Re-derive an EQ-Bench 3 Elo file's margins, normalisation and ratings, or a run file's rubric numbers.",
        argument_help="An upstream EQ-Bench 3 Elo results file (.json[.gz]) or eqbench3_runs.json",
        run=lambda path: rescore_file_checked(path),
    )

    comparison = RunComparison(
        help="EQ-Bench 3 pairwise Elo: every shared scenario of every pair of runs judged in both orders, TrueSkill",
        prepare=lambda runs, **settings: _prepare_elo(runs, **settings),
        tag="eqbench3",
        canned=canned_answer,
    )

    def configure(self, preset: str, options: Mapping[str, str]) -> EQBench3Config:
        return apply_options(
            PRESET_CONFIGS.get(preset, EQBench3Config()),
            options,
            benchmark=self.name,
            known=OPTION_HELP,
            choices={"parse_mode": ("upstream", "all"), "strictness": ("faithful", "strict")},
        )

    def prepare(
        self, config: EQBench3Config, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark[Any]:
        from empathybench.data.fetch import fetch_entry
        from empathybench.instruments.eqbench3.data import load_protocol, pins

        fetched = [fetch_entry(pin, allow_unverified=allow_unverified) for pin in pins().values()]
        protocol = load_protocol(config.parse_mode)  # type: ignore[arg-type]
        ids = sorted(protocol.scenarios, key=int)
        if preset == "quick":
            by_type: dict[str, list[str]] = {}
            for sid in ids:
                by_type.setdefault(protocol.scenarios[sid].type.value, []).append(sid)
            ids = quick_scenarios(by_type)
        if limit is not None:
            ids = ids[:limit]
        items = [BenchItem(sid, protocol.scenarios[sid]) for sid in ids]

        async def run_item(item: BenchItem[Any], ctx: ItemContext) -> dict[str, Any]:
            from empathybench.instruments.eqbench3.runner import TaskSettings, run_task

            if ctx.judge_is_self and not config.self_judge:  # run/ refuses this earlier; no path judges silently
                raise UserError("EQ-Bench 3 needs --judge SPEC (the rubric judge)")
            settings = TaskSettings(
                strictness=config.strictness,  # type: ignore[arg-type]
                model_identity=_model_identity(ctx),
                upstream_quirks=config.upstream_quirks,
                max_turns=config.max_turns,
                max_tokens=config.max_tokens,
            )
            record = await run_task(protocol, item.payload, ctx, settings)
            error = record.pop("error")
            call_failed = record["status"] == "error" and (
                error["phase"] in ("scenario", "debrief") or (error["phase"] == "rubric" and record["rubric"] is None)
            )
            if call_failed:  # the item fails, and is retried on resume with its finished turns from the cache
                raise CallFailedError(f"{error['phase']}: {error['message']}")
            # `status`/`error` are the run store's record keys: the task's own are kept under other names.
            record["task_status"] = record.pop("status")
            record["task_error"] = error
            record["judge_model"] = str(ctx.judge_identity.get("model", ""))
            record["judge_self"] = ctx.judge_is_self
            return record

        def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
            return summarize_records(config, len(items), records, seed=seed)

        return PreparedBenchmark(
            name=self.name,
            config={**recorded_config(config), "preset": preset, "iterations": 1, "scenarios": ids},
            items=items,
            run_item=run_item,
            summarize=summarize,
            data_files=fetched,
        )


def _model_identity(ctx: ItemContext) -> dict[str, Any]:
    """The tested endpoint's identity (min_p is not sent to api.openai.com, as upstream)."""
    backend = getattr(getattr(ctx, "_engine", None), "backend", None)
    identity = getattr(backend, "identity", None)
    return dict(identity()) if callable(identity) else {}


def summarize_records(
    config: EQBench3Config, n_items: int, records: list[dict[str, Any]], *, seed: int = 0
) -> dict[str, Any]:
    from empathybench.instruments.eqbench3.rubric import ScoredTask, summarise_rubric

    tasks = [
        ScoredTask("1", str(r["scenario_id"]), str(r.get("task_status")), (r.get("rubric") or {}).get("scores"))
        for r in records
    ]
    rubric = summarise_rubric(tasks, seed=seed)
    judges = sorted({str(r.get("judge_model") or "") for r in records} - {""})
    judge = judges[0] if len(judges) == 1 else ", ".join(judges)
    metrics: dict[str, Any] = {}
    published = published_reference(judge)
    if rubric["headline"] is not None:
        # beside the published rows of the judge's era only: other judges' rubric scales differ (spec §6.3)
        metrics["score"] = {**rubric["headline"], "reference": published}
    for kind, metric in rubric["by_type"].items():
        metrics[f"score_{kind}"] = metric
    summary: dict[str, Any] = {
        "score": rubric["score_0_100"],
        "score_name": "EQ-Bench 3 rubric score (0-100 = 5 x the pooled mean of allowed criteria, 0-20)",
        "n_items": n_items,
        "n_answered": len(records),
        "n_parsed": rubric["counts"]["rubric_scored"],  # tasks the judge's rubric reply could be read for
        "counts": rubric["counts"],
        "n_errors": rubric["counts"]["error"],
        "judge_model": judge,
        "judge_era": judge_era(judge),
        "published_rubric": published,  # None: the judge has no published era
        "by_type_0_100": rubric["by_type_0_100"],
        "abilities_0_20": rubric["abilities_0_20"],
        "abilities": rubric["abilities"],
        "style_traits": rubric["style_traits"],
        "task_scores_0_20": rubric["task_scores_0_20"],
        "config": asdict(config),
        "headline_metric": "score",
        "metrics": metrics,
    }
    if any(r.get("judge_self") for r in records):  # the demo's cut: read by every report as self-judged
        summary["judge"] = {"self_judging": True}
    if not metrics:
        summary["headline_note"] = f"no task was rubric-scored ({rubric['counts']['error']} errors)"
    return summary


def _prepare_elo(runs: Any, **settings: Any) -> PreparedComparison:
    from empathybench.instruments.eqbench3.elo import prepare_comparison

    return prepare_comparison(runs, **settings)


def rescore_file_checked(path: Path) -> dict[str, Any]:
    """`empathybench rescore eqbench3 FILE`: a bad file is one UserError line."""
    from empathybench.instruments.eqbench3.rescore import rescore_file

    if not path.is_file():
        raise UserError(f"no such file: {path}")
    try:
        return rescore_file(path)
    except (KeyError, TypeError, ValueError, OSError, EOFError) as exc:
        raise UserError(f"{path} is not an upstream EQ-Bench 3 Elo or runs file: {exc}") from None
