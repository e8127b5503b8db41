"""ToMBench on the typed protocol: config and presets, one item's tries (`run_item`), and the run summary.

The protocol is the repository's run_api.py / get_results.py (docs/instruments/tombench.md): the system and user
prompts of prompts.py, temperature 0, each item asked `try_times` times with its options shuffled and the reply's
letter mapped back, the most common answer scored against the key.
"""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.engine.engine import ItemContext
from empathybench.instruments.protocol import BenchItem, DemoPreset, Instrument, PreparedBenchmark
from empathybench.instruments.support import (
    MAX_TOKENS_LIMIT,
    apply_options,
    bounded,
    chosen_names,
    cot_conditions,
    evenly_spread,
    preset_config,
)
from empathybench.instruments.tombench.canned import plausible_answer
from empathybench.instruments.tombench.data import LANGUAGES, Language, TomItem, load_items, task_slug, task_slugs
from empathybench.instruments.tombench.parse import PARSERS, Parser, extract_answer, majority
from empathybench.instruments.tombench.prompts import Prompts, load_prompts, shuffle_options, try_rng
from empathybench.instruments.tombench.report import ACCURACY_DOMAIN, report_section, sample_line
from empathybench.instruments.tombench.score import (
    accuracy,
    is_correct,
    item_votes,
    language_figures,
    pooled_correct,
)
from empathybench.models.base import Message, Sampling

MAX_TRY_TIMES = 10
QUICK_PER_STRATUM = 2  # quick: items per (task file, ability label), 37 strata -> 74 items
# Upstream sends no token cap (the API's default); ours, generous for the one-letter answer and for reasoning.
DEFAULT_MAX_TOKENS = {False: 1024, True: 4096}
UNREAD = "the most common reply had no answer letter (the upstream parser reads it as A)"
HUMAN_REFERENCE_NOTE = (
    "No human reference: the paper's human accuracy is in its figures and tables, which the README and our spec do "
    "not give in numbers; chance is shown instead."
)


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class ToMBenchConfig:
    """Everything that defines a ToMBench run; recorded in run.json."""

    language: str = "both"
    cot: tuple[bool, ...] = (False,)  # one condition per value, the first is the headline's
    try_times: int = field(default=5, metadata=bounded(1, MAX_TRY_TIMES))
    parser: str = "upstream"
    max_tokens: int | None = field(default=None, metadata=bounded(1, MAX_TOKENS_LIMIT))
    per_stratum: int | None = None  # items per (task file, ability label), round robin over them; None: every item
    tasks: tuple[str, ...] = ()  # task file slugs to run (); empty: all 20

    @property
    def languages(self) -> tuple[Language, ...]:
        return LANGUAGES if self.language == "both" else (self.language,)  # type: ignore[return-value]

    def sampling(self, cot: bool) -> Sampling:
        """run_api.py sends temperature 0 and nothing else (its payload's top_p never reaches the API)."""
        tokens = self.max_tokens or DEFAULT_MAX_TOKENS[cot]
        return Sampling(temperature=0.0, max_tokens=tokens, top_p=None)


def condition_name(cot: bool) -> str:
    return "cot" if cot else "direct"


PRESET_HELP = {
    "quick": f"{QUICK_PER_STRATUM} items per task and ability label (74), English, 1 try",
    "paper": "all 2,860 items in English and Chinese, 5 tries with shuffled options, majority vote",
    "full": "the paper preset without and with chain of thought",
}
PRESETS: dict[str, ToMBenchConfig] = {
    "quick": ToMBenchConfig(language="en", try_times=1, per_stratum=QUICK_PER_STRATUM),
    "paper": ToMBenchConfig(),
    "full": ToMBenchConfig(cot=(False, True)),
}


OPTION_HELP = {
    "language": "en | zh | both (reported apart; the headline counts an item's two languages as one item)",
    "cot": "false | true | both: upstream's prompts without / with chain of thought (both: two conditions)",
    "try_times": f"asks per item, options shuffled each time, majority vote (1-{MAX_TRY_TIMES}; upstream 5)",
    "parser": "upstream (get_results.py: a reply with no letter counts as A) | strict (it counts as wrong)",
    "max_tokens": "answer token cap (default 1024, 4096 with chain of thought; upstream sends none)",
    "tasks": "all, or task files by name, comma-separated: false-belief-task,faux-pas-recognition-test,...",
}


def _cot(config: ToMBenchConfig, value: str) -> ToMBenchConfig:
    return replace(config, cot=cot_conditions("tombench.cot", value))


def _tasks(config: ToMBenchConfig, value: str) -> ToMBenchConfig:
    return replace(config, tasks=chosen_names("tombench.tasks", value, task_slugs(), lower=True))


def configure(preset: str, options: Mapping[str, str]) -> ToMBenchConfig:
    """The config a preset and `--option`s give; every mistake is a one-line UserError."""
    return apply_options(
        preset_config("tombench", PRESETS, preset),
        options,
        benchmark="tombench",
        known=OPTION_HELP,
        choices={"language": ("en", "zh", "both"), "parser": PARSERS},
        custom={"cot": _cot, "tasks": _tasks},
    )


def select_items(items: list[TomItem], per_stratum: int | None, tasks: tuple[str, ...] = ()) -> list[TomItem]:
    """The items of `tasks` (all when empty): every one in file order, or `per_stratum` items evenly spread over
    each (task, ability label) stratum, taken round robin (the first of every stratum, then the second ...), so that
    `--limit N` spreads too."""
    if tasks:
        items = [item for item in items if task_slug(item.task) in tasks]
    if per_stratum is None:
        return items
    strata: dict[tuple[str, str], list[TomItem]] = {}
    for item in items:
        strata.setdefault((item.task, item.label.strip()), []).append(item)
    picks = [evenly_spread(members, per_stratum) for members in strata.values()]
    return [chosen[rank] for rank in range(per_stratum) for chosen in picks if rank < len(chosen)]


@dataclass(frozen=True)
class TomPayload:
    item: TomItem
    language: Language


def prepare_items(
    config: ToMBenchConfig, preset: str, *, limit: int | None, seed: int, allow_unverified: bool
) -> PreparedBenchmark[TomPayload]:
    """The run's items (each chosen question in each language), its item code and its summary, from `config`."""
    items, files = load_items(allow_unverified=allow_unverified)
    prompts, prompts_file = load_prompts(allow_unverified=allow_unverified)
    questions = select_items(items, config.per_stratum, config.tasks)[:limit]
    bench_items = [
        BenchItem(f"{language}-{question.question_id}", TomPayload(question, language))
        for question in questions
        for language in config.languages
    ]

    run = TomRun(config, prompts, seed)
    return PreparedBenchmark(
        name="tombench",
        config={**asdict(config), "preset": preset, "questions": [q.question_id for q in questions]},
        items=bench_items,
        run_item=run.item,
        summarize=run.summary,
        data_files=[*files, prompts_file],
    )


@dataclass(frozen=True)
class TomRun:
    """What a run's items are asked and scored with: its config, the upstream prompts and the run's seed."""

    config: ToMBenchConfig
    prompts: Prompts
    seed: int

    async def item(self, item: BenchItem[TomPayload], ctx: ItemContext) -> dict[str, Any]:
        return await run_tombench_item(self.config, self.prompts, item.payload, ctx, seed=self.seed)

    def summary(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        return summarize_records(self.config, records, seed=self.seed)


async def run_tombench_item(
    config: ToMBenchConfig, prompts: Prompts, payload: TomPayload, ctx: ItemContext, *, seed: int
) -> dict[str, Any]:
    """Every try of one item in one language, per prompt condition: the shown order, the letter read and the
    original option it maps to."""
    item, language = payload.item, payload.language
    conditions: dict[str, Any] = {}
    for cot in config.cot:
        messages_system = Message("system", prompts.system(language, cot))
        tries = []
        for try_index in range(config.try_times):
            shuffled = shuffle_options(item.languages[language], try_rng(seed, item.question_id, try_index))
            messages = [messages_system, Message("user", prompts.user(language, shuffled.shown))]
            reply = (await ctx.generate(messages, config.sampling(cot), repetition=try_index)).text
            extracted = extract_answer(reply)
            read = {"order": shuffled.order, "letter": extracted.letter, "method": extracted.method}
            read["answer"] = shuffled.mapping[extracted.letter]
            tries.append(read if extracted.note is None else {**read, "note": extracted.note})
        conditions[condition_name(cot)] = {"tries": tries}
    headline = conditions[condition_name(config.cot[0])]["tries"]
    unread = majority(item_votes(headline, "strict")) is None
    return {
        "question_id": item.question_id,
        "task": item.task,
        "line": item.number,
        "language": language,
        "label": item.label,
        "abilities": list(item.abilities),
        "categories": list(item.categories),
        "key": item.key,
        "n_options": item.n_options,
        "conditions": conditions,
        "correct": is_correct(headline, item.key, config.parser),
        "parse_error": UNREAD if unread else None,
    }


def summarize_records(config: ToMBenchConfig, records: list[dict[str, Any]], *, seed: int = 0) -> dict[str, Any]:
    """Per condition and language every figure; the headline: accuracy of the first condition, an item's
    languages counted as one item."""
    parser: Parser = config.parser  # type: ignore[assignment]
    base = {
        "parser": parser,
        "headline_condition": condition_name(config.cot[0]),
        "human_reference": {"value": None, "note": HUMAN_REFERENCE_NOTE},
        "n_items": len(records),
    }
    if not records:
        return {**base, "score": None, "n_parsed": 0, "headline_note": "no item was answered"}
    conditions: dict[str, dict[str, Any]] = {}
    for cot in config.cot:
        name = condition_name(cot)
        conditions[name] = {
            language: language_figures(chosen, name, parser, seed=seed, label=f"ToMBench accuracy, {language} ({name})")
            for language in config.languages
            if (chosen := [r for r in records if r["language"] == language])
        }
    first = base["headline_condition"]
    per_language = {language: figures["accuracy"] for language, figures in conditions[first].items()}
    for by_language in conditions.values():  # the breakdowns keep no per-item values; the metrics below do
        for figures in by_language.values():
            figures["accuracy"] = {**figures["accuracy"], "items": None}
    languages = "+".join(conditions[first])
    chance = round(sum(100 / r["n_options"] for r in records) / len(records), 4)
    metrics = {
        "accuracy": {
            **accuracy(f"ToMBench accuracy ({languages}, {first})", pooled_correct(records, first, parser), seed=seed),
            "reference": {"kind": "chance", "label": "chance", "value": chance},
        },
        **{f"accuracy_{language}": entry for language, entry in per_language.items()},
        **{
            f"accuracy_{name}": accuracy(
                f"ToMBench accuracy ({languages}, {name})", pooled_correct(records, name, parser), seed=seed
            )
            for name in list(conditions)[1:]
        },
    }
    n_unread = sum(1 for r in records if r["parse_error"])
    tries = sum(f["n_tries"] for f in conditions[first].values())
    fallbacks = sum(f["n_fallback_tries"] for f in conditions[first].values())
    notes = []
    if fallbacks:
        notes.append(
            f"{fallbacks} of {tries} replies had no answer letter"
            + (" and were read as A (upstream parser)" if parser == "upstream" else " and count as wrong (strict)")
        )
    return {
        **base,
        "conditions": conditions,
        "chance": chance,
        "n_tries": tries,
        "n_fallback_tries": fallbacks,
        "headline_metric": "accuracy",
        "metrics": metrics,
        "score": metrics["accuracy"]["value"],
        "score_ci95": metrics["accuracy"]["ci95"],
        "n_parsed": len(records) - n_unread,
        "n_parsed_note": "items whose most common reply (headline prompt) had an answer letter",
        **({"headline_note": "; ".join(notes)} if notes else {}),
    }


class ToMBench(Instrument[ToMBenchConfig, TomPayload]):
    """ToMBench: each story question asked in shuffled option orders, the majority answer scored."""

    # what it is, and where it stands in a run and in the profile (order is part of the run's fingerprint)
    name = "tombench"
    title = "ToMBench: theory of mind in 2,860 stories (8 tasks, 31 ATOMS abilities), en + zh, majority of 5 shuffles"
    order = 75  # after EQ-Bench 3 (70), before SAGE (80)
    profile_position = 8  # after EQ-Bench 3
    profile_title = "ToMBench"
    profile_question = "Does it infer what people in a story believe, know, want, feel and mean?"
    # how it is run: presets, options, what --limit counts; not part of a run without --bench (paper: 28,600
    # calls), while the bare demo asks one English item once (a False Belief Task item: the classic task, and a
    # short prompt for the embedded model)
    presets = PRESET_HELP
    preset_configs: ClassVar[Mapping[str, ToMBenchConfig]] = PRESETS
    options = OPTION_HELP
    limit_unit = "questions (each asked in every language; try_times calls per language and prompt)"
    in_default_run = False  # as its package (__init__.py) declares it for the registry, which checks the two agree
    demo = DemoPreset(
        items=1, options={"tasks": "false-belief-task", "try_times": "1", "max_tokens": "16"}, in_bare_demo=True
    )
    # what it shows and answers for scripted models
    chart_domain = ACCURACY_DOMAIN
    report_section = staticmethod(report_section)
    sample_line = staticmethod(sample_line)
    canned = staticmethod(plausible_answer)
    rescore = None  # upstream publishes no result files to rescore

    def configure(self, preset: str, options: Mapping[str, str]) -> ToMBenchConfig:
        return configure(preset, options)

    def prepare(
        self, config: ToMBenchConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark[TomPayload]:
        return prepare_items(config, preset, limit=limit, seed=seed, allow_unverified=allow_unverified)
