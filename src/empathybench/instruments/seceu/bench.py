"""SECEU on the engine: presets, per-item protocol, run summary, and rescoring of raw answers (specs/seceu.md)."""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.data.fetch import fetch_pinned
from empathybench.engine.engine import ItemContext
from empathybench.errors import UserError
from empathybench.formatting import number as format_number
from empathybench.instruments.protocol import BenchItem, DemoPreset, Instrument, PreparedBenchmark, RescoreCommand
from empathybench.instruments.seceu import norms
from empathybench.instruments.seceu.canned import plausible_answer
from empathybench.instruments.seceu.data import (
    N_ITEMS,
    N_OPTIONS,
    PROMPTS_KEY,
    SeceuItem,
    fetched_docx_paragraphs,
    load_items,
    load_norm,
)
from empathybench.instruments.seceu.parse import NormalisedAllocation, normalise_allocation, parse_allocation
from empathybench.instruments.seceu.prompts import (
    DIRECT,
    DIRECT_TEMPLATE,
    SETTINGS,
    VARIANTS,
    render,
    templates_from_prompts_docx,
)
from empathybench.instruments.seceu.report import EQ_DOMAIN, report_section, sample_line
from empathybench.instruments.seceu.score import SeceuScores, item_distance, score_allocations, uniform_baseline
from empathybench.instruments.support import MAX_TEMPERATURE, apply_options, bounded, evenly_spread, read_json_argument
from empathybench.models.base import Message, Sampling
from empathybench.stats.intervals import bootstrap_method, mean_metric, metric
from empathybench.stats.tests import bootstrap_interval, pearson

# quick: 10 of the 40 items, evenly spread (items 1, 5, 9, ..., 37): the same items on every machine.
QUICK_SUBSET_SIZE = 10
BEST_OF_LABEL = (
    "best of {n} prompt variants, chosen after seeing the scores (the paper's Table 1 practice): optimistic, "
    "not a fixed-protocol result"
)

OPTION_HELP = {
    "variant": f"prompt variant(s), comma-separated, or all: {' | '.join(VARIANTS)} (default direct)",
    "headline": "first | best: the headline score is the first listed variant (default) or the best of them",
    "temperature": "override every variant's temperature (default: the paper's, 0.1 direct, 0 the others)",
    "system_prompt": "a system message to send (default: none)",
}


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class SeceuConfig:
    """Everything that defines a SECEU run; recorded in run.json."""

    variants: tuple[str, ...] = (DIRECT,)
    headline: str = "first"
    temperature: float | None = field(default=None, metadata=bounded(0, MAX_TEMPERATURE))
    system_prompt: str | None = None

    def sampling(self, variant: str, seed: int | None) -> Sampling:
        settings = SETTINGS[variant]
        temperature = settings.temperature if self.temperature is None else self.temperature
        return Sampling(temperature=temperature, max_tokens=settings.max_tokens, top_p=settings.top_p, seed=seed)


def _parse_variants(value: str) -> tuple[str, ...]:
    if value.strip().lower() == "all":
        return VARIANTS
    chosen = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    unknown = [name for name in chosen if name not in VARIANTS]
    if unknown or not chosen:
        raise UserError(f"unknown seceu.variant {value!r}; choose from {', '.join(VARIANTS)} or all")
    return chosen


def config_from_options(options: dict[str, str]) -> SeceuConfig:
    return apply_options(
        SeceuConfig(),
        options,
        benchmark="seceu",
        known=OPTION_HELP,
        choices={"headline": ("first", "best")},
        custom={"variant": lambda config, value: replace(config, variants=_parse_variants(value))},
    )


def quick_subset(numbers: list[int], size: int = QUICK_SUBSET_SIZE) -> list[int]:
    return evenly_spread(numbers, size)


@dataclass(frozen=True)
class SeceuPrompted:
    item: SeceuItem
    prompts: dict[str, str]  # variant -> rendered prompt


class Seceu(Instrument[SeceuConfig, SeceuPrompted]):
    name = "seceu"
    order = 30  # position in the profile and in a run (part of the run's fingerprint)
    title = "SECEU: spread 10 points over 4 emotions in 40 stories; distance to the human consensus, EQ, pattern r"
    presets: ClassVar[dict[str, str]] = {
        "quick": f"{QUICK_SUBSET_SIZE} of the 40 items (1, 5, ..., 37), direct prompt; EQ from a subset",
        "paper": "all 40 items, the paper's direct prompt (T 0.1, top_p 1, 512 tokens)",
        "full": "all 40 items; --option seceu.variant=... selects prompt variants (all = the 5 of the paper)",
    }
    options = OPTION_HELP
    limit_unit = "stories (1 call per prompt variant)"  # what `--limit N` bounds
    chart_domain = EQ_DOMAIN
    demo = DemoPreset(items=1)
    profile_position = 2  # after EQ-Bench, as in every report so far
    profile_title = "SECEU"
    profile_question = "How close are its emotion judgements to people's, on the human EQ scale?"
    canned = staticmethod(plausible_answer)
    report_section = staticmethod(report_section)
    sample_line = staticmethod(sample_line)
    rescore = RescoreCommand(
        help=(
            "Normalise 40 raw SECEU answers by the paper's rules and score them: distance, EQ, percentiles, pattern r."
        ),
        argument_help='A JSON file {"answers": [[4 numbers] x 40]} in item order, raw',
        run=lambda path: rescore_answers_file(path),
    )

    # Every preset runs the same config; quick differs only in which items it takes (prepare).
    preset_configs: ClassVar[Mapping[str, SeceuConfig]] = {name: SeceuConfig() for name in presets}

    def configure(self, preset: str, options: Mapping[str, str]) -> SeceuConfig:
        """The config a preset and `--option`s give; every mistake is a one-line UserError."""
        return config_from_options(dict(options))

    def prepare(
        self, config: SeceuConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark:
        items, _, files = load_items(allow_unverified=allow_unverified)
        templates = {DIRECT: DIRECT_TEMPLATE}
        if any(variant != DIRECT for variant in config.variants):
            prompts_file = fetch_pinned(__package__, PROMPTS_KEY, allow_unverified=allow_unverified)
            files.append(prompts_file)
            first = items[0]  # Prompts.docx shows every variant filled with item 1
            templates.update(
                templates_from_prompts_docx(fetched_docx_paragraphs(prompts_file), first.story, first.options)
            )
        numbers = [item.number for item in items]
        if preset == "quick":
            numbers = quick_subset(numbers)
        if limit is not None:
            numbers = numbers[:limit]
        by_number = {item.number: item for item in items}
        bench_items = [
            BenchItem(
                str(number),
                SeceuPrompted(
                    by_number[number],
                    {
                        v: render(templates[v], by_number[number].story, by_number[number].options)
                        for v in config.variants
                    },
                ),
            )
            for number in numbers
        ]
        chosen = [by_number[number] for number in numbers]

        async def run_item(item: BenchItem, ctx: ItemContext) -> dict[str, Any]:
            return await _run_item(config, item, ctx)

        def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
            return summarize_records(config, chosen, records, seed=seed)

        return PreparedBenchmark(
            name=self.name,
            config={
                **asdict(config),
                "preset": preset,
                "items": numbers,
                "settings": {v: asdict(SETTINGS[v]) for v in config.variants},
            },
            items=bench_items,
            run_item=run_item,
            summarize=summarize,
            data_files=files,
        )


async def _run_item(config: SeceuConfig, item: BenchItem, ctx: ItemContext) -> dict[str, Any]:
    payload: SeceuPrompted = item.payload
    results: dict[str, dict[str, Any]] = {}
    for variant in config.variants:
        messages = [Message("user", payload.prompts[variant])]
        if config.system_prompt:
            messages.insert(0, Message("system", config.system_prompt))
        generation = await ctx.generate(messages, config.sampling(variant, ctx.seed))
        parsed = parse_allocation(generation.text, payload.item.options, ignore=(payload.item.story,))
        normalised = normalise_allocation(parsed.values)
        results[variant] = {
            "raw_values": list(parsed.values) if parsed.values is not None else None,
            "parse_method": parsed.method,
            "parse_note": parsed.note,
            "vector": [round(v, 6) for v in normalised.vector],
            "no_response": normalised.no_response,
            "shifted": normalised.shifted,
            "rescaled": normalised.rescaled,
            "distance": round(item_distance(normalised.vector, payload.item.standard_scores), 6),
        }
    primary = results[config.variants[0]]
    return {
        "variants": results,
        "distance": primary["distance"],
        "no_response": primary["no_response"],
        "parse_error": None if not primary["no_response"] else (primary["parse_note"] or "no response"),
    }


def _variant_summary(
    variant: str, chosen: list[SeceuItem], records: list[dict[str, Any]]
) -> tuple[SeceuScores, dict[str, Any]]:
    by_number = {item.number: item for item in chosen}
    answered = [by_number[int(r["item_id"])] for r in records]
    answers = []
    methods: dict[str, int] = {}
    for record in records:
        result = record["variants"][variant]
        answers.append(
            NormalisedAllocation(tuple(result["vector"]), no_response=result["no_response"], note=result["parse_note"])
        )
        methods[result["parse_method"]] = methods.get(result["parse_method"], 0) + 1
    scores = score_allocations(
        answers, [i.standard_scores for i in answered], [i.human_mean_distance for i in answered]
    )
    settings = SETTINGS[variant]
    detail = {
        "variant": variant,
        "variant_label": settings.label,
        "sampling": {"temperature": settings.temperature, "top_p": settings.top_p, "max_tokens": settings.max_tokens},
        "n_parsed": scores.n_items - scores.n_no_response,
        "parse_methods": methods,
        **scores.as_dict(),
    }
    return scores, detail


def summarize_records(
    config: SeceuConfig, chosen: list[SeceuItem], records: list[dict[str, Any]], *, seed: int = 0
) -> dict[str, Any]:
    n_items = len(chosen)
    base: dict[str, Any] = {
        "score_name": "EQ = 15 x (2.79 - SECEU distance) / 0.822 + 100 (human mean 100, SD 15)",
        "n_items": n_items,
        "n_answered": len(records),
        "config": asdict(config),
    }
    if not records:
        return {**base, "score": None, "n_parsed": 0, "headline_note": "no item was answered"}
    answered_ids = {record["item_id"] for record in records}
    answered = [item for item in chosen if str(item.number) in answered_ids]
    per_variant = {variant: _variant_summary(variant, chosen, records) for variant in config.variants}
    ok = [v for v in config.variants if per_variant[v][0].status == "ok"]
    best = min(ok, key=lambda v: per_variant[v][0].seceu_score) if ok else None
    headline = best if config.headline == "best" and best is not None else config.variants[0]
    scores, detail = per_variant[headline]
    summary: dict[str, Any] = {
        **base,
        "score": None if scores.status == "FAILED" else round(scores.eq, 4),
        **detail,
        "uniform_baseline": uniform_baseline(
            [i.standard_scores for i in answered], [i.human_mean_distance for i in answered]
        ),
    }
    notes = []
    if config.headline == "best" and len(config.variants) > 1:
        summary["score_name"] += "; " + BEST_OF_LABEL.format(n=len(config.variants))
        notes.append(f"best of {len(config.variants)} variants ({headline})")
    if scores.status == "FAILED":
        notes.append(f"FAILED: {scores.n_no_response}/{scores.n_items} items got no response (paper rule)")
    if n_items < N_ITEMS:
        summary["score_name"] += f"; EQ from a {n_items}-item subset, indicative only"
        notes.append(f"EQ from {len(records)} of 40 items")
    if scores.human_like is False:
        notes.append(f"pattern r {format_number(float(scores.pattern_r), 2)} < 0.033: not human-like")
    if len(config.variants) > 1:
        summary["variants"] = {variant: per_variant[variant][1] for variant in config.variants}
        summary["best_of_variants"] = (
            {
                "label": BEST_OF_LABEL.format(n=len(config.variants)),
                "variant": best,
                "seceu_score": round(per_variant[best][0].seceu_score, 4),
                "eq": round(per_variant[best][0].eq, 4),
                "pattern_r": per_variant[best][1]["pattern_r"],
            }
            if best is not None
            else {"label": "every variant FAILED", "variant": None}
        )
    if notes:
        summary["headline_note"] = "; ".join(notes)
    summary["headline_metric"] = "eq"
    by_id = {str(item.number): item for item in answered}
    template = [by_id[str(r["item_id"])].human_mean_distance for r in records]  # in record order, as the distances
    summary["metrics"] = _seceu_metrics(records, template, scores, summary, seed)
    # For the per-item chart: which item each distance belongs to, and the people's mean distance on it.
    summary["item_ids"] = [str(r["item_id"]) for r in records]
    summary["human_item_distances"] = [round(d, 4) for d in template]
    if scores.status == "FAILED":
        summary["metrics"]["eq"].update(value=None, ci95=None)  # no EQ for a FAILED run (paper rule)
        summary["invalid_reason"] = "FAILED by the paper's rule"  # the instrument's validity rule (report/validity)
    return summary


def _seceu_metrics(
    records: list[dict[str, Any]],
    template: list[float],
    scores: SeceuScores,
    summary: dict[str, Any],
    seed: int,
) -> dict[str, dict[str, Any]]:
    """EQ is linear in the mean item distance, so its item bootstrap is the distance bootstrap rescaled."""
    distances = {str(r["item_id"]): d for r, d in zip(records, scores.item_distances, strict=True)}
    eq_scale = -norms.EQ_SCALE_SD / norms.SECEU_SD
    eq_offset = norms.EQ_SCALE_MEAN + norms.EQ_SCALE_SD * norms.SECEU_MEAN / norms.SECEU_SD
    item_distances = list(scores.item_distances)

    def pattern_r(indices: Any) -> float:
        return pearson([item_distances[i] for i in indices], [template[i] for i in indices])

    return {
        "eq": mean_metric(
            "SECEU EQ",
            distances,
            scale=eq_scale,
            offset=eq_offset,
            unit="EQ (people: mean 100, SD 15)",
            paired_test="wilcoxon",
            reference={
                "kind": "human_norm",
                "label": f"{norms.NORM_SAMPLE_SIZE} people (norm sample)",
                "mean": norms.EQ_SCALE_MEAN,
                "sd": norms.EQ_SCALE_SD,
                "percentile": summary.get("percentiles", {}).get("normal_approximation", {}).get("value"),
                "uniform_baseline": summary.get("uniform_baseline", {}).get("eq"),
                "source": "Wang et al. 2023, SECEU_norm.docx (the released human norms)",
            },
            seed=seed,
        ),
        "seceu_score": mean_metric(
            "SECEU distance",
            distances,
            unit="mean Euclidean distance",
            higher_is_better=False,
            paired_test="wilcoxon",
            reference={"kind": "human_norm", "label": "people", "mean": norms.SECEU_MEAN, "sd": norms.SECEU_SD},
            seed=seed,
        ),
        "pattern_r": metric(
            "pattern similarity r",
            scores.pattern_r,
            bootstrap_interval(len(item_distances), pattern_r, seed=seed) if len(item_distances) > 2 else None,
            n=len(item_distances),
            method=bootstrap_method(seed=seed),
            unit="Pearson r with the human template",
            reference={
                "kind": "human_norm",
                "label": "people (leave-one-out)",
                "mean": norms.PATTERN_R_MEAN,
                "sd": norms.PATTERN_R_SD,
                "threshold": norms.PATTERN_R_THRESHOLD,
            },
        ),
    }


def rescore_answers(answers: Any, *, allow_unverified: bool = False) -> dict[str, Any]:
    """Score 40 raw answers (item order, before normalisation); null or [] is a no-response item."""
    if not isinstance(answers, list) or len(answers) != N_ITEMS:
        raise ValueError(f'"answers" must be a list of 40 answers in item order, got {_describe(answers)}')
    raw: list[tuple[float, ...] | None] = []
    for number, answer in enumerate(answers, start=1):
        if answer is None or answer == []:
            raw.append(None)
            continue
        if not isinstance(answer, list) or len(answer) != N_OPTIONS or not all(_is_number(x) for x in answer):
            raise ValueError(f"answer {number} must be 4 numbers (or null for no response), got {answer!r}")
        raw.append(tuple(float(x) for x in answer))
    normalised = [normalise_allocation(values) for values in raw]
    norm, norm_file = load_norm(allow_unverified=allow_unverified)
    scores = score_allocations(normalised, norm.standard_scores, norm.template)
    return {
        "n_items": N_ITEMS,
        "n_parsed": N_ITEMS - scores.n_no_response,
        **scores.as_dict(),
        "uniform_baseline": uniform_baseline(norm.standard_scores, norm.template),
        "normalised_answers": [[round(v, 4) for v in a.vector] for a in normalised],
        "n_shifted": sum(a.shifted for a in normalised),
        "n_rescaled": sum(a.rescaled for a in normalised),
        "norm_file": {"key": norm_file.key, "sha256": norm_file.sha256, "verified": norm_file.verified},
    }


def rescore_answers_file(path: Path) -> dict[str, Any]:
    """`empathybench rescore seceu FILE`: FILE is {"answers": [[4 numbers] x 40]} in item order."""
    data = read_json_argument(path)
    if not isinstance(data, dict) or "answers" not in data:
        raise UserError(f'{path} must be a JSON object {{"answers": [[4 numbers] x 40]}}')
    try:
        return rescore_answers(data["answers"])
    except ValueError as exc:
        raise UserError(f"{path}: {exc}") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _describe(value: Any) -> str:
    return f"a list of {len(value)}" if isinstance(value, list) else type(value).__name__
