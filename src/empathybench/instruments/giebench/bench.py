"""GIEBench on the engine: data source, presets, the three prompt conditions per item, summary (specs/giebench.md)."""

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.data.fetch import FetchedFile
from empathybench.engine.engine import ItemContext
from empathybench.errors import UserError
from empathybench.instruments.giebench.canned import plausible_answer
from empathybench.instruments.giebench.data import (
    DIMENSIONS,
    GIEItem,
    fetch_official,
    load_official_dir,
    load_structured_file,
)
from empathybench.instruments.giebench.parse import Verdict, parse_legacy, parse_recommended
from empathybench.instruments.giebench.render import CONDITIONS
from empathybench.instruments.giebench.report import CHANGE_DOMAIN, report_section, sample_line
from empathybench.instruments.giebench.score import ItemOutcome, score_outcomes
from empathybench.instruments.protocol import BenchItem, DemoPreset, Instrument, PreparedBenchmark
from empathybench.instruments.support import (
    MAX_TEMPERATURE,
    MAX_TOKENS_LIMIT,
    bool_option,
    bounded,
    evenly_spread,
    field_range,
    read_number,
)
from empathybench.models.base import Message, Sampling
from empathybench.stats.intervals import mean_metric

PARSERS: tuple[str, ...] = ("recommended", "legacy")
QUICK_PER_DIMENSION = 2


@dataclass(frozen=True)
class SamplingProfile:
    temperature: float
    top_p: float
    max_tokens: int
    top_k: int | None = None


# §2.2: "released_api" is the API script's defaults (the published GPT rows), "released_local" the vLLM script
# (top_k -1 there means "off", i.e. not sent); "deterministic" is greedy with a budget for a short explanation.
SAMPLING_PROFILES: dict[str, SamplingProfile] = {
    "released_api": SamplingProfile(temperature=0.9, top_p=0.9, max_tokens=512),
    "released_local": SamplingProfile(temperature=0.0, top_p=0.95, max_tokens=8192),
    "deterministic": SamplingProfile(temperature=0.0, top_p=1.0, max_tokens=512),
}
_PRESET_DEFAULTS: dict[str, dict[str, str]] = {
    "quick": {"sampling": "deterministic", "parser": "recommended", "scoring": "standard"},
    # The paper preset keeps the released quirks: API sampling, the regex parser (§2.3), n+1 tables (§5.2).
    "paper": {"sampling": "released_api", "parser": "legacy", "scoring": "legacy"},
    "full": {"sampling": "deterministic", "parser": "recommended", "scoring": "standard"},
}

OPTION_HELP = {
    "data_dir": "a directory with the official Raw-Prompt.json, ID-Prompt.json, COT-Prompt.json "
    "(checked against the pinned git blob sha1 unless --allow-unverified)",
    "items": "a JSON file of structured items {id, dimension, identity, question, answers[4], correct_index}, "
    "rendered in the three conditions by EmpathyBench",
    "shuffle": "true | false: shuffle the answer order of structured items with the run seed (default true)",
    "sampling": "deterministic (T=0, 512 tokens) | released_api (T=0.9, top_p 0.9, 512) | "
    "released_local (T=0, top_p 0.95, 8192)",
    "temperature": "override the sampling profile's temperature",
    "top_p": "override the sampling profile's top_p",
    "max_tokens": "override the sampling profile's max_tokens",
    "parser": "recommended (last [[A]]-[[D]], echoes ignored) | legacy (the released regex): the headline parser",
    "fallbacks": "true | false: let the recommended parser read 'Assistant X' / a lone letter on the last line",
    "scoring": "standard | legacy (adds the published-style tables with n+1 per-dimension denominators)",
    "per_dimension": f"items per dimension in the quick preset (default {QUICK_PER_DIMENSION})",
}


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class GIEBenchConfig:
    data_dir: str | None = None
    items_file: str | None = None
    shuffle: bool = True
    sampling: str = "deterministic"
    temperature: float = field(default=0.0, metadata=bounded(0, MAX_TEMPERATURE))
    top_p: float = field(default=1.0, metadata=bounded(0, 1))
    top_k: int | None = None
    max_tokens: int = field(default=512, metadata=bounded(1, MAX_TOKENS_LIMIT))
    parser: str = "recommended"
    fallbacks: bool = True
    scoring: str = "standard"
    per_dimension: int = field(default=QUICK_PER_DIMENSION, metadata=bounded(1, 10_000))

    @property
    def source(self) -> str:
        if self.data_dir:
            return "data_dir"
        return "items" if self.items_file else "official"


def _number_option(key: str, value: str, kind: type[int] | type[float]) -> Any:
    return read_number(f"giebench.{key}", value, kind, field_range(GIEBenchConfig, key))


def config_from(preset: str, options: dict[str, str]) -> GIEBenchConfig:
    for key in options:
        if key not in OPTION_HELP:
            raise UserError(f"unknown giebench option {key!r}; known: {', '.join(OPTION_HELP)}")
    chosen = {**_PRESET_DEFAULTS.get(preset, _PRESET_DEFAULTS["full"]), **options}
    if chosen["sampling"] not in SAMPLING_PROFILES:
        raise UserError(f"giebench.sampling must be one of {', '.join(SAMPLING_PROFILES)}, not {chosen['sampling']!r}")
    if chosen["parser"] not in PARSERS:
        raise UserError(f"giebench.parser must be recommended or legacy, not {chosen['parser']!r}")
    if chosen["scoring"] not in ("standard", "legacy"):
        raise UserError(f"giebench.scoring must be standard or legacy, not {chosen['scoring']!r}")
    if options.get("data_dir") and options.get("items"):
        raise UserError("give either giebench.data_dir or giebench.items, not both")
    profile = SAMPLING_PROFILES[chosen["sampling"]]
    config = GIEBenchConfig(
        data_dir=str(Path(options["data_dir"]).expanduser().resolve()) if options.get("data_dir") else None,
        items_file=str(Path(options["items"]).expanduser().resolve()) if options.get("items") else None,
        sampling=chosen["sampling"],
        temperature=profile.temperature,
        top_p=profile.top_p,
        top_k=profile.top_k,
        max_tokens=profile.max_tokens,
        parser=chosen["parser"],
        scoring=chosen["scoring"],
    )
    if "shuffle" in options:
        config = replace(config, shuffle=bool_option("giebench.shuffle", options["shuffle"]))
    if "fallbacks" in options:
        config = replace(config, fallbacks=bool_option("giebench.fallbacks", options["fallbacks"]))
    if "temperature" in options:
        config = replace(config, temperature=_number_option("temperature", options["temperature"], float))
    if "top_p" in options:
        config = replace(config, top_p=_number_option("top_p", options["top_p"], float))
    if "max_tokens" in options:
        config = replace(config, max_tokens=_number_option("max_tokens", options["max_tokens"], int))
    if "per_dimension" in options:
        config = replace(config, per_dimension=_number_option("per_dimension", options["per_dimension"], int))
    return config


def quick_subset(items: list[GIEItem], per_dimension: int) -> list[GIEItem]:
    """A fixed subset: `per_dimension` items evenly spread over each dimension, in file order."""
    by_dimension: dict[str, list[GIEItem]] = {}
    for item in items:
        by_dimension.setdefault(item.dimension, []).append(item)
    rank = {name: index for index, name in enumerate(DIMENSIONS)}
    chosen: list[GIEItem] = []
    for dimension in sorted(by_dimension, key=lambda d: (rank.get(d, len(rank)), d)):
        chosen.extend(evenly_spread(by_dimension[dimension], per_dimension))
    return chosen


def load_items(config: GIEBenchConfig, *, seed: int, allow_unverified: bool) -> tuple[list[GIEItem], list[FetchedFile]]:
    if config.data_dir:
        return load_official_dir(Path(config.data_dir), allow_unverified=allow_unverified)
    if config.items_file:
        items, fetched = load_structured_file(Path(config.items_file), seed=seed, shuffle=config.shuffle)
        return items, [fetched]
    return fetch_official(allow_unverified=allow_unverified)


class GIEBench(Instrument[GIEBenchConfig, Any]):
    name = "giebench"
    order = 20  # position in the profile and in a run (part of the run's fingerprint)
    title = "GIEBench: pick the reply that fits a user's group identity, in 3 prompt conditions (Raw, ID, COT)"
    presets: ClassVar[dict[str, str]] = {
        "quick": f"{QUICK_PER_DIMENSION} items per dimension x 3 conditions, greedy (T=0), recommended parser",
        "paper": "all items x 3 conditions, released API sampling (T=0.9, top_p 0.9), released regex, n+1 tables",
        "full": "all items x 3 conditions, greedy (T=0), recommended parser",
    }
    options = OPTION_HELP
    limit_unit = "questions (3 calls each: the Raw, ID and COT prompts)"  # what `--limit N` bounds

    chart_domain = CHANGE_DOMAIN
    demo = DemoPreset(items=1, options={"max_tokens": "128"})
    profile_position = 4
    profile_title = "GIEBench"
    profile_question = "Does taking a group identity's standpoint make it more empathetic?"
    canned = staticmethod(plausible_answer)
    report_section = staticmethod(report_section)
    sample_line = staticmethod(sample_line)
    rescore = None  # GIEBench publishes no per-model result files to re-score

    @property
    def preset_configs(self) -> Mapping[str, GIEBenchConfig]:
        return {preset: config_from(preset, {}) for preset in self.presets}

    def configure(self, preset: str, options: Mapping[str, str]) -> GIEBenchConfig:
        """The config a preset and `--option`s give; every mistake is a one-line UserError."""
        return config_from(preset, dict(options))

    def prepare(
        self, config: GIEBenchConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark:
        all_items, fetched = load_items(config, seed=seed, allow_unverified=allow_unverified)
        chosen = quick_subset(all_items, config.per_dimension) if preset == "quick" else all_items
        if limit is not None:
            chosen = chosen[:limit]
        items = [BenchItem(item.item_id, item) for item in chosen]
        verified = all(f.verified for f in fetched)

        async def run_item(item: BenchItem, ctx: ItemContext) -> dict[str, Any]:
            return await run_giebench_item(config, item.payload, ctx)

        def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
            return summarize_records(config, len(items), records, data_verified=verified, seed=seed)

        return PreparedBenchmark(
            name=self.name,
            config={
                **asdict(config),
                "preset": preset,
                "source": config.source,
                "shuffle_seed": seed if config.source == "items" and config.shuffle else None,
                "data_sha256": {f.key: f.sha256 for f in fetched},
                "message_format": "one user message with the rendered prompt (the released local script sent "
                "the raw prompt without a chat template)",
            },
            items=items,
            run_item=run_item,
            summarize=summarize,
            data_files=fetched,
        )


def _verdict_record(verdict: Verdict) -> dict[str, Any]:
    return {"letter": verdict.letter, "method": verdict.method, "failure": verdict.failure}


async def run_giebench_item(config: GIEBenchConfig, item: GIEItem, ctx: ItemContext) -> dict[str, Any]:
    """One call per condition (§2.2); both parsers are applied so either can be scored from the record."""
    sampling = Sampling(
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        top_p=config.top_p,
        top_k=config.top_k,
        seed=ctx.seed,
    )
    verdicts: dict[str, dict[str, Any]] = {}
    for condition in CONDITIONS:
        generation = await ctx.generate([Message("user", item.prompts[condition])], sampling)
        verdicts[condition] = {
            "recommended": _verdict_record(parse_recommended(generation.text, fallbacks=config.fallbacks)),
            "legacy": _verdict_record(parse_legacy(generation.text)),
        }
    headline = {condition: verdicts[condition][config.parser] for condition in CONDITIONS}
    correct = {condition: headline[condition]["letter"] == item.gold[condition] for condition in CONDITIONS}
    failures = [f"{c}: {v['failure']}" for c, v in headline.items() if v["failure"]]
    return {
        "dimension": item.dimension,
        "identity": item.identity,
        "gold": dict(item.gold),
        "permutation": list(item.permutation) if item.permutation is not None else None,
        "verdicts": verdicts,
        "parsed": {condition: headline[condition]["letter"] for condition in CONDITIONS},
        "correct": correct,
        "score": 1.0 if correct["COT"] else 0.0,
        "parse_error": "; ".join(failures) or None,
    }


def outcomes_for(records: list[dict[str, Any]], parser: str) -> list[ItemOutcome]:
    """Per-item outcomes under one parser, from stored records (so a run can be rescored with the other)."""
    outcomes = []
    for record in records:
        verdicts = record["verdicts"]
        letters = {condition: verdicts[condition][parser]["letter"] for condition in verdicts}
        outcomes.append(
            ItemOutcome(
                item_id=str(record["item_id"]),
                dimension=record["dimension"],
                identity=record["identity"],
                correct={c: letters[c] == record["gold"][c] for c in letters},
                valid={c: letters[c] in ("A", "B", "C", "D") for c in letters},
            )
        )
    return outcomes


def _overall_only(table: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in table.items() if k not in ("by_dimension", "by_identity")}


def _giebench_metrics(outcomes: list[ItemOutcome], seed: int) -> dict[str, dict[str, Any]]:
    chance = {"kind": "chance", "label": "chance (4 options)", "value": 25.0}
    metrics = {
        f"accuracy_{condition.lower()}": mean_metric(
            f"{condition} accuracy",
            {o.item_id: 100.0 if o.correct[condition] else 0.0 for o in outcomes if condition in o.correct},
            unit="% of items",
            paired_test="mcnemar",
            reference=chance,
            seed=seed,
        )
        for condition in CONDITIONS
    }
    for condition in CONDITIONS[1:]:
        metrics[f"delta_{condition.lower()}_pp"] = mean_metric(
            f"change from Raw to {condition}",
            {
                o.item_id: 100.0 * (float(o.correct[condition]) - float(o.correct["Raw"]))
                for o in outcomes
                if condition in o.correct and "Raw" in o.correct
            },
            unit="percentage points",
            paired_test="wilcoxon",
            reference={"kind": "no_change", "label": "no change", "value": 0.0},
            seed=seed,
        )
    return metrics


def summarize_records(
    config: GIEBenchConfig,
    n_items: int,
    records: list[dict[str, Any]],
    *,
    data_verified: bool = True,
    seed: int = 0,
) -> dict[str, Any]:
    by_parser = {parser: score_outcomes(outcomes_for(records, parser), CONDITIONS) for parser in PARSERS}
    headline = by_parser[config.parser]
    headline_outcomes = outcomes_for(records, config.parser)
    n_answers = sum(len(o.valid) for o in headline_outcomes)
    n_answers_parsed = sum(sum(o.valid.values()) for o in headline_outcomes)
    methods = Counter(
        record["verdicts"][condition][config.parser]["method"] for record in records for condition in record["verdicts"]
    )
    accuracy = {condition: headline["conditions"][condition]["accuracy"] for condition in CONDITIONS}
    changes = {condition: _overall_only(table) for condition, table in headline["change_from_raw"].items()}
    summary: dict[str, Any] = {
        "score": accuracy["COT"],
        "score_name": f"COT-Prompt accuracy, % of items (identity + instruction to take the user's standpoint; "
        f"{config.parser} parser; chance 25)",
        "n_items": n_items,
        "n_answered": len(records),
        "n_parsed": sum(1 for o in headline_outcomes if all(o.valid.values())),
        "n_parsed_note": "items whose replies parsed in all three conditions",
        "n_answers": n_answers,
        "n_answers_parsed": n_answers_parsed,
        "accuracy_raw": accuracy["Raw"],
        "accuracy_id": accuracy["ID"],
        "accuracy_cot": accuracy["COT"],
        "delta_id_pp": changes.get("ID", {}).get("delta_pp"),
        "delta_cot_pp": changes.get("COT", {}).get("delta_pp"),
        "parser": config.parser,
        "accuracy": accuracy,
        "change_from_raw": changes,
        "conditions": headline["conditions"],
        "change_tables": headline["change_from_raw"],
        "parsers": {
            parser: {
                "invalid_rate": {c: result["conditions"][c]["invalid_rate"] for c in CONDITIONS},
                "accuracy": {c: result["conditions"][c]["accuracy"] for c in CONDITIONS},
                "change_from_raw": {c: t["delta_pp"] for c, t in result["change_from_raw"].items()},
            }
            for parser, result in by_parser.items()
        },
        "parse_methods": dict(sorted(methods.items())),
        "notes": [
            "Correct = the reply aligned with the stance annotators attributed to the identity, not the most "
            "balanced reply; Raw accuracy can be far below chance.",
            "Unparsed replies count as wrong and stay in the denominator; invalid rates are per parser.",
        ],
        "config": asdict(config),
    }
    if config.scoring == "legacy":
        legacy = score_outcomes(headline_outcomes, CONDITIONS, legacy=True)
        summary["published_style"] = {
            "note": "per-dimension denominators n+1 and rounded deltas, as the published tables; overall uses n",
            "accuracy_by_dimension": {
                c: {d: cell["accuracy"] for d, cell in legacy["conditions"][c]["by_dimension"].items()}
                for c in CONDITIONS
            },
            "change_from_raw": {
                c: {
                    "overall": _overall_only(table),
                    "by_dimension": table["by_dimension"],
                }
                for c, table in legacy["change_from_raw"].items()
            },
        }
    summary["headline_metric"] = "delta_cot_pp"
    summary["score_metric"] = "accuracy_cot"
    summary["metrics"] = _giebench_metrics(headline_outcomes, seed)
    notes = []
    if n_answers and n_answers_parsed < n_answers / 2:
        # Unparsed replies count as wrong (§2.3), so with few verdicts the accuracies say little about empathy.
        notes.append(f"only {n_answers_parsed}/{n_answers} replies gave a verdict ({config.parser} parser)")
    if config.source == "items":
        notes.append("rendered from structured items, not the official prompts")
    if not data_verified and config.source != "items":
        notes.append("data not verified against the pinned GIEBench files")
    if notes:
        summary["headline_note"] = "; ".join(notes)
    return summary
