"""Spiral-Bench on the typed protocol: presets, one conversation per item (user agent, model, judges), the summary.

An item is one opening of prompts/eval_prompts_v0.2.json: a conversation of `num_turns` turns between the model
under test and the user agent (the simulator role), then every chunk of assistant turns to the judge and the whole
transcript to the final judge. The summary is scoring.py's leaderboard row (score.py) with a 95% interval from
resampling conversations; it says whether the run can stand beside the published leaderboard (published.py).
"""

from collections.abc import Mapping
from dataclasses import asdict, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.engine.engine import ItemContext, stored_text, stored_value
from empathybench.errors import UserError
from empathybench.instruments.protocol import BenchItem, DemoPreset, Instrument, PreparedBenchmark, RescoreCommand
from empathybench.instruments.spiral import published
from empathybench.instruments.spiral.atlas import ATLAS as SPIRAL_ATLAS
from empathybench.instruments.spiral.canned import canned_answer
from empathybench.instruments.spiral.data import Opening, ScoringRules, SpiralProtocol
from empathybench.instruments.spiral.judge_compare import JUDGE_COMPARISON as SPIRAL_JUDGE_COMPARISON
from empathybench.instruments.spiral.report import SCORE_DOMAIN, report_section, sample_line, sample_text
from empathybench.instruments.spiral.score import Unit, unit_from_conversations
from empathybench.instruments.support import apply_options, bounded

RUN_ID = "run"  # the one run of a run directory, in upstream's terms (its units' run id)
PROMPT_FILE_KEY = "eval_prompts_v0.2.json"  # upstream's file key of the openings' conversations
QUICK_TURNS = 6
QUICK_OPENINGS_PER_CATEGORY = 1


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class SpiralConfig:
    """Everything that defines a Spiral-Bench run; recorded in run.json."""

    num_turns: int = field(default=published.PUBLISHED_TURNS, metadata=bounded(1, 100))  # main.py --num-turns
    openings_per_category: int | None = field(default=None, metadata=bounded(1, 100))  # None: every opening
    chunk_size: int = field(default=published.PUBLISHED_CHUNK_SIZE, metadata=bounded(1, 100))  # --judge-chunk-size
    injection_every_n: int = field(default=published.PUBLISHED_INJECTION_EVERY_N, metadata=bounded(0, 1000))
    judge_assistant_max_chars: int = field(default=20000, metadata=bounded(0, 1_000_000))  # main.py default
    attempts: int = field(default=7, metadata=bounded(1, 10))  # api_client: 7 tries of an empty reply
    # The demo's cut (labelled self-judged / self-simulated and never comparable): the model plays every role.
    self_judge: bool = False
    self_simulate: bool = False
    max_tokens: int | None = field(default=None, metadata=bounded(16, 16384))
    # A chunk whose judge gave no ratings after every ask: upstream stores an error stub and scores it as a chunk
    # with no incidences ("faithful"); "exclude" leaves it out of its conversation's means.
    judge_errors: str = "faithful"


OPTION_HELP = {
    "num_turns": f"turns of the model under test per conversation (paper {published.PUBLISHED_TURNS}, quick "
    f"{QUICK_TURNS})",
    "openings_per_category": "N openings of each of the 6 categories, in file order (empty: all 30)",
    "chunk_size": "assistant turns per chunk-judge call (upstream's default and the leaderboard's: 1)",
    "injection_every_n": "a user-agent move gets an injection with probability 1/N (upstream 5; 0: none)",
    "judge_assistant_max_chars": "cut each assistant reply at N characters in the chunk judge's prompt "
    "(20000; 0: uncut)",
    "attempts": "asks per move while a reply is empty (upstream's 7 tries)",
    "self_judge": "true | false: the model judges itself (the demo's cut: labelled self-judged, never comparable)",
    "self_simulate": "true | false: the model plays the user agent too (the demo's cut: self-simulated)",
    "max_tokens": "cap every call's token budget at N (the demo's cut; upstream 3072, judges 8096 and 2048)",
    "judge_errors": "faithful | exclude: a chunk the judge never rated counts as a chunk with no incidences, as "
    "upstream scores it (faithful), or is left out of its conversation's means (exclude)",
}
JUDGE_ERROR_MODES = ("faithful", "exclude")

PRESET_CONFIGS: dict[str, SpiralConfig] = {
    "quick": SpiralConfig(num_turns=QUICK_TURNS, openings_per_category=QUICK_OPENINGS_PER_CATEGORY),
    "paper": SpiralConfig(),
    "full": SpiralConfig(),
}


def chosen_openings(openings: tuple[Opening, ...], config: SpiralConfig) -> list[Opening]:
    """Every opening, or the first N of each category in file order (quick: one of each: a stratified cut)."""
    if config.openings_per_category is None:
        return list(openings)
    taken: dict[str, int] = {}
    chosen = []
    for opening in openings:
        if taken.get(opening.category, 0) < config.openings_per_category:
            taken[opening.category] = taken.get(opening.category, 0) + 1
            chosen.append(opening)
    return chosen


def recorded_config(config: SpiralConfig) -> dict[str, Any]:
    return asdict(config)


class Spiral(Instrument[SpiralConfig, Opening]):
    """Spiral-Bench: one conversation per opening with a simulated seeker (the user agent), judged chunk by chunk."""

    name = "spiral"
    order = 90  # after SAGE (80)
    title = (
        "Spiral-Bench: 20-turn conversations with a suggestible user agent; judged protective and risky behaviours, "
        "score 0-100 (needs --simulator and --judge)"
    )
    presets: ClassVar[dict[str, str]] = {
        "quick": f"one opening of each of the 6 categories, {QUICK_TURNS} turns (a stratified cut, not comparable)",
        "paper": f"all {published.PUBLISHED_OPENINGS} openings, {published.PUBLISHED_TURNS} turns, chunk size 1: "
        "the published protocol",
        "full": "the paper preset",
    }
    options = OPTION_HELP
    limit_unit = "openings (one conversation each, then a chunk-judge call per judged turn and a final-judge call)"
    preset_configs: ClassVar[Mapping[str, SpiralConfig]] = PRESET_CONFIGS
    chart_domain = SCORE_DOMAIN
    profile_position = 10  # after SAGE
    profile_title = "Spiral-Bench"
    profile_question = "Over a long conversation with a suggestible person, does it push back or spiral along?"
    canned = staticmethod(canned_answer)
    report_section = staticmethod(report_section)
    sample_line = staticmethod(sample_line)
    sample_text = staticmethod(sample_text)
    required_roles = frozenset({"judge", "simulator"})  # the chunk and final judges; the user agent
    in_default_run = False  # as its package (__init__.py) declares it for the registry, which checks the two agree
    # `--preset demo` shows it end to end on the embedded model: one opening, two turns at 48 tokens, the model as
    # its own user agent and judge (labelled self-simulated and self-judged). Not in the bare demo: its user-agent
    # and judge prompts are 2,300 tokens, about 26 s of the embedded model on 2 cores, and the bare demo takes 50 s
    # of its 60 s without it (bench/results/first_run.md).
    demo = DemoPreset(
        items=1,
        options={"self_judge": "true", "self_simulate": "true", "num_turns": "2", "max_tokens": "48"},
        self_judged=True,
        self_simulated=True,
        left_out_because="its user-agent and judge prompts alone take the embedded model about 25 s",
    )
    atlas = SPIRAL_ATLAS
    judge_comparison = SPIRAL_JUDGE_COMPARISON
    rescore = RescoreCommand(
        help="The leaderboard row of a released Spiral-Bench result file (res_v0.2/*.json), from its chunk and final "
        "judgements only, as scoring.py score_dir_to_leaderboard computes it.",
        argument_help="An upstream Spiral-Bench results file (res_v0.2/<model>.json)",
        run=lambda path: _rescore(path),
        render=lambda result, console: _print_row(result, console),
    )

    @staticmethod
    def item_value(fields: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, float | None]:
        """The conversation's own score 0-100 (the leaderboard formula on this conversation alone)."""
        value = fields.get("conversation_score_0_100")
        return {"score_0_100": float(value) if isinstance(value, int | float) else None}

    def configure(self, preset: str, options: Mapping[str, str]) -> SpiralConfig:
        return apply_options(
            PRESET_CONFIGS.get(preset, SpiralConfig()),
            options,
            benchmark=self.name,
            known=OPTION_HELP,
            choices={"judge_errors": JUDGE_ERROR_MODES},
        )

    def prepare(
        self, config: SpiralConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark[Opening]:
        from empathybench.instruments.spiral.data import load_protocol

        protocol, files = load_protocol(allow_unverified=allow_unverified)
        openings = chosen_openings(protocol.openings, config)
        if limit is not None:
            openings = openings[:limit]
        items = [BenchItem(opening.prompt_id, opening) for opening in openings]

        async def run_item(item: BenchItem[Opening], ctx: ItemContext) -> dict[str, Any]:
            return await run_conversation_item(protocol, config, item.payload, ctx, run_seed=seed)

        def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
            return summarize_records(protocol.scoring, config, len(items), records, seed=seed)

        return PreparedBenchmark(
            name=self.name,
            config={
                **recorded_config(config),
                "preset": preset,
                "openings": [opening.prompt_id for opening in openings],
                "published": {
                    "simulator": published.PUBLISHED_SIMULATOR,
                    "judge": published.PUBLISHED_JUDGE,
                    "openings": published.PUBLISHED_OPENINGS,
                    "turns": published.PUBLISHED_TURNS,
                },
            },
            items=items,
            run_item=run_item,
            summarize=summarize,
            data_files=files,
            summarize_failed=True,  # failed openings are named in the coverage, with the role that failed
        )


def _model_name(identity: Mapping[str, Any]) -> str:
    return str(identity.get("model") or "")


async def run_conversation_item(
    protocol: SpiralProtocol, config: SpiralConfig, opening: Opening, ctx: ItemContext, *, run_seed: int
) -> dict[str, Any]:
    """One opening: the conversation, its judgements, and the record (upstream's conversation fields and ours)."""
    from empathybench.instruments.spiral import dialogue, prompts
    from empathybench.instruments.spiral.score import leaderboard_row

    # run/ refuses a run without these roles earlier; no path plays them silently.
    if ctx.judge_is_self and not config.self_judge:
        raise UserError("Spiral-Bench needs --judge SPEC (the chunk and final judge)")
    if ctx.simulator_is_self and not config.self_simulate:
        raise UserError("Spiral-Bench needs --simulator SPEC (the user agent)")
    conversation = await dialogue.play_conversation(
        ctx,
        protocol,
        opening,
        dialogue.DialogueSettings(
            num_turns=config.num_turns,
            attempts=config.attempts,
            injection_every_n=config.injection_every_n,
            # upstream: f"{run_id}-{prompt_key}-{convo_index}"; the run's seed stands for the run id (--seed 1 draws
            # the injections of the released runs, whose run id is "1")
            injection_seed=prompts.injection_seed(str(run_seed), opening.prompt_id, 0),
            max_tokens=config.max_tokens,
            model_name=_model_name(ctx.model_identity),
            simulator_name=_model_name(ctx.simulator_identity),
        ),
    )
    judged = await dialogue.judge_conversation(
        ctx,
        protocol,
        conversation.transcript,
        dialogue.JudgeSettings(
            chunk_size=config.chunk_size,
            assistant_max_chars=config.judge_assistant_max_chars,
            attempts=config.attempts,
            max_tokens=config.max_tokens,
            judge_name=_model_name(ctx.judge_identity),
        ),
    )
    record: dict[str, Any] = {
        "prompt_id": opening.prompt_id,
        "category": opening.category,
        # every text bounded as the engine bounds a stored reply (the whole reply stays in the response cache)
        "transcript": stored_value(conversation.transcript),
        "injections_log": conversation.injections_log,
        "conversation_errors": conversation.errors,  # upstream's `errors` (the run store owns `error`)
        "n_turns": conversation.assistant_turns,
        "turns_asked": config.num_turns,
        "ended_early": bool(conversation.errors),
        "stop_reason": conversation.stop_reason,
        "judgements": stored_value(judged.chunks),
        "chunk_judge_asks": judged.chunk_asks,
        "final_judge_error": judged.final_error,
        "final_judge_text": None if judged.final_raw is None else stored_text(judged.final_raw),
        "final_judge_asks": judged.final_asks,
        "simulator_model": _model_name(ctx.simulator_identity),
        "simulator_self": ctx.simulator_is_self,
        "judge_model": _model_name(ctx.judge_identity),
        "judge_self": ctx.judge_is_self,
    }
    if judged.unrated:
        record["unrated_criteria"] = judged.unrated  # read as no incidence, as upstream
    if judged.dropped:
        record["dropped_keys"] = judged.dropped  # no criterion of the rubric: never a column
    if judged.reasked:
        record["reasked_chunks"] = judged.reasked  # rated only when asked again (upstream asks once)
    if judged.final_reasked:
        record["final_judge_reasked"] = True
    if judged.final_judgement is not None:
        record["final_judgement"] = judged.final_judgement  # present only when the final judge rated all three
    unit = unit_from_conversations(
        protocol.scoring, RUN_ID, opening.prompt_id, [record], exclude_errors=config.judge_errors == "exclude"
    )
    record["chunk_metrics"] = unit.chunk_metrics
    record["n_chunks"] = unit.n_chunks
    record["n_chunk_errors"] = unit.n_chunk_errors
    try:
        record["conversation_score_0_100"] = round(leaderboard_row(protocol.scoring, [unit], "").score_0_100, 4)
    except ValueError:  # no chunk could be judged
        record["conversation_score_0_100"] = None
    return record


def _unit_of(rules: ScoringRules, record: Mapping[str, Any], config: SpiralConfig) -> Unit:
    return unit_from_conversations(
        rules, RUN_ID, str(record.get("prompt_id")), [dict(record)], exclude_errors=config.judge_errors == "exclude"
    )


def summarize_records(
    rules: ScoringRules, config: SpiralConfig, n_items: int, records: list[dict[str, Any]], *, seed: int = 0
) -> dict[str, Any]:
    from empathybench.instruments.spiral.summary import summarize

    ok = [r for r in records if r.get("status", "ok") == "ok"]
    return summarize(
        rules, recorded_config(config), n_items, records, [_unit_of(rules, r, config) for r in ok], seed=seed
    )


def _print_row(result: Any, console: Any) -> None:
    from empathybench.instruments.spiral.rescore import print_row

    print_row(result, console)


def _rescore(path: Path) -> dict[str, Any]:
    from empathybench.instruments.spiral.rescore import rescore_file

    return rescore_file(path)
