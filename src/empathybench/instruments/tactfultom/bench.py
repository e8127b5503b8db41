"""TactfulToM on the typed protocol: config and presets, one question's requests (`run_item`), and the run summary.

The protocol is get_original_results.py at commit 0881b0d (docs/instruments/tactfultom.md): one request per question
and format, messages [system, user], temperature 0.2 and max_tokens 8192, one sample; with chain of thought two
passes, the second carrying the first reply and "Therefore, the final answer is: ". Replies are read per format as
evaluate_non_freeform.py reads them and scored as it scores them; free-form answers are recorded, not scored.
"""

import asyncio
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.engine.engine import ItemContext
from empathybench.errors import UserError
from empathybench.instruments.protocol import BenchItem, DemoPreset, Instrument, PreparedBenchmark, RescoreCommand
from empathybench.instruments.support import (
    MAX_TEMPERATURE,
    MAX_TOKENS_LIMIT,
    apply_options,
    bounded,
    chosen_names,
    cot_conditions,
    evenly_spread,
    preset_config,
)
from empathybench.instruments.tactfultom.atlas import ATLAS as TACTFULTOM_ATLAS
from empathybench.instruments.tactfultom.canned import plausible_answer
from empathybench.instruments.tactfultom.data import SETS, Question, dataset_label, load_questions
from empathybench.instruments.tactfultom.freeform import (
    cosine_similarities,
    gold_is_closest,
    require_extra,
    upstream_answer,
)
from empathybench.instruments.tactfultom.parse import (
    UNREAD,
    apply_prestep,
    clean_reply,
    list_matches_leniently,
    prestep_for,
    read_list_lenient,
)
from empathybench.instruments.tactfultom.prompts import (
    COT_CUE,
    COT_FINAL,
    options_of,
    question_rng,
    second_pass,
    shown_options,
    system_prompt,
    user_prompt,
)
from empathybench.instruments.tactfultom.report import ACCURACY_DOMAIN, comparison_section, report_section, sample_line
from empathybench.instruments.tactfultom.rescore import render_rescore, run_rescore
from empathybench.instruments.tactfultom.score import CATEGORIES, is_correct
from empathybench.instruments.tactfultom.summary import condition_name, summarize_records
from empathybench.models.base import ChatRequest, Message, Sampling

EXPECTED_REASONING_TOKENS = 300  # dry run: a first pass of step-by-step reasoning (not released upstream)
QUICK_PER_CATEGORY = 2  # quick: questions per (set, category), evenly spread: 5 sets x 11 categories x 2 = 110


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class TactfulToMConfig:
    """Everything that defines a TactfulToM run; recorded in run.json."""

    cot: tuple[bool, ...] = (False, True)  # one condition per value; the first is the headline's
    freeform: bool = True  # send the free-form requests upstream sends (recorded, not scored)
    freeform_check: bool = False  # ours: each free-form answer's similarity to the options (the optional extra)
    temperature: float = field(default=0.2, metadata=bounded(0.0, MAX_TEMPERATURE))
    max_tokens: int = field(default=8192, metadata=bounded(1, MAX_TOKENS_LIMIT))
    per_category: int | None = None  # questions per (set, category), evenly spread; None: every question
    sets: tuple[str, ...] = ()  # empty: the 5 sets
    categories: tuple[str, ...] = ()  # empty: the 11 categories

    def sampling(self) -> Sampling:
        """get_original_results.py sends temperature and max_tokens and nothing else (L23-38)."""
        return Sampling(temperature=self.temperature, max_tokens=self.max_tokens, top_p=None)


PRESET_HELP = {
    "quick": f"{QUICK_PER_CATEGORY} questions per set and category (110), scored formats only, without CoT",
    "paper": "the final set (100 conversations, 4,154 questions), every format upstream asks (6,636 requests), "
    "without and with two-pass CoT (19,908 calls), temperature 0.2, max_tokens 8192",
    "full": "the paper preset",
}
PRESETS: dict[str, TactfulToMConfig] = {
    "quick": TactfulToMConfig(cot=(False,), freeform=False, per_category=QUICK_PER_CATEGORY),
    "paper": TactfulToMConfig(),
    "full": TactfulToMConfig(),
}
OPTION_HELP = {
    "cot": "false | true | both: upstream's prompts without / with two-pass chain of thought (both: two conditions)",
    "freeform": "true | false: also send the free-form requests upstream sends (recorded; upstream scores none)",
    "freeform_check": "true | false: the similarity of each free-form answer to the options, as upstream computes it "
    "(all-MiniLM-L6-v2, locally; needs the tactfultom-freeform extra; sends the free-form requests)",
    "temperature": "sampling temperature (upstream 0.2)",
    "max_tokens": "answer token cap per request (upstream 8192)",
    "per_category": "questions per set and category, evenly spread (empty: all)",
    "sets": "all, or sets by number, comma-separated: 0 (Pareto), 1-4 (altruistic)",
    "categories": f"all, or question categories, comma-separated: {','.join(CATEGORIES)}",
}


def configure(preset: str, options: Mapping[str, str]) -> TactfulToMConfig:
    """The config a preset and `--option`s give; every mistake is a one-line UserError."""
    config = apply_options(
        preset_config("tactfultom", PRESETS, preset),
        options,
        benchmark="tactfultom",
        known=OPTION_HELP,
        custom={
            "cot": lambda c, v: replace(c, cot=cot_conditions("tactfultom.cot", v)),
            "sets": lambda c, v: replace(c, sets=chosen_names("tactfultom.sets", v, SETS)),
            "categories": lambda c, v: replace(c, categories=chosen_names("tactfultom.categories", v, CATEGORIES)),
        },
    )
    if config.freeform_check:
        if "freeform" not in options:  # the check asks the free-form questions a preset may leave out
            config = replace(config, freeform=True)
        if not config.freeform:
            raise UserError("tactfultom.freeform_check needs the free-form requests (tactfultom.freeform=true)")
        require_extra()
    return config


def select_questions(questions: list[Question], config: TactfulToMConfig) -> list[Question]:
    """The questions of the chosen sets and categories: all in file order, or `per_category` of each (set,
    category) evenly spread, taken round robin (the first of every stratum, then the second ...) so that `--limit N`
    spreads over sets and categories too."""
    chosen = [
        q
        for q in questions
        if (not config.sets or q.set_id in config.sets) and (not config.categories or q.category in config.categories)
    ]
    if config.per_category is None:
        return chosen
    strata: dict[tuple[str, str], list[Question]] = {}
    for question in chosen:
        strata.setdefault((question.set_id, question.category), []).append(question)
    picks = [evenly_spread(members, config.per_category) for members in strata.values()]
    return [p[rank] for rank in range(config.per_category) for p in picks if rank < len(p)]


@dataclass(frozen=True)
class TactfulRun:
    """What a run's questions are asked and scored with: its config and seed, and how many it asks."""

    config: TactfulToMConfig
    seed: int
    n_items: int  # the questions the run asks: a shortfall stays in the summary's n_items and its label
    n_final_set: int  # the questions of the final set (4,154): the label's coverage
    dataset: str  # the dataset asked (data.dataset_label)

    async def item(self, item: BenchItem[Question], ctx: ItemContext) -> dict[str, Any]:
        return await run_question(self.config, item.payload, ctx, seed=self.seed)

    def summary(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        summary = summarize_records(
            self.config.cot, records, seed=self.seed, n_items=self.n_items, n_final_set=self.n_final_set
        )
        # What the headline was made with, in the published runs' terms (atlas._settings), for the atlas's check:
        # `cot` the headline's one condition (each published run is one), and the dataset (theirs the legacy one).
        headline = {"cot": [self.config.cot[0]], "dataset": self.dataset}
        return {**summary, "config": {**asdict(self.config), **headline}}


async def _ask(ctx: ItemContext, system: str, user: str, sampling: Sampling, cot: bool) -> dict[str, Any]:
    """One request as generate_set makes it; with chain of thought the second pass's reply is the answer."""
    reply = (await ctx.generate([Message("system", system), Message("user", user)], sampling)).text
    if not cot:
        return {"reply": reply}
    final = (await ctx.generate([Message("system", system), Message("user", second_pass(user, reply))], sampling)).text
    return {"reasoning_pass": reply, "reply": final}


async def run_question(config: TactfulToMConfig, question: Question, ctx: ItemContext, *, seed: int) -> dict[str, Any]:
    """Every format of one question, per condition: the reply, what was read from it and (scored formats) whether it
    is right. The multiple-choice options are shown in one seeded order, the same with and without CoT."""
    formats = [f for f in question.formats if config.freeform or f != "freeform"]
    # Upstream cleaned the replies of some models only, chosen by the model's name (its result file's): so here.
    step = prestep_for(str(ctx.model_identity.get("model") or "").rsplit("/", 1)[-1])
    fields = dict(question.fields)
    given = options_of(fields) if "mcq" in formats or "freeform" in formats else []  # the gold first, as upstream
    options = shown_options(given, question_rng(seed, question.question_id))
    conditions: dict[str, Any] = {}
    for cot in config.cot:
        answers: dict[str, Any] = {}
        for question_format in formats:
            shown = options.texts if question_format == "mcq" else None
            user = user_prompt(question.context, fields, shown, cot)
            answer = await _ask(ctx, system_prompt(question_format, cot), user, config.sampling(), cot)
            if question_format == "freeform":  # recorded; upstream scores none (the check below is ours)
                if config.freeform_check:
                    similarity = await asyncio.to_thread(cosine_similarities, upstream_answer(answer["reply"]), given)
                    answer.update(similarity=similarity, gold_closest=gold_is_closest(similarity))
            else:
                read = clean_reply(answer["reply"], question_format, options.mapping, step)
                answer.update(read=read, correct=is_correct(question_format, read, question.gold))
                if question_format == "mcq":
                    answer["mapping"] = list(options.mapping)
                if question_format == "list":  # ours, beside: the names read leniently
                    names = read_list_lenient(apply_prestep(answer["reply"], step))
                    answer.update(read_lenient=names, correct_lenient=list_matches_leniently(names, question.gold))
            answers[question_format] = answer
        conditions[condition_name(cot)] = answers
    scored_format = question.formats[-1]  # the one format upstream scores (free-form is never last)
    headline = conditions[condition_name(config.cot[0])][scored_format]
    unread = headline["read"] == UNREAD
    return {
        "question_id": question.question_id,
        "set": question.set_id,
        "conversation": question.conversation,
        "category": question.category,
        "scored_format": scored_format,
        "gold": question.gold,
        "prestep": step.name,
        "conditions": conditions,
        "correct": bool(headline.get("correct")),
        "parse_error": f"the {scored_format} reply had no readable answer (counted wrong, as upstream)"
        if unread
        else None,
    }


def prepare_items(
    config: TactfulToMConfig, preset: str, *, limit: int | None, seed: int, allow_unverified: bool
) -> PreparedBenchmark[Question]:
    questions, files = load_questions(allow_unverified=allow_unverified)
    chosen = select_questions(questions, config)[:limit]
    dataset = dataset_label(questions)
    run = TactfulRun(config, seed, len(chosen), len(questions), dataset)
    return PreparedBenchmark(
        name="tactfultom",
        config={**asdict(config), "preset": preset, "n_questions": len(chosen), "dataset": dataset},
        items=[BenchItem(question.question_id, question) for question in chosen],
        run_item=run.item,
        summarize=run.summary,
        data_files=files,
        summarize_failed=True,  # failed questions are named in the label's coverage
    )


class TactfulToM(Instrument[TactfulToMConfig, Question]):
    """TactfulToM: questions about conversations with a white lie told out of kindness."""

    name = "tactfultom"
    title = "TactfulToM: theory of mind about white lies told out of kindness (100 conversations, 11 question types)"
    order = 78  # after ToMBench (75), before SAGE (80)
    profile_title = "TactfulToM"
    profile_question = "Does it see through a kind lie: who told it, why, who knows, who could tell?"
    presets = PRESET_HELP
    preset_configs: ClassVar[Mapping[str, TactfulToMConfig]] = PRESETS
    options = OPTION_HELP
    limit_unit = "questions (each asked in its formats, twice per format with chain of thought)"
    in_default_run = False  # as its package (__init__.py) declares it for the registry, which checks the two agree
    demo = DemoPreset(
        items=1,
        options={"categories": "comprehensionQA", "cot": "false", "freeform": "false", "max_tokens": "16"},
        left_out_because="each question carries a whole conversation (about 1,200 tokens), long for the embedded model",
    )
    chart_domain = ACCURACY_DOMAIN
    report_section = staticmethod(report_section)
    comparison_section = staticmethod(comparison_section)
    sample_line = staticmethod(sample_line)
    canned = staticmethod(plausible_answer)
    atlas = TACTFULTOM_ATLAS
    rescore = RescoreCommand(
        help="Recompute the released TactfulToM outputs' accuracy per question category, per set file and pooled per "
        "model over its set files (upstream's main_table), plus our overall micro and macro accuracy.",
        argument_help="Result files as upstream released them: results/{original,clean}/<model>[-cot]-<set>.json",
        run=run_rescore,
        render=render_rescore,
        many_files=True,
        flags={
            "freeform": "Also the free-form answers: the share closest to the gold option (ours; needs the "
            "tactfultom-freeform extra)"
        },
    )

    def configure(self, preset: str, options: Mapping[str, str]) -> TactfulToMConfig:
        return configure(preset, options)

    def expected_output_tokens(self, request: ChatRequest) -> int | None:
        """For the dry run: a chain of thought's first pass (a guess: upstream kept only the second pass), and the
        mean lengths of gpt-4o's released free-form and second-pass answers (characters / 4); else the canned one."""
        user = request.messages[-1].content if request.messages else ""
        if user.endswith(COT_CUE):
            return EXPECTED_REASONING_TOKENS
        if "single sentence" in (request.messages[0].content if request.messages else ""):
            return 40
        return 50 if user.endswith(COT_FINAL) else None

    def prepare(
        self, config: TactfulToMConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark[Question]:
        return prepare_items(config, preset, limit=limit, seed=seed, allow_unverified=allow_unverified)
