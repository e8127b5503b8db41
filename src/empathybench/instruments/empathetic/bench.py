"""The Welivita & Pu (2024) study on the engine: generate a reply per prompt, then have a judge rate it blind.

The judge also rates the human reply of every prompt, so model-vs-human figures are judge-vs-judge; the
published human-rater figures for the same prompts are reported beside them as a reference, never mixed in.
"""

from collections.abc import Mapping
from dataclasses import asdict, field, replace
from pathlib import Path
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.engine.engine import ItemContext, stored_text
from empathybench.errors import UserError
from empathybench.instruments.empathetic.canned import plausible_answer
from empathybench.instruments.empathetic.data import GOOD, HUMAN, SOURCE_NAMES, Prompt, load_released, one_per_emotion
from empathybench.instruments.empathetic.judge import JUDGE_ATTEMPTS, JUDGE_MAX_TOKENS, judge_reply
from empathybench.instruments.empathetic.prompts import (
    GENERATION_PROMPT_SOURCE,
    MAX_WORDS,
    RATER_TEXT_SOURCE,
    generation_messages,
)
from empathybench.instruments.empathetic.report import GOOD_PCT_DOMAIN, report_section, sample_line
from empathybench.instruments.empathetic.stats import RatedRow, analyse, rescore_ratings_file
from empathybench.instruments.protocol import (
    BenchItem,
    DemoPreset,
    Instrument,
    JudgeValidation,
    PreparedBenchmark,
    RescoreCommand,
)
from empathybench.instruments.support import (
    MAX_ATTEMPTS,
    MAX_TEMPERATURE,
    MAX_TOKENS_LIMIT,
    apply_options,
    bounded,
    truncation_reasks,
)
from empathybench.models.base import Message, Sampling
from empathybench.stats.intervals import bootstrap_method, mean_metric, metric
from empathybench.stats.tests import bootstrap_interval

SCORE_NAME = "% of the model's replies rated Good (Good / Okay / Bad) by the judge"
MODEL = "model"  # the source name of the model under test in the tables


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class EmpatheticConfig:
    # The paper does not state its sampling; greedy keeps runs repeatable.
    temperature: float = field(default=0.0, metadata=bounded(0, MAX_TEMPERATURE))
    # Room above the prompt's 97-word maximum, so overruns are seen, not cut.
    max_tokens: int = field(default=256, metadata=bounded(1, MAX_TOKENS_LIMIT))
    judge_attempts: int = field(default=JUDGE_ATTEMPTS, metadata=bounded(1, MAX_ATTEMPTS))
    # The judge's answer is one word; a reasoning judge gets room to think on top of this (models/capabilities.py).
    judge_max_tokens: int = field(default=JUDGE_MAX_TOKENS, metadata=bounded(1, MAX_TOKENS_LIMIT))
    released: tuple[str, ...] = ()  # released LLM replies the judge also rates (human is always rated)


OPTION_HELP = {
    "temperature": "sampling temperature of the model under test (default 0)",
    "max_tokens": "token cap of the model's reply (default 256)",
    "judge_attempts": "judge asks per reply, first ask included (default 3)",
    "judge_max_tokens": f"token cap of the judge's answer (default {JUDGE_MAX_TOKENS}); a reasoning judge "
    "(capability table, or --judge-arg reasoning=true) gets its thinking budget on top",
    "released": "comma-separated released sources the judge also rates, e.g. chatgpt_empathy,llama_empathy",
}


def _config_from(options: dict[str, str]) -> EmpatheticConfig:
    return apply_options(
        EmpatheticConfig(), options, benchmark="empathetic", known=OPTION_HELP, custom={"released": _with_released}
    )


def _with_released(config: EmpatheticConfig, value: str) -> EmpatheticConfig:
    released = tuple(filter(None, (s.strip() for s in value.split(","))))
    unknown = [s for s in released if s not in SOURCE_NAMES or s == HUMAN]
    if unknown:
        raise UserError(f"empathetic.released: unknown source(s) {', '.join(unknown)}")
    return replace(config, released=released)


def clean_reply(text: str) -> str:
    """Minimal post-processing (spec §6.1): strip a leading "Response:" and surrounding quotes."""
    reply = text.strip()
    if reply.lower().startswith("response:"):
        reply = reply[len("response:") :].strip()
    if len(reply) >= 2 and reply[0] == reply[-1] and reply[0] in "\"'":
        reply = reply[1:-1].strip()
    return reply


async def run_prompt(config: EmpatheticConfig, prompt: Prompt, ctx: ItemContext) -> dict[str, Any]:
    sampling = Sampling(temperature=config.temperature, max_tokens=config.max_tokens, top_p=1.0, seed=ctx.seed)
    generation = await ctx.generate(generation_messages(prompt.situation, prompt.speaker_utterance), sampling)
    reply = clean_reply(generation.text)

    async def call(messages: list[Message], judge_sampling: Sampling, attempt: int) -> Any:
        return await ctx.judge_generate(
            messages, judge_sampling, attempt=attempt, budget_reasks=truncation_reasks(config.judge_attempts)
        )

    to_rate = {MODEL: reply, HUMAN: prompt.replies[HUMAN]}
    to_rate.update({s: prompt.replies[s] for s in config.released if s in prompt.replies})
    verdicts = {}
    for source, text in to_rate.items():
        verdict = await judge_reply(
            call,  # type: ignore[arg-type]
            emotion=prompt.emotion,
            situation=prompt.situation,
            speaker_utterance=prompt.speaker_utterance,
            reply=text,
            seed=ctx.seed,
            attempts=config.judge_attempts,
            max_tokens=config.judge_max_tokens,
        )
        verdicts[source] = verdict.as_record()
    return {
        "emotion": prompt.emotion,
        "valence": prompt.valence,
        "reply": stored_text(reply),  # the model's own text; benchmark content stays out of the record
        "reply_chars": len(reply),
        "reply_words": len(reply.split()),
        "finish_reason": generation.finish_reason,
        "judge": {"self": ctx.judge_is_self, "identity": ctx.judge_identity},
        "verdicts": verdicts,
        "human_rater_ratings": dict(prompt.ratings),
    }


def summarize_records(records: list[dict[str, Any]], n_items: int, *, seed: int = 0) -> dict[str, Any]:
    if not records:
        return {"n_items": n_items, "n_rated": 0, "n_parsed": 0, "score": None, "score_name": SCORE_NAME}
    judge_self = bool(records[0]["judge"]["self"])
    sources = list(dict.fromkeys([HUMAN, MODEL, *(s for r in records for s in r["verdicts"])]))
    judged_rows = [
        RatedRow(
            r["emotion"],
            r["valence"],
            {s: v["rating"] for s, v in r["verdicts"].items() if v["rating"] is not None},
        )
        for r in records
    ]
    reference_sources = [s for s in SOURCE_NAMES if any(s in r["human_rater_ratings"] for r in records)]
    reference_rows = [RatedRow(r["emotion"], r["valence"], r["human_rater_ratings"]) for r in records]
    words = [r["reply_words"] for r in records]
    unparsed = {s: sum(1 for r in records if r["verdicts"].get(s, {}).get("rating", 0) is None) for s in sources}
    judged = analyse(judged_rows, sources) if any(MODEL in row.ratings for row in judged_rows) else None
    model_entry = judged["sources"][MODEL] if judged else {}
    summary: dict[str, Any] = {
        "n_items": n_items,
        "n_rated": len(records),
        "judge": {
            "self_judging": judge_self,
            "identity": records[0]["judge"]["identity"],
            **(
                {"warning": "NO --judge GIVEN: the model under test rated its own replies and the human replies"}
                if judge_self
                else {}
            ),
            "unparseable": unparsed,
        },
        "score": model_entry.get("pct_good"),  # the model's Good% by the judge
        "score_name": SCORE_NAME,
        "n_parsed": model_entry.get("n", 0),
        # Self-judged says itself in the status (report/validity.py): the note adds only what a judge's figure is.
        "headline_note": (
            None
            if judge_self
            else f"Good% by judge {records[0]['judge']['identity'].get('model')}; human replies "
            f"{judged['sources'][HUMAN]['pct_good'] if judged else None}%"
        ),
        "good_increase_pct_vs_human_by_judge": model_entry.get("good_increase_pct"),
        "length": {
            "mean_words": round(sum(words) / len(words), 2),
            "max_words": max(words),
            "share_over_97_words_pct": round(100.0 * sum(w > MAX_WORDS for w in words) / len(words), 2),
            "truncated_replies": sum(1 for r in records if r.get("finish_reason") == "length"),
            "human_reference_mean_words": 24.2,  # spec §3.1, whitespace words on the released human replies
        },
        "judged": judged,
        # The published human ratings of the released replies to the same prompts: a reference, not comparable
        # item by item with the judge's ratings above.
        "human_rater_reference": analyse(reference_rows, reference_sources, bootstrap=False),
        "protocol": {"generation_prompt": GENERATION_PROMPT_SOURCE, "rater_texts": RATER_TEXT_SOURCE},
        "headline_metric": "good_pct",
    }
    published_human = summary["human_rater_reference"]["sources"][HUMAN]["pct_good"]
    summary["metrics"] = _empathetic_metrics(records, published_human, seed)
    return summary


def _empathetic_metrics(records: list[dict[str, Any]], published_human: float | None, seed: int) -> dict[str, Any]:
    def ratings_of(source: str) -> dict[str, int]:
        return {
            str(r["item_id"]): r["verdicts"][source]["rating"]
            for r in records
            if r["verdicts"].get(source, {}).get("rating") is not None
        }

    model, human = ratings_of(MODEL), ratings_of(HUMAN)
    both = [item for item in model if item in human]
    judged_by = "the model itself" if records and records[0]["judge"]["self"] else "the judge"
    human_metric = mean_metric(
        f"human replies rated Good by {judged_by}",
        {item: 100.0 * (rating == GOOD) for item, rating in human.items()},
        unit="% Good",
        paired_test="mcnemar",
        seed=seed,
    )

    def relative_increase(indices: Any) -> float:
        good_model = sum(model[both[i]] == GOOD for i in indices)
        good_human = sum(human[both[i]] == GOOD for i in indices)
        return 100.0 * (good_model - good_human) / good_human if good_human else float("nan")

    return {
        "good_pct": mean_metric(
            f"replies rated Good by {judged_by}",
            {item: 100.0 * (rating == GOOD) for item, rating in model.items()},
            unit="% Good",
            paired_test="mcnemar",
            reference={
                "kind": "human_replies",
                "label": f"human replies, rated by {judged_by}",
                "value": human_metric["value"],
                "ci95": human_metric["ci95"],
                "published_raters": published_human,
                "published_raters_label": "human replies, rated by the study's crowd raters (same prompts)",
                "source": "Welivita & Pu 2024, the released human ratings (anuradha1992/llm-empathy-evaluation)",
            },
            seed=seed,
        ),
        "good_pct_human_replies": human_metric,
        "good_diff_pp": mean_metric(
            "Good% minus human replies' Good% (same judge, same prompts)",
            {item: 100.0 * (int(model[item] == GOOD) - int(human[item] == GOOD)) for item in both},
            unit="percentage points",
            paired_test="wilcoxon",
            reference={"kind": "no_change", "label": "as good as human replies", "value": 0.0},
            seed=seed,
        ),
        "good_increase_pct": metric(
            "relative increase in Good over human replies",
            relative_increase(range(len(both))) if both else None,
            bootstrap_interval(len(both), relative_increase, seed=seed) if both else None,
            n=len(both),
            method=bootstrap_method(seed=seed, unit="prompts"),
            unit="%",
            reference={"kind": "published_models", "label": "published (GPT-4 by crowd raters)", "value": 31.34},
        ),
        "mean_rating": mean_metric(
            "mean rating (1 Bad, 2 Okay, 3 Good)",
            {item: float(rating) for item, rating in model.items()},
            unit="1-3",
            paired_test="wilcoxon",
            seed=seed,
        ),
    }


class EmpatheticResponding(Instrument[EmpatheticConfig, Any]):
    name = "empathetic"
    order = 40  # position in the profile and in a run (part of the run's fingerprint)
    title = "Welivita & Pu 2024: replies to 2,000 EmpatheticDialogues prompts rated Good/Okay/Bad vs human replies"
    presets: ClassVar[dict[str, str]] = {
        "quick": "one prompt per emotion (32)",
        "paper": "all 2,000 prompts of the study",
        "full": "the same as paper",
    }
    options = OPTION_HELP
    limit_unit = "prompts (1 reply and its judge calls each)"  # what `--limit N` bounds
    chart_domain = GOOD_PCT_DOMAIN
    demo = DemoPreset(items=1, options={"judge_attempts": "1", "max_tokens": "96"})
    profile_position = 5  # last in the profile, as in every report so far
    profile_title = "Empathetic responding"
    profile_question = "Are its replies to people's emotional messages rated Good as often as human replies?"
    canned = staticmethod(plausible_answer)
    report_section = staticmethod(report_section)

    @staticmethod
    def item_value(fields: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, float | bool | None]:
        """The judge's rating of the model's reply (1 Bad, 2 Okay, 3 Good) and whether it is Good."""
        rating = ((fields.get("verdicts") or {}).get(MODEL) or {}).get("rating")
        return {"rating": rating, "good": None if rating is None else rating == GOOD}

    sample_line = staticmethod(sample_line)
    rescore = RescoreCommand(
        help="The paper's statistics from released ratings: Good %, Good increase, chi-square; by valence and emotion.",
        argument_help="A ratings CSV in the released Welivita & Pu format (or a subset)",
        run=lambda path: _rescore_file(path),
    )

    @property
    def judge_validation(self) -> JudgeValidation:
        """`empathybench judge validate`: the judge on released replies with human ratings (imported when asked)."""
        from empathybench.instruments.empathetic.validate import JUDGE_VALIDATION

        return JUDGE_VALIDATION

    # Every preset runs the same config; quick differs only in which prompts it takes (prepare).
    preset_configs: ClassVar[Mapping[str, EmpatheticConfig]] = {name: EmpatheticConfig() for name in presets}

    def configure(self, preset: str, options: Mapping[str, str]) -> EmpatheticConfig:
        """The config a preset and `--option`s give; every mistake is a one-line UserError."""
        return _config_from(dict(options))

    def prepare(
        self, config: EmpatheticConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark:
        prompts, fetched = load_released(allow_unverified=allow_unverified)
        if preset == "quick":
            prompts = one_per_emotion(prompts)
        if limit is not None:
            prompts = prompts[:limit]
        items = [BenchItem(p.dialog_id, p) for p in prompts]

        async def run_item(item: BenchItem, ctx: ItemContext) -> dict[str, Any]:
            return await run_prompt(config, item.payload, ctx)

        def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
            return summarize_records(records, len(items), seed=seed)

        return PreparedBenchmark(
            name=self.name,
            config={**asdict(config), "released": list(config.released), "preset": preset, "data_file": fetched.key},
            items=items,
            run_item=run_item,
            summarize=summarize,
            data_files=[fetched],
        )


def _rescore_file(path: Path) -> dict[str, Any]:
    """`empathybench rescore empathetic FILE`: a missing file is one line, as any unreadable one."""
    if not path.is_file():
        raise UserError(f"no such file: {path}")
    return rescore_ratings_file(path)
