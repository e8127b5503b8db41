"""EQ-Bench on the engine: presets, per-item protocol, and run summary (specs/eqbench.md)."""

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.data.fetch import fetch_pinned
from empathybench.engine.engine import ItemContext
from empathybench.errors import UserError
from empathybench.formatting import number as format_number
from empathybench.instruments.eqbench.atlas import ATLAS as EQBENCH_ATLAS
from empathybench.instruments.eqbench.canned import plausible_answer
from empathybench.instruments.eqbench.norms import PUBLISHED_V2_SCORES, RANDOM_BASELINE
from empathybench.instruments.eqbench.parse import ParsedAnswer, failure_kind, parse_answer
from empathybench.instruments.eqbench.prompts import no_revise_prompt, revise_prompt
from empathybench.instruments.eqbench.report import SCORE_DOMAIN, report_section
from empathybench.instruments.eqbench.score import (
    MIN_PARSEABLE_FRACTION,
    aggregate_lm_eval,
    aggregate_pipeline,
    score_v1,
    score_v2,
)
from empathybench.instruments.protocol import BenchItem, DemoPreset, Instrument, PreparedBenchmark, RescoreCommand
from empathybench.instruments.support import (
    MAX_ATTEMPTS,
    MAX_TEMPERATURE,
    MAX_TOKENS_LIMIT,
    apply_options,
    bounded,
    evenly_spread,
    read_json_argument,
    truncation_reasks,
)
from empathybench.models.base import Message, Sampling
from empathybench.stats.intervals import mean_metric

# Question files per (version, language); keys of the data registry.
QUESTION_FILES: dict[tuple[str, str], str] = {
    ("v2", "en"): "eqbench/v2/eq_bench_v2_questions_171.json",
    ("v2", "de"): "eqbench/v2/eq_bench_v2_questions_171_de.json",
    ("v2", "de_v21"): "eqbench/v2/eq_bench_v2_questions_171_de_original_v2.1.json",
    ("v2", "pl"): "eqbench/v2/eq_bench_v2_questions_171_pl.json",
    ("v2", "ja"): "eqbench/v2/eq_bench_v2_questions_171_ja_community.json",
    ("v2", "jahalf"): "eqbench/v2/eq_bench_v2_questions_171_jahalf_community.json",
    ("v1", "en"): "eqbench/v1/eq_bench_v1_questions_60.json",
}
QUICK_SUBSET_SIZE = 30
# lm-evaluation-harness sends this seed with every chat-completions request (TemplateAPI's default `seed=1234`,
# lm_eval/models/openai_completions.py) and no top_p: the lm-eval protocol sends the same body.
LM_EVAL_SEED = 1234


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class EQBenchConfig:
    """Everything that defines an EQ-Bench run; recorded in run.json.

    protocol "pipeline" is the upstream pipeline (§3): temperature 0.01 sampling, 60 new tokens, up to 3
    attempts each +0.15, unparseable items dropped, validity gate 83.33%. "lm-eval" is lm-evaluation-harness
    `eq_bench` (§6): greedy, 80 tokens, stop at the first blank line, one attempt.
    """

    version: str = "v2"
    language: str = "en"
    revise: bool = False
    protocol: str = "pipeline"
    parse_mode: str = "strict_v23"
    sigmoid_rule: str = "le5"  # released code; "lt5" reproduces the published Jan-Feb 2024 numbers (§5.1)
    temperature: float = field(default=0.01, metadata=bounded(0, MAX_TEMPERATURE))
    temperature_step: float = field(default=0.15, metadata=bounded(0, MAX_TEMPERATURE))
    attempts: int = field(default=3, metadata=bounded(1, MAX_ATTEMPTS))
    max_tokens: int = field(default=60, metadata=bounded(1, MAX_TOKENS_LIMIT))
    stop: tuple[str, ...] = ()
    system_prompt: str | None = None  # API engines send no system message (§2.3)

    def with_protocol_defaults(self) -> "EQBenchConfig":
        if self.protocol == "lm-eval":
            return replace(self, temperature=0.0, temperature_step=0.0, attempts=1, max_tokens=80, stop=("\n\n",))
        if self.revise or self.version == "v1":
            # v2.4 fixed the 60-token cap that broke revise mode (issue #25): 600 tokens with revise.
            return replace(self, max_tokens=600)
        return self


OPTION_HELP = {
    "version": "v2 (171 items) | v1 (60 items)",
    "language": "en | de | de_v21 | pl | ja | jahalf (v2 only)",
    "revise": "true | false: the stored revise prompt (first pass, critique, revised scores)",
    "protocol": "pipeline (upstream: T=0.01, 3 attempts) | lm-eval (greedy, 80 tokens, stop at blank line)",
    "parse_mode": "strict_v23 (official runs, lm-eval) | v24 (strip markdown, case-insensitive labels)",
    "sigmoid_rule": "le5 (released code) | lt5 (reproduces the published 2024 leaderboard numbers)",
    "system_prompt": "a system message to send (default: none, as upstream for API models)",
}


# Every preset's config before `--option`s (quick and paper differ from full only in the items they take).
PRESET_CONFIGS: dict[str, EQBenchConfig] = {"quick": EQBenchConfig(), "paper": EQBenchConfig(), "full": EQBenchConfig()}


def _config_from(preset: str, options: Mapping[str, str]) -> EQBenchConfig:
    config = apply_options(
        PRESET_CONFIGS.get(preset, EQBenchConfig()),
        options,
        benchmark="eqbench",
        known=OPTION_HELP,
        choices={
            "version": ("v2", "v1"),
            "protocol": ("pipeline", "lm-eval"),
            "parse_mode": ("strict_v23", "v24"),
            "sigmoid_rule": ("le5", "lt5"),
        },
    )
    if (config.version, config.language) not in QUESTION_FILES:
        languages = ", ".join(language for version, language in QUESTION_FILES if version == config.version)
        raise UserError(f"EQ-Bench {config.version} has no language {config.language!r}; choose one of {languages}")
    return config.with_protocol_defaults()


def _check_paper_preset(preset: str, config: EQBenchConfig) -> None:
    if preset == "paper" and (config.version, config.protocol) != ("v2", "pipeline"):
        raise UserError("the eqbench paper preset is the v2 pipeline; use --preset full for other settings")


def quick_subset(ids: list[str], size: int = QUICK_SUBSET_SIZE) -> list[str]:
    """A fixed, evenly spread subset: the same items on every machine and every run."""
    return evenly_spread(ids, size)


@dataclass(frozen=True)
class EQBenchItem:
    prompt: str
    reference: dict[str, Any]  # reference_answer_fullscale (v2) or reference_answer (v1)


def _parse_language(language: str) -> str:
    return "de" if language == "de_v21" else language


def _prompt_language(language: str) -> str:
    return "de" if language == "de_v21" else language


class EQBench(Instrument[EQBenchConfig, EQBenchItem]):
    """EQ-Bench on the typed protocol: `Instrument[EQBenchConfig, EQBenchItem]` (instruments/protocol.py)."""

    name = "eqbench"
    order = 10  # position in the profile and in a run (part of the run's fingerprint)
    demo = DemoPreset(items=1)
    profile_position = 1  # first in the profile, as in every report so far
    profile_title = "EQ-Bench"
    profile_question = "How well does it read the intensity of a character's emotions?"
    title = "EQ-Bench v2/v1: rate the intensity of 4 emotions of a character in a dialogue (en, de, pl, ja)"
    presets: ClassVar[dict[str, str]] = {
        "quick": f"a fixed {QUICK_SUBSET_SIZE}-item subset of v2, upstream pipeline protocol",
        "paper": "the upstream v2 pipeline on all 171 items (T=0.01, 60 tokens, 3 attempts +0.15)",
        "full": "every item of the chosen version and language",
    }
    options = OPTION_HELP
    limit_unit = "dialogues (1 call each, up to 3 with re-asks)"  # what `--limit N` bounds
    preset_configs: ClassVar[Mapping[str, EQBenchConfig]] = PRESET_CONFIGS
    chart_domain = SCORE_DOMAIN
    canned = staticmethod(plausible_answer)
    report_section = staticmethod(report_section)
    atlas = EQBENCH_ATLAS
    rescore = RescoreCommand(
        help="Recompute the published score of an upstream EQ-Bench v2 results file from its stored answers.",
        argument_help="An upstream *_eqbench_v2_results.json file",
        run=lambda path: rescore_results_file(path),
    )

    def configure(self, preset: str, options: Mapping[str, str]) -> EQBenchConfig:
        """The config a preset and `--option`s give; every mistake is a one-line UserError."""
        config = _config_from(preset, options)
        _check_paper_preset(preset, config)
        return config

    def prepare(
        self, config: EQBenchConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark[EQBenchItem]:
        fetched = fetch_pinned(
            __package__, QUESTION_FILES[(config.version, config.language)], allow_unverified=allow_unverified
        )
        questions: dict[str, Any] = json.loads(fetched.path.read_text("utf-8"))
        ids = sorted(questions, key=int)
        if preset == "quick":
            ids = quick_subset(ids)
        if limit is not None:
            ids = ids[:limit]
        reference_field = "reference_answer_fullscale" if config.version == "v2" else "reference_answer"
        items: list[BenchItem[EQBenchItem]] = []
        for qid in ids:
            stored = questions[qid]["prompt"]
            try:
                prompt = (
                    revise_prompt(stored)
                    if config.revise
                    else no_revise_prompt(stored, _prompt_language(config.language), item_id=qid)
                )
            except ValueError as exc:
                raise UserError(f"EQ-Bench item {qid}: {exc}") from None
            items.append(BenchItem(qid, EQBenchItem(prompt, dict(questions[qid][reference_field]))))

        async def run_item(item: BenchItem[EQBenchItem], ctx: ItemContext) -> dict[str, Any]:
            return await _run_item(config, item, ctx)

        def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
            return summarize_records(config, len(items), records, seed=seed)

        return PreparedBenchmark(
            name=self.name,
            config={**asdict(config), "preset": preset, "question_file": fetched.key},
            items=items,
            run_item=run_item,
            summarize=summarize,
            data_files=[fetched],
        )


def _score(config: EQBenchConfig, answers: dict[str, float] | None, reference: dict[str, Any]) -> float | None:
    if answers is None:
        return None
    case_insensitive = config.parse_mode == "v24"
    if config.version == "v1":
        return score_v1(answers, reference, case_insensitive_validity=case_insensitive)
    return score_v2(answers, reference, config.sigmoid_rule, case_insensitive=case_insensitive)  # type: ignore[arg-type]


def _attempt_succeeded(config: EQBenchConfig, parsed: ParsedAnswer) -> bool:
    """§3: an attempt fails if the first pass (or, with revise, either pass) does not parse."""
    if config.revise:
        return parsed.first_pass is not None and parsed.revised is not None
    return parsed.first_pass is not None


async def _run_item(config: EQBenchConfig, item: BenchItem[EQBenchItem], ctx: ItemContext) -> dict[str, Any]:
    payload = item.payload
    messages = [Message("user", payload.prompt)]
    if config.system_prompt:
        messages.insert(0, Message("system", config.system_prompt))
    parsed: ParsedAnswer | None = None
    fallback: ParsedAnswer | None = None
    attempts_used = 0
    lm_eval = config.protocol == "lm-eval"
    for attempt in range(config.attempts):
        sampling = Sampling(
            temperature=round(config.temperature + config.temperature_step * attempt, 4),
            max_tokens=config.max_tokens,
            top_p=None if lm_eval else 1.0,
            stop=config.stop,
            seed=LM_EVAL_SEED if lm_eval else ctx.seed,
        )
        generation = await ctx.generate(
            messages, sampling, attempt=attempt, budget_reasks=truncation_reasks(config.attempts)
        )
        attempts_used = attempt + 1
        parsed = parse_answer(
            generation.text,
            payload.reference,
            mode=config.parse_mode,  # type: ignore[arg-type]
            language=_parse_language(config.language),
            revise=config.revise,
            scoring=config.version,  # type: ignore[arg-type]
        )
        if _attempt_succeeded(config, parsed):
            break
        if config.revise and (parsed.first_pass is not None or parsed.revised is not None):
            fallback = parsed  # §3: with revise, a partial result is kept after the last attempt
    assert parsed is not None
    if not _attempt_succeeded(config, parsed) and fallback is not None:
        parsed = fallback
    first_score = _score(config, parsed.first_pass, payload.reference)
    revised_score = _score(config, parsed.revised, payload.reference) if config.revise else None
    return {
        "parsed": {"first_pass": parsed.first_pass, "revised": parsed.revised},
        "score": first_score,
        "revised_score": revised_score,
        "parse_error": parsed.failure_reason if parsed.first_pass is None else None,
        "revised_parse_error": parsed.revised_failure_reason if config.revise else None,
        "parse_notes": list(parsed.notes),
        "attempts": attempts_used,
        "reference": payload.reference,
    }


def _eqbench_metrics(
    config: EQBenchConfig,
    records: list[dict[str, Any]],
    selected: dict[str, float | None],
    seed: int,
) -> dict[str, dict[str, Any]]:
    reference = None
    if config.version == "v2" and config.language == "en":
        reference = {
            "kind": "published_models",
            "label": "published EQ-Bench v2 scores (revise prompt, en)",
            "models": [{"label": name, "value": score} for name, score in PUBLISHED_V2_SCORES],
            "random_baseline": RANDOM_BASELINE,
            "source": "the 86 official EQ-Bench v2 result files (EQ-bench/EQ-Bench repository)",
        }
    parsed = {item_id: float(score) for item_id, score in selected.items() if score is not None}
    return {
        "score": mean_metric(
            "EQ-Bench score",
            parsed,
            scale=10.0,
            unit="points (0-100)",
            paired_test="wilcoxon",
            reference=reference,
            seed=seed,
        ),
        "lm_eval_score": mean_metric(
            "EQ-Bench score, unparsed = 0 (lm-eval)",
            {r["item_id"]: 10.0 * r["score"] if r.get("score") is not None else 0.0 for r in records},
            unit="points (0-100)",
            paired_test="wilcoxon",
            seed=seed,
        ),
        "percent_parseable": mean_metric(
            "parseable items",
            {r["item_id"]: 100.0 if r.get("score") is not None else 0.0 for r in records},
            unit="%",
            paired_test="mcnemar",
            seed=seed,
        ),
    }


def summarize_records(
    config: EQBenchConfig, n_items: int, records: list[dict[str, Any]], *, seed: int = 0
) -> dict[str, Any]:
    first = {r["item_id"]: r.get("score") for r in records}
    revised = {r["item_id"]: r.get("revised_score") for r in records} if config.revise else None
    pipeline = aggregate_pipeline(first, revised, n_questions=n_items)
    by_item = [first.get(r["item_id"]) for r in records] + [None] * (n_items - len(records))
    lm_eval = aggregate_lm_eval(by_item) if n_items else None
    n_parsed = sum(1 for s in first.values() if s is not None)
    failures: dict[str, int] = {}
    for record in records:
        reason = record.get("parse_error")
        if reason:
            kind = failure_kind(reason)
            failures[kind] = failures.get(kind, 0) + 1
    summary: dict[str, Any] = {
        # No parseable item, no score (the upstream pipeline would print 0.0, which reads as a result).
        "score": pipeline.score if pipeline.n_parseable > 0 else None,
        "score_name": "EQ-Bench v2 pipeline score (0-100, mean over parseable items)"
        if config.version == "v2"
        else "EQ-Bench v1 score (mean over parseable items)",
        "n_items": n_items,
        "n_answered": len(records),
        "n_parsed": n_parsed,
        "percent_parseable": round(100 * n_parsed / n_items, 2) if n_items else 0.0,
        "valid": pipeline.valid,
        "validity_rule": f"parseable / items >= {MIN_PARSEABLE_FRACTION} (upstream gate)",
        "selected_pass": pipeline.selected_pass,
        "lm_eval_score": round(lm_eval.eqbench, 4) if lm_eval else None,
        "lm_eval_note": "unparseable items count 0, mean over all items (lm-evaluation-harness style)",
        "parse_failures": failures,
        "mean_attempts": round(sum(r.get("attempts", 1) for r in records) / len(records), 3) if records else 0,
        "config": {k: v for k, v in asdict(config).items() if k != "stop"},
        "headline_metric": "score",
        "metrics": _eqbench_metrics(
            config, records, revised if revised is not None and pipeline.selected_pass == "revised" else first, seed
        ),
    }
    if config.protocol == "lm-eval":
        return _as_lm_eval_headline(summary)
    if not pipeline.valid:
        gate = format_number(100 * MIN_PARSEABLE_FRACTION, 2)
        summary["headline_note"] = f"invalid run: {n_parsed}/{n_items} parseable, below the upstream {gate}% gate"
    return summary


def _as_lm_eval_headline(summary: dict[str, Any]) -> dict[str, Any]:
    """Under the lm-eval protocol the headline is lm-eval's own `eqbench` figure (unparsed = 0, mean over all
    items). lm-eval has no parse-rate gate, so the upstream pipeline's gate is kept only as secondary information."""
    summary["pipeline_score"] = summary["score"]
    summary["pipeline_valid"] = summary["valid"]
    summary["score"] = summary["lm_eval_score"]
    summary["score_name"] = "EQ-Bench score as lm-evaluation-harness computes it (0-100, unparsed items count 0)"
    summary["headline_metric"] = "lm_eval_score"
    summary["valid"] = True
    summary["validity_rule"] = (
        "none: lm-eval has no parse-rate gate (pipeline_valid: the upstream pipeline's 83.33% gate, for reference)"
    )
    return summary


def rescore_results_file(path: Path) -> dict[str, Any]:
    """`empathybench rescore eqbench FILE`: recompute an upstream v2 results file from its stored answers."""
    from empathybench.instruments.eqbench.rescore import rescore_upstream_results

    data = read_json_argument(path)
    if not isinstance(data, dict):
        raise UserError(f"{path} is not an upstream EQ-Bench results file: it holds a JSON {type(data).__name__}")
    questions = json.loads(fetch_pinned(__package__, QUESTION_FILES[("v2", "en")]).path.read_text("utf-8"))
    try:
        return rescore_upstream_results(data, questions)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UserError(f"{path} is not an upstream EQ-Bench results file: {exc}") from None
