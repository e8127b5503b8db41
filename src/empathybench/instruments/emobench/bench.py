"""EmoBench on the typed protocol: config and presets, per-item protocol (`run_item`), and the run summary (spec §9).

Registered through the entry point in pyproject.toml; `--dry-run` wiring is not there yet (the CLI has none).
"""

import random
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.data.fetch import FetchedFile
from empathybench.engine.engine import ItemContext
from empathybench.errors import UserError
from empathybench.formatting import number as format_number
from empathybench.instruments.emobench.atlas import ATLAS as EMOBENCH_ATLAS
from empathybench.instruments.emobench.canned import plausible_answer
from empathybench.instruments.emobench.data import (
    LANGUAGES,
    N_PAPER_ORDERS,
    TASKS,
    EAItem,
    EUItem,
    Language,
    OrderedOptions,
    Task,
    fetch_pinned,
    load_ea_items,
    load_eu_items,
    load_paper_order,
    paper_order_key,
)
from empathybench.instruments.emobench.parse import ParsedAnswer, json_exact, legacy_letter, robust
from empathybench.instruments.emobench.prompts import (
    PROTOCOLS,
    Paper2024Prompts,
    Repo2025Prompts,
    emotion_for_cause_question,
    load_paper2024_prompts,
    load_repo2025_prompts,
)
from empathybench.instruments.emobench.report import ACCURACY_DOMAIN, report_section
from empathybench.instruments.emobench.score import (
    ItemResult,
    PresentedItem,
    accuracy_metric,
    baselines,
    summarize_condition,
)
from empathybench.instruments.protocol import (
    BenchItem,
    DemoPreset,
    Instrument,
    PreparedBenchmark,
    RescoreCommand,
    RescoreOutput,
)
from empathybench.instruments.support import apply_options, evenly_spread
from empathybench.models.base import Message, Sampling

QUICK_ITEMS = 20  # per task and language, evenly spread over the qids
# A task-language figure with fewer answered items than this fraction is labelled insufficient (the house rule of
# report/validity.py, applied to each figure since en/zh and EU/EA are reported apart).
MIN_ANSWERED_FRACTION = 0.5
PARSERS = ("robust", "faithful")

OPTION_HELP = {
    "protocol": "paper2024 (letters, two-call EU, the paper's 4 option orders) | repo2025 (one JSON call per item)",
    "cot": "true | false: chain-of-thought prompts",
    "lang": "en | zh | both (reported apart; never pooled)",
    "task": "EU | EA | both",
    "orders": "number of option orders: paper2024 uses the 4 upstream orders first, then seeded permutations",
    "samples": "samples per item and order, reduced by the upstream majority vote",
    "parser": "robust (default, our numbers) | faithful (the protocol's upstream parser, bugs kept)",
    "provider_defaults": "true: send temperature 1.0 as the upstream API runs did (paper2024)",
}


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class EmoBenchConfig:
    protocol: str = "paper2024"
    cot: bool = False
    lang: str = "both"
    task: str = "both"
    orders: int = N_PAPER_ORDERS
    samples: int = 5
    parser: str = "robust"
    provider_defaults: bool = False
    quick_items: int | None = None  # items per task and language; None = all 200
    full: bool = False  # the full preset: this condition, then with CoT, then repo2025 with and without CoT

    @property
    def label(self) -> str:
        return self.protocol + ("+cot" if self.cot else "")

    def conditions(self) -> list["EmoBenchConfig"]:
        """The protocol x CoT conditions one run asks (one, or four for `full`; spec §9)."""
        if not self.full:
            return [self]
        single = replace(self, full=False)
        repo = replace(single, protocol="repo2025", orders=1, samples=1)
        return [single, replace(single, cot=True), repo, replace(repo, cot=True)]

    @property
    def languages(self) -> tuple[Language, ...]:
        return LANGUAGES if self.lang == "both" else (self.lang,)  # type: ignore[return-value]

    @property
    def tasks(self) -> tuple[Task, ...]:
        return TASKS if self.task == "both" else (self.task,)  # type: ignore[return-value]

    def sampling(self, seed: int | None) -> Sampling:
        """Spec §3/§9: paper2024 T 0.6, top_p 0.9, 75 tokens (CoT 500); repo2025 T 0.6, 50 tokens (CoT 2048)."""
        temperature = 1.0 if self.provider_defaults else 0.6
        if self.protocol == "paper2024":
            return Sampling(temperature=temperature, top_p=0.9, max_tokens=500 if self.cot else 75, seed=seed)
        return Sampling(temperature=temperature, max_tokens=2048 if self.cot else 50, seed=seed)

    def calls_per_item(self, task: Task) -> int:
        per_sample = 2 if task == "EU" and self.protocol == "paper2024" else 1
        return per_sample * self.orders * self.samples


def total_calls_per_item(config: EmoBenchConfig, task: Task) -> int:
    return sum(condition.calls_per_item(task) for condition in config.conditions())


PRESETS: dict[str, EmoBenchConfig] = {
    "quick": EmoBenchConfig(orders=1, samples=1, quick_items=QUICK_ITEMS),
    "paper": EmoBenchConfig(),
    "full": EmoBenchConfig(full=True),
}


def _positive(name: str) -> Any:
    def set_value(config: EmoBenchConfig, value: str) -> EmoBenchConfig:
        try:
            number = int(value)
        except ValueError:
            number = 0
        if number < 1 or number > 100:
            raise UserError(f"emobench.{name} must be an integer from 1 to 100, not {value!r}")
        return replace(config, **{name: number})

    return set_value


def config_from_options(preset: str, options: dict[str, str]) -> EmoBenchConfig:
    if preset not in PRESETS:
        raise UserError(f"unknown emobench preset {preset!r}; choose from {', '.join(PRESETS)}")
    config = apply_options(
        PRESETS[preset],
        options,
        benchmark="emobench",
        known=OPTION_HELP,
        choices={
            "protocol": PROTOCOLS,
            "lang": ("en", "zh", "both"),
            "task": ("EU", "EA", "both"),
            "parser": PARSERS,
        },
        custom={"orders": _positive("orders"), "samples": _positive("samples")},
    )
    if "protocol" in options and options["protocol"] == "repo2025":
        # repo2025 asks each item once in file order unless orders/samples are set explicitly
        config = replace(
            config,
            orders=int(options.get("orders", 1)),
            samples=int(options.get("samples", 1)),
        )
    return config


@dataclass(frozen=True)
class Presented:
    """One item's options in one order."""

    order: int
    choices: tuple[str, ...]
    label: int
    cause_choices: tuple[str, ...] = ()
    cause_label: int = -1
    question_word: str = ""


@dataclass(frozen=True)
class EmoPayload:
    task: Task
    item: EUItem | EAItem
    orders: tuple[Presented, ...]


def _permute(seed: int, task: Task, qid: str, order: int, count: int) -> list[int]:
    """A seeded permutation of option positions, the same in en and zh (as upstream's permutation files)."""
    positions = list(range(count))
    random.Random(f"emobench|{seed}|{task}|{qid}|{order}").shuffle(positions)
    return positions


def _presented_orders(
    task: Task,
    item: EUItem | EAItem,
    orders: int,
    paper_orders: dict[int, dict[str, OrderedOptions]],
    seed: int,
) -> tuple[Presented, ...]:
    """Order 0 is the file order (paper2024's data.json equals it, spec §1); 1-3 the upstream permutation files
    when paper2024 is asked; beyond them, seeded permutations."""
    result = []
    for order in range(orders):
        upstream = paper_orders.get(order, {}).get(item.qid)
        if upstream is not None:
            result.append(
                Presented(
                    order,
                    upstream.choices,
                    upstream.label_index,
                    upstream.cause_choices,
                    upstream.cause_label_index,
                    upstream.question_word,
                )
            )
            continue
        if isinstance(item, EUItem):
            emotion = _permute(seed, task, item.qid, order, len(item.emotion_choices)) if order else None
            cause = _permute(seed, task, item.qid, order, len(item.cause_choices)) if order else None
            emotions = tuple(item.emotion_choices[i] for i in emotion) if emotion else item.emotion_choices
            causes = tuple(item.cause_choices[i] for i in cause) if cause else item.cause_choices
            result.append(
                Presented(order, emotions, emotions.index(item.emotion_label), causes, causes.index(item.cause_label))
            )
        else:
            positions = _permute(seed, task, item.qid, order, len(item.choices)) if order else None
            choices = tuple(item.choices[i] for i in positions) if positions else item.choices
            result.append(Presented(order, choices, choices.index(item.label), question_word=item.question_type))
    return tuple(result)


def _rescore(directory: Path) -> RescoreOutput:
    from empathybench.instruments.emobench.rescore import rescore_directory

    result = rescore_directory(directory)
    return RescoreOutput(result.rows, tuple(f"skipped {note}" for note in result.skipped))


def _print_rows(rows: Any, console: Any) -> None:
    from empathybench.instruments.emobench.rescore import print_rows

    print_rows(rows, console)


class EmoBench(Instrument[EmoBenchConfig, EmoPayload]):
    """EmoBench on the typed protocol: `Instrument[EmoBenchConfig, EmoPayload]` (instruments/protocol.py)."""

    name = "emobench"
    order = 60  # position in the profile and in a run (part of the run's fingerprint)
    # Not part of a run without --bench (its paper preset is 24,000 calls); the bare demo shows it on one English
    # EA item (one call: the demo stays within a minute on 2 cores).
    in_default_run = False  # as its package (__init__.py) declares it for the registry, which checks the two agree
    demo = DemoPreset(items=1, options={"lang": "en", "task": "EA"}, in_bare_demo=True)
    limit_unit = "items per task and language (paper2024 EU: 2 calls per order and sample)"
    preset_configs: ClassVar[Mapping[str, Any]] = {}  # set below the class (PRESETS)
    chart_domain = ACCURACY_DOMAIN
    profile_position = 6  # after the five instruments of every report so far
    profile_title = "EmoBench"
    profile_question = (
        "Does it understand emotions and their causes in complex scenarios, and pick effective responses?"
    )
    canned = staticmethod(plausible_answer)

    @staticmethod
    def item_value(fields: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, float | None]:
        """The share of the item's option orders answered right (EU: emotion and cause) in the headline condition,
        read with the configured parser (None when the item was not asked)."""
        conditions = list(fields.get("conditions") or {})
        if not conditions:
            return {"correct": None}
        results = item_results([dict(fields)], conditions[0], str(config.get("parser") or "robust"))
        return {"correct": sum(r.correct for r in results) / len(results) if results else None}

    report_section = staticmethod(report_section)
    atlas = EMOBENCH_ATLAS
    rescore = RescoreCommand(
        help="Recompute the released EmoBench runs' accuracies (4 orders x majority of 5) per task, model, language, "
        "CoT. --json prints a list, one row per condition.",
        argument_help="A directory holding data/{EU,EA}/Results/<model>/*.csv",
        run=_rescore,
        render=_print_rows,
    )
    title = "EmoBench: emotional understanding (emotion + cause) and application (best action), en + zh"
    presets: ClassVar[dict[str, str]] = {
        "quick": f"{QUICK_ITEMS} items per task and language, 1 option order, 1 sample (paper2024 prompts)",
        "paper": "paper2024: 200 items per task and language, 4 upstream option orders x 5 samples, majority vote",
        "full": "the paper preset, then with CoT, then repo2025 (1 order, 1 sample) with and without CoT",
    }
    options = OPTION_HELP

    def configure(self, preset: str, options: Mapping[str, str]) -> EmoBenchConfig:
        """The config a preset and `--option`s give; every mistake is a one-line UserError."""
        return config_from_options(preset, dict(options))

    def prepare(
        self, config: EmoBenchConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark:
        files: list[FetchedFile] = []
        conditions = config.conditions()
        protocols = {condition.protocol for condition in conditions}
        paper = load_paper2024_prompts(allow_unverified=allow_unverified) if "paper2024" in protocols else None
        repo = load_repo2025_prompts(allow_unverified=allow_unverified) if "repo2025" in protocols else None
        n_orders = max(condition.orders for condition in conditions)
        n_paper_orders = max((c.orders for c in conditions if c.protocol == "paper2024"), default=0)
        items: list[BenchItem] = []
        for task in config.tasks:
            all_items: list[EUItem | EAItem] = list(
                load_eu_items(allow_unverified=allow_unverified)
                if task == "EU"
                else load_ea_items(allow_unverified=allow_unverified)
            )
            for language in config.languages:
                paper_orders: dict[int, dict[str, OrderedOptions]] = {}
                if n_paper_orders:
                    for order in range(min(n_paper_orders, N_PAPER_ORDERS)):
                        loaded = load_paper_order(task, order, language, allow_unverified=allow_unverified)
                        paper_orders[order] = {o.qid: o for o in loaded}
                chosen = [i for i in all_items if i.language == language]
                if config.quick_items is not None:
                    chosen = evenly_spread(chosen, config.quick_items)
                if limit is not None:
                    chosen = chosen[:limit]
                for item in chosen:
                    payload = EmoPayload(task, item, _presented_orders(task, item, n_orders, paper_orders, seed))
                    items.append(BenchItem(f"{task}-{language}-{item.qid}", payload))
        files.extend(fetch_pinned(__package__, key, allow_unverified=allow_unverified) for key in _data_keys(config))

        async def run_item(item: BenchItem, ctx: ItemContext) -> dict[str, Any]:
            return await run_emobench_item(config, paper, repo, item.payload, ctx)

        def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
            return summarize_run(config, records, seed=seed)

        return PreparedBenchmark(
            name=self.name,
            config={**asdict(config), "preset": preset, "items": [i.id for i in items]},
            items=items,
            run_item=run_item,
            summarize=summarize,
            data_files=files,
        )


EmoBench.preset_configs = PRESETS


def _data_keys(config: EmoBenchConfig) -> list[str]:
    keys = ["emobench/2025/data/EU.jsonl", "emobench/2025/data/EA.jsonl", "emobench/2025/LICENSE"]
    for condition in config.conditions():
        if condition.protocol == "paper2024":
            keys.append("emobench/2024/data/dicts.json")
            orders = range(min(condition.orders, N_PAPER_ORDERS))
            keys += [paper_order_key(t, o) for t in condition.tasks for o in orders]
        else:
            keys += ["emobench/2025/src/configs/prompts.yaml", "emobench/2025/src/configs/response.yaml"]
    return list(dict.fromkeys(keys))


def count_calls(config: EmoBenchConfig, items_per_task_language: int = 200) -> int:
    """Model calls a run makes (for --dry-run): spec §9 gives 8,000 EU + 4,000 EA per language for `paper`."""
    per_language = sum(total_calls_per_item(config, task) * items_per_task_language for task in config.tasks)
    return per_language * len(config.languages)


def _answer(parsed: ParsedAnswer) -> dict[str, Any]:
    return {"index": parsed.index, "reason": parsed.reason}


async def run_emobench_item(
    config: EmoBenchConfig,
    paper: Paper2024Prompts | None,
    repo: Repo2025Prompts | None,
    payload: EmoPayload,
    ctx: ItemContext,
) -> dict[str, Any]:
    """Ask one item in every condition, order and sample; each answer parsed by the protocol's upstream parser
    and by ours."""
    item, task = payload.item, payload.task
    conditions: dict[str, Any] = {}
    failed: list[str] = []
    for number, condition in enumerate(config.conditions()):
        sampling = condition.sampling(ctx.seed)
        orders = []
        for presented in payload.orders[: condition.orders]:
            samples = []
            for sample in range(condition.samples):
                # distinct cache keys per condition, order and sample
                repetition = (number * 1000 + presented.order) * 1000 + sample
                if condition.protocol == "paper2024":
                    if paper is None:
                        raise RuntimeError("paper2024 prompts were not loaded")
                    answer = await _paper_sample(condition, paper, task, item, presented, ctx, sampling, repetition)
                else:
                    if repo is None:
                        raise RuntimeError("repo2025 prompts were not loaded")
                    answer = await _repo_sample(condition, repo, task, item, presented, ctx, sampling, repetition)
                samples.append(answer)
                failed += [a["reason"] for a in answer[condition.parser].values() if a["index"] is None]
            orders.append(
                {
                    "order": presented.order,
                    "label": presented.label,
                    "cause_label": presented.cause_label,
                    "choices": list(presented.choices),
                    "cause_choices": list(presented.cause_choices),
                    "samples": samples,
                }
            )
        conditions[condition.label] = {"orders": orders}
    return {
        "task": task,
        "language": item.language,
        "qid": item.qid,
        "category": item.coarse_category if isinstance(item, EUItem) else item.category,
        "fine_category": item.fine_category if isinstance(item, EUItem) else "",
        "question_type": item.question_type if isinstance(item, EAItem) else "",
        "conditions": conditions,
        "parse_error": failed[0] if failed else None,
    }


async def _paper_sample(
    config: EmoBenchConfig,
    paper: Paper2024Prompts,
    task: Task,
    item: EUItem | EAItem,
    presented: Presented,
    ctx: ItemContext,
    sampling: Sampling,
    repetition: int,
) -> dict[str, Any]:
    language = item.language
    if isinstance(item, EAItem):
        user = paper.action_question(
            language, item.scenario, item.subject, presented.question_word, presented.choices, cot=config.cot
        )
        reply = (
            await ctx.generate(paper.messages(language, user, cot=config.cot), sampling, repetition=repetition)
        ).text
        return {
            "faithful": {"answer": _answer(legacy_letter(reply, presented.choices, letters=4, language=language))},
            "robust": {"answer": _answer(robust(reply, options=len(presented.choices)))},
        }
    first = paper.emotion_question(language, item.scenario, item.subject, presented.choices, cot=config.cot)
    emotion_reply = (
        await ctx.generate(paper.messages(language, first, cot=config.cot), sampling, repetition=repetition)
    ).text
    emotion = legacy_letter(emotion_reply, presented.choices, letters=6, language=language)
    # The cause question names the emotion picked by the upstream parser; unparsed names the LAST option (§2.2).
    named = emotion.index if emotion.index is not None and emotion.index < len(presented.choices) else -1
    emotions_text = emotion_for_cause_question(presented.choices, named)
    second = paper.cause_question(
        language, item.scenario, item.subject, emotions_text, presented.cause_choices, cot=config.cot
    )
    cause_reply = (
        await ctx.generate(paper.messages(language, second, cot=config.cot), sampling, repetition=repetition)
    ).text
    return {
        "faithful": {
            "emotion": _answer(emotion),
            "cause": _answer(legacy_letter(cause_reply, presented.cause_choices, letters=6, language=language)),
        },
        "robust": {
            "emotion": _answer(robust(emotion_reply, options=len(presented.choices))),
            "cause": _answer(robust(cause_reply, options=len(presented.cause_choices))),
        },
    }


def _reordered(item: EUItem | EAItem, presented: Presented) -> EUItem | EAItem:
    if isinstance(item, EUItem):
        return replace(item, emotion_choices=presented.choices, cause_choices=presented.cause_choices)
    return replace(item, choices=presented.choices)


async def _repo_sample(
    config: EmoBenchConfig,
    repo: Repo2025Prompts,
    task: Task,
    item: EUItem | EAItem,
    presented: Presented,
    ctx: ItemContext,
    sampling: Sampling,
    repetition: int,
) -> dict[str, Any]:
    # The model's name decides upstream's "/no_think" switch. ItemContext shows the model's identity only as
    # `judge_identity` when no separate judge is set; with a judge the switch is not applied.
    model_name = str(ctx.judge_identity.get("model", "")) if ctx.judge_is_self else ""
    messages: list[Message] = repo.messages(_reordered(item, presented), cot=config.cot, model_name=model_name)
    reply = (await ctx.generate(messages, sampling, repetition=repetition)).text
    if task == "EA":
        n = len(presented.choices)
        return {
            "faithful": {"answer": _answer(json_exact(reply, "answer", options=n))},
            "robust": {"answer": _answer(robust(reply, options=n))},
        }
    n_emotion, n_cause = len(presented.choices), len(presented.cause_choices)
    return {
        "faithful": {
            "emotion": _answer(json_exact(reply, "answer_q1", options=n_emotion)),
            "cause": _answer(json_exact(reply, "answer_q2", options=n_cause)),
        },
        "robust": {
            "emotion": _answer(robust(reply, options=n_emotion, field="answer_q1")),
            "cause": _answer(robust(reply, options=n_cause, field="answer_q2")),
        },
    }


def item_results(records: list[dict[str, Any]], condition: str, parser: str) -> list[ItemResult]:
    """Records -> ItemResults (one per item and order) of one condition, read with `parser`."""
    results = []
    for record in records:
        for order in record["conditions"][condition]["orders"]:
            answers = [sample[parser] for sample in order["samples"]]
            if record["task"] == "EA":
                results.append(
                    ItemResult(
                        "EA",
                        record["language"],
                        record["qid"],
                        record["category"],
                        order["order"],
                        order["label"],
                        tuple(a["answer"]["index"] for a in answers),
                        question_type=record["question_type"],
                    )
                )
            else:
                results.append(
                    ItemResult(
                        "EU",
                        record["language"],
                        record["qid"],
                        record["category"],
                        order["order"],
                        order["label"],
                        tuple(a["emotion"]["index"] for a in answers),
                        cause_label=order["cause_label"],
                        cause_predictions=tuple(a["cause"]["index"] for a in answers),
                    )
                )
    return results


def _condition_summary(
    condition: EmoBenchConfig, records: list[dict[str, Any]], task: Task, language: Language, seed: int
) -> dict[str, Any]:
    other = "faithful" if condition.parser == "robust" else "robust"
    label = condition.label
    results = item_results(records, label, condition.parser)
    summary = summarize_condition(results, seed=seed)
    summary["parser"] = condition.parser
    summary[f"accuracy_{other}_parser"] = summarize_condition(item_results(records, label, other), seed=seed)[
        "accuracy"
    ]["value"]
    if task == "EU":
        fine = {r["qid"]: r["fine_category"] for r in records}
        summary["by_fine_category"] = {
            name: accuracy_metric(f"EU {name}", subset, "correct", seed=seed)
            for name in sorted(set(fine.values()))
            if (subset := [r for r in results if fine[r.qid] == name])
        }
    summary["baselines"] = baselines(
        [
            PresentedItem(
                task,
                language,
                r["qid"],
                o["order"],
                tuple(o["choices"]),
                o["label"],
                tuple(o["cause_choices"]),
                o["cause_label"],
            )
            for r in records
            for o in r["conditions"][label]["orders"]
        ]
    )
    return summary


def summarize_records(config: EmoBenchConfig, records: list[dict[str, Any]], *, seed: int = 0) -> dict[str, Any]:
    """Per condition, task and language: the headline with the chosen parser, the other parser's accuracy beside
    it, per category and order, and the trivial baselines. en and zh stay apart."""
    conditions: dict[str, dict[str, Any]] = {}
    notes = []
    for condition in config.conditions():
        by_task_language: dict[str, Any] = {}
        for task in condition.tasks:
            for language in condition.languages:
                subset = [r for r in records if r["task"] == task and r["language"] == language]
                if subset:
                    by_task_language[f"{task}-{language}"] = _condition_summary(condition, subset, task, language, seed)
        conditions[condition.label] = by_task_language
        if condition.protocol == "repo2025" and condition.orders == 1:
            notes.append(f"{condition.label} asks every item in file order: option position can move these scores")
    return {
        "conditions": conditions,
        "pooled": None,  # en and zh are never pooled here
        "human_baseline": {"value": None, "note": "paper value not verified (the paper's tables were not readable)"},
        "notes": notes,
    }


def summarize_run(config: EmoBenchConfig, records: list[dict[str, Any]], *, seed: int = 0) -> dict[str, Any]:
    """The summary envelope around `summarize_records`: one metric per task and language of the first condition
    (en and zh apart, never pooled), the headline EU joint accuracy of the first language asked (EA's when only
    EA ran). Each metric carries its per-item values, so `report A B` pairs runs on their shared items."""
    summary = summarize_records(config, records, seed=seed)
    first = config.conditions()[0]
    by_task_language = summary["conditions"].get(first.label, {})
    unanswered = {
        (r.task, r.language, r.qid) for r in item_results(records, first.label, first.parser) if not r.answered
    }
    metrics: dict[str, dict[str, Any]] = {}
    insufficient: list[str] = []
    cell_of: dict[str, str] = {}  # metric key -> task-language key
    for key, condition in by_task_language.items():
        task, language = key.split("-", 1)
        label = f"{condition['accuracy']['label']}, {language} ({first.label})"
        in_cell = [r for r in records if r["task"] == task and r["language"] == language]
        answered = sum((task, language, r["qid"]) not in unanswered for r in in_cell)
        if answered < len(in_cell):  # the figure counts an unanswered item as wrong: say how many there were
            label += f"; {answered} of {len(in_cell)} items answered"
        if answered < MIN_ANSWERED_FRACTION * len(in_cell):
            label = f"insufficient: {label}"
            insufficient.append(f"{key} ({answered} of {len(in_cell)} items answered)")
        metric_key = f"{'eu_joint' if task == 'EU' else 'ea'}_accuracy_{language}"
        cell_of[metric_key] = key
        metrics[metric_key] = {
            **condition["accuracy"],
            "label": label,
            "n_answered": answered,
            "items": {f"{key}-{qid}": value for qid, value in (condition["accuracy"].get("items") or {}).items()},
            "higher_is_better": True,
            "reference": None,
        }
    headline = next(
        (
            f"{prefix}_accuracy_{language}"
            for prefix in ("eu_joint", "ea")
            for language in first.languages
            if f"{prefix}_accuracy_{language}" in metrics
        ),
        None,
    )
    entry = metrics.get(headline) if headline else None
    invalid = {key: c["invalid_rate"] for key, c in by_task_language.items() if c.get("invalid_rate") is not None}
    result = {
        **summary,
        "headline_metric": headline,
        "metrics": metrics,
        "score": entry["value"] if entry else None,
        "score_ci95": list(entry["ci95"]) if entry and entry.get("ci95") is not None else None,
        "n_items": len(records),
        # read by report/validity.py: fewer than half answered makes the run "insufficient"
        "n_parsed": sum((r["task"], r["language"], r["qid"]) not in unanswered for r in records),
        "n_parsed_note": f"items whose every question got a parsed answer ({first.parser} parser, {first.label}, "
        "after the vote, in every order)",
        "invalid_rate": max(invalid.values()) if invalid else None,
    }
    notes = []
    if invalid:
        worst = max(invalid, key=lambda key: invalid[key])
        notes.append(
            f"invalid answers up to {format_number(float(invalid[worst]), 1)}% ({worst}, {first.parser} parser)"
        )
    if insufficient:
        notes.append("fewer than half of the items answered in " + ", ".join(insufficient))
    if entry is not None and headline is not None and entry["value"] is not None:
        baseline = by_task_language[cell_of[headline]].get("baselines") or {}
        beaten = {name: value for name, value in baseline.items() if value is not None and entry["value"] <= value}
        if beaten:
            notes.append(
                "headline not above the "
                + ", ".join(
                    f"{name.replace('_', '-')} baseline ({format_number(float(value), 1)}%)"
                    for name, value in beaten.items()
                )
            )
    if notes:
        result["headline_note"] = "; ".join(notes)
    return result
