"""SAGE (Sentient Agent as a Judge) on the typed protocol: presets, one conversation per person, the run summary.

Each item is one simulated person; its conversation is played by the shared conversation runner
(instruments/conversation.py) with the plan of dialogue.py, the simulated person answered by the `simulator` role.
"""

from collections.abc import Mapping, Sequence
from dataclasses import asdict, field
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.engine.engine import ItemContext
from empathybench.instruments.comparability import (
    ROLE_NAMES,
    coverage,
    failed_item,
    label,
    role_names,
    self_played,
    settings_differences,
)
from empathybench.instruments.conversation import run_conversation
from empathybench.instruments.protocol import (
    BenchItem,
    DemoPreset,
    Instrument,
    PreparedBenchmark,
    ReportSection,
    RescoreCommand,
)
from empathybench.instruments.sage.atlas import ATLAS as SAGE_ATLAS
from empathybench.instruments.sage.canned import expected_output_tokens, plausible_answer
from empathybench.instruments.sage.data import N_PEOPLE, Person, UpstreamProtocol
from empathybench.instruments.sage.dialogue import PlanSettings, conversation_fields, sage_plan
from empathybench.instruments.sage.report import report_section, sample_line, sample_text, trajectory_chart
from empathybench.instruments.sage.score import (
    FAILURE_STATE,
    PROVIDER_DEFAULTS,
    PUBLISHED_SIMULATOR,
    SUCCESS_STATE,
    figures,
    published_call_body,
    simulator_differences,
    tally,
)
from empathybench.instruments.support import (
    MAX_ATTEMPTS,
    MAX_TEMPERATURE,
    MAX_TOKENS_LIMIT,
    apply_options,
    bounded,
    evenly_spread,
    mean_metric,
)
from empathybench.models.base import Sampling

PAPER_ROUNDS = 10  # SAGE/test_npc.py: `if turns > 10: break` (checked against the fetched file by prepare)
QUICK_PER_TASK = 2  # quick: 2 people of each of the 8 tasks (16 people)
QUICK_ROUNDS = 5

OPTION_HELP = {
    "rounds": f"rounds per conversation (paper {PAPER_ROUNDS}; each round the person speaks and the model replies)",
    "people_per_task": "people per task type, spread evenly over the file (empty: all 100; quick 2)",
    "attempts": "asks of the simulator's analysis or line before the conversation is recorded as failed (default 3)",
    "temperature": "the model under test's temperature (default 1.0: upstream sends none, the providers' default)",
    "simulator_temperature": "the simulator's temperature (default 1.0: upstream sends none)",
    "max_tokens": "the model under test's token budget per reply (default 4096; upstream sends none)",
    "simulator_max_tokens": "the simulator's token budget per call (default 4096; upstream sends none)",
}


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class SageConfig:
    """Everything that defines a SAGE run; recorded in run.json."""

    rounds: int = field(default=PAPER_ROUNDS, metadata=bounded(1, 50))
    people_per_task: int | None = field(default=None, metadata=bounded(1, N_PEOPLE))
    attempts: int = field(default=3, metadata=bounded(1, MAX_ATTEMPTS))
    # Upstream's call_llm sends no sampling settings: the providers' defaults (temperature 1 at OpenAI, Anthropic
    # and DeepSeek; no top_p); the budgets are ours (Anthropic needs one; long enough for long replies).
    temperature: float = field(default=1.0, metadata=bounded(0, MAX_TEMPERATURE))
    simulator_temperature: float = field(default=1.0, metadata=bounded(0, MAX_TEMPERATURE))
    max_tokens: int = field(default=4096, metadata=bounded(16, MAX_TOKENS_LIMIT))
    simulator_max_tokens: int = field(default=4096, metadata=bounded(16, MAX_TOKENS_LIMIT))

    def plan_settings(self, seed: int) -> PlanSettings:
        return PlanSettings(
            rounds=self.rounds,
            attempts=self.attempts,
            model_sampling=Sampling(temperature=self.temperature, max_tokens=self.max_tokens, top_p=None, seed=seed),
            simulator_sampling=Sampling(
                temperature=self.simulator_temperature, max_tokens=self.simulator_max_tokens, top_p=None, seed=seed
            ),
        )


PRESET_CONFIGS: dict[str, SageConfig] = {
    "quick": SageConfig(rounds=QUICK_ROUNDS, people_per_task=QUICK_PER_TASK),
    "paper": SageConfig(),
    "full": SageConfig(),
}


def choose_people(people: Sequence[Person], per_task: int | None) -> list[Person]:
    """All people in file order, or `per_task` of each task type spread evenly over its people (stratified by the
    task, the person's hidden need; the same people on every machine), in file order."""
    if per_task is None:
        return list(people)
    by_task: dict[str, list[Person]] = {}
    for person in people:
        by_task.setdefault(person.task, []).append(person)
    chosen = {p.number for group in by_task.values() for p in evenly_spread(group, per_task)}
    return [person for person in people if person.number in chosen]


class Sage(Instrument[SageConfig, Person]):
    """SAGE: one conversation per simulated person, played by the shared conversation runner."""

    name = "sage"
    order = 80
    title = (
        "SAGE: a simulated person whose emotion moves with each reply, 100 people, 10 rounds; "
        "Sentient score = mean final emotion (needs --simulator)"
    )
    presets: ClassVar[dict[str, str]] = {
        "quick": f"{QUICK_PER_TASK} people of each of the 8 task types (16), {QUICK_ROUNDS} rounds: indicative only",
        "paper": f"all {N_PEOPLE} people, {PAPER_ROUNDS} rounds, as SAGE/test_npc.py (the published protocol)",
        "full": f"all {N_PEOPLE} people, {PAPER_ROUNDS} rounds (the same as paper)",
    }
    options = OPTION_HELP
    limit_unit = "people (a conversation of up to 10 rounds: 1 model call and 2 simulator calls per round)"
    preset_configs: ClassVar[Mapping[str, SageConfig]] = PRESET_CONFIGS
    chart_domain = (0.0, 100.0)
    profile_position = 9  # after EQ-Bench 3 and ToMBench
    profile_title = "SAGE"
    profile_question = "How does a simulated person feel after talking with it?"
    canned = staticmethod(plausible_answer)
    expected_output_tokens = staticmethod(expected_output_tokens)  # for --dry-run: real answers are long free text
    report_section = staticmethod(report_section)
    sample_line = staticmethod(sample_line)
    sample_text = staticmethod(sample_text)
    required_roles = frozenset({"simulator"})  # refused without --simulator, except in the demo (self-simulated)
    in_default_run = False  # as its package (__init__.py) declares it for the registry, which checks the two agree
    # The demo, bare or `--preset demo`: one person, the first round only (the preset first line and the model's
    # reply, one call). The person is never asked: the simulator's first analysis prompt is about 5,600 tokens of the
    # embedded model's tokenizer, over its 4,096-token context.
    demo = DemoPreset(items=1, options={"rounds": "1", "max_tokens": "64"}, self_simulated=True, in_bare_demo=True)
    atlas = SAGE_ATLAS
    rescore = RescoreCommand(
        help="The README leaderboard's Sentient score, success and failure counts from an upstream result file.",
        argument_help="An upstream SAGE result file (SAGE/dataset/<simulator>/<model>_result.jsonl)",
        run=lambda path: _rescore(path),
        render=lambda result, console: _render(result, console),
    )

    def comparison_section(self, results: Sequence[tuple[str, Mapping[str, Any]]]) -> ReportSection:
        """The runs' trajectories side by side, each run's mean bold."""
        return ReportSection(charts=(trajectory_chart(list(results)),))

    @staticmethod
    def item_value(fields: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, float | None]:
        """The person's final emotion (None for a failed conversation)."""
        value = fields.get("final_emotion")
        return {"final_emotion": float(value) if isinstance(value, int | float) else None}

    def configure(self, preset: str, options: Mapping[str, str]) -> SageConfig:
        return apply_options(PRESET_CONFIGS.get(preset, SageConfig()), options, benchmark=self.name, known=OPTION_HELP)

    def prepare(
        self, config: SageConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark[Person]:
        return prepare_sage(config, preset, limit=limit, seed=seed, allow_unverified=allow_unverified)


def _rescore(path: Any) -> dict[str, Any]:
    from empathybench.instruments.sage.rescore import rescore_file

    return rescore_file(path)


def _render(result: Any, console: Any) -> None:
    from empathybench.instruments.sage.rescore import render

    render(result, console)


def prepare_sage(
    config: SageConfig, preset: str, *, limit: int | None, seed: int, allow_unverified: bool
) -> PreparedBenchmark[Person]:
    from empathybench.errors import DataError
    from empathybench.instruments.sage.data import load

    people, protocol, files = load(allow_unverified=allow_unverified)
    if protocol.max_rounds != PAPER_ROUNDS:
        raise DataError(f"SAGE/test_npc.py plays {protocol.max_rounds} rounds; this instrument expects {PAPER_ROUNDS}")
    chosen = choose_people(people, config.people_per_task)
    if limit is not None:
        chosen = chosen[:limit]
    items = [BenchItem(str(person.number), person) for person in chosen]

    async def run_item(item: BenchItem[Person], ctx: ItemContext) -> dict[str, Any]:
        return await run_person(config, protocol, item.payload, ctx)

    def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
        return summarize_records(config, len(items), records, seed=seed)

    return PreparedBenchmark(
        name="sage",
        config={**asdict(config), "preset": preset, "people": [person.number for person in chosen]},
        items=items,
        run_item=run_item,
        summarize=summarize,
        data_files=files,
        summarize_failed=True,
    )


async def run_person(
    config: SageConfig, protocol: UpstreamProtocol, person: Person, ctx: ItemContext
) -> dict[str, Any]:
    """One person's conversation; a simulator reply that cannot be read after `attempts` asks ends it as failed
    (recorded and counted); a call that cannot be answered fails the item (asked again when the run continues)."""
    plan = sage_plan(protocol, person, config.plan_settings(ctx.seed))
    result = await run_conversation(plan, ctx)
    identity = ctx.simulator_identity
    return {
        "person_id": person.id,
        "character": person.character,
        "task": person.task,
        **conversation_fields(result),
        "simulator": {
            "provider": identity.get("provider"),
            "model": identity.get("model"),
            "self_simulated": ctx.simulator_is_self,
        },
    }


def person_unscored(record: dict[str, Any], attempts: int) -> str | None:
    """Why a person's conversation has no final emotion (None: it has one)."""
    if record.get("status", "ok") != "ok":
        return failed_item(record)
    if record.get("conversation_status") != "completed":
        failure = record.get("failure") if isinstance(record.get("failure"), dict) else {}
        role = str(failure.get("role") or "simulator")
        return f"failed ({ROLE_NAMES.get(role, role)}'s reply unreadable after {failure.get('asks', attempts)} asks)"
    return None


def _differences(config: SageConfig, records: list[dict[str, Any]], simulator: str, self_simulated: bool) -> list[str]:
    """How the run differs from the published one: the simulator, the rounds, what each call sent."""
    differences = simulator_differences(simulator, self_simulated=self_simulated)
    if config.rounds != PAPER_ROUNDS:
        differences.append(f"{config.rounds} {'round' if config.rounds == 1 else 'rounds'}, not {PAPER_ROUNDS}")
    differences += settings_differences(records, published_call_body, budget=False, provider_defaults=PROVIDER_DEFAULTS)
    return differences


def summarize_records(
    config: SageConfig, n_items: int, records: list[dict[str, Any]], *, seed: int = 0
) -> dict[str, Any]:
    """The summary of every record (failed items too: their roles name the models given)."""
    answered = [r for r in records if r.get("status", "ok") == "ok"]
    completed = [r for r in answered if r.get("conversation_status") == "completed"]
    failed = [r for r in records if r.get("conversation_status") != "completed"]
    result = figures([r["final_emotion"] for r in completed], [r["final_state"] for r in completed])
    simulators = {str((r.get("simulator") or {}).get("model") or "") for r in answered} - {""}
    simulator = role_names(records).get("simulator") or ", ".join(sorted(simulators))
    self_simulated = self_played(records, "simulator", lambda r: bool((r.get("simulator") or {}).get("self_simulated")))
    covered = coverage(N_PEOPLE, "people", [person_unscored(r, config.attempts) for r in records], n_in_run=n_items)
    comparable, label_line = label(
        f"simulator {simulator or 'unknown'}", _differences(config, records, simulator, self_simulated), covered
    )
    turns = [int(r.get("rounds") or 0) for r in completed]
    summary: dict[str, Any] = {
        "score": result["score_exact"],
        "score_name": "Sentient score: the mean final emotion (0-100) of the simulated people",
        "n_items": n_items,
        "n_answered": len(answered),
        "n_parsed": len(completed),
        "n_completed": len(completed),
        "n_failed_conversations": len(failed),
        "failed_conversations": {str(r["item_id"]): r.get("stop_reason") or r.get("error") for r in failed},
        "simulator_asks": sum(int(r.get("simulator_asks") or 0) for r in answered),
        "simulator_reasks": sum(int(r.get("simulator_reasks") or 0) for r in answered),
        "success": result["success"],
        "failure": result["failure"],
        "states": result["states"],
        "published_rounding": result["score"],  # the README's one decimal
        "mean_turns": round(sum(turns) / len(turns), 4) if turns else None,
        "rounds_limit": config.rounds,
        "stop_reasons": tally([str(r.get("stop_reason")) for r in completed]),
        "trajectories": {str(r["item_id"]): list(r.get("trajectory") or []) for r in completed},
        "simulator": {
            "models": sorted(simulators or ({simulator} if simulator else set())),
            "self_simulated": self_simulated,
        },
        "published_simulator": PUBLISHED_SIMULATOR,
        "comparable_with_published": comparable,
        "comparability": label_line,
        "coverage": covered.as_dict(),
        "config": asdict(config),
        "headline_metric": "sentient_score",
    }
    metrics: dict[str, Any] = {}
    if completed:
        by_item = {str(r["item_id"]): float(r["final_emotion"]) for r in completed}
        metrics["sentient_score"] = mean_metric(
            "Sentient score",
            by_item,
            unit="mean final emotion (0-100)",
            paired_test="paired_t",
            reference={
                "kind": "published",
                "label": f"published leaderboard (simulator {PUBLISHED_SIMULATOR})",
                "comparable": comparable,
            },
            seed=seed,
        )
        metrics["success_share"] = mean_metric(
            "success (Emotion-S)",
            {str(r["item_id"]): float(r["final_state"] == SUCCESS_STATE) for r in completed},
            scale=100.0,
            unit="% of people",
            paired_test="mcnemar",
            seed=seed,
        )
        metrics["failure_share"] = mean_metric(
            "failure (Emotion-F)",
            {str(r["item_id"]): float(r["final_state"] == FAILURE_STATE) for r in completed},
            scale=100.0,
            unit="% of people",
            higher_is_better=False,
            paired_test="mcnemar",
            seed=seed,
        )
        metrics["mean_turns"] = mean_metric(
            "mean turns (rounds)",
            {str(r["item_id"]): float(r.get("rounds") or 0) for r in completed},
            unit="rounds",
            higher_is_better=None,
            seed=seed,
        )
    summary["metrics"] = metrics
    # The label once: the terminal and the report show the headline note (nowhere else repeats it).
    notes = [label_line]
    if not completed:
        notes.append("no conversation was completed")
    elif failed:
        notes.append(f"the score is over the {len(completed)} completed conversations")
    summary["headline_note"] = "; ".join(notes)
    if self_simulated:  # read by every report as self-simulated (like self-judged)
        summary["self_simulated"] = True
    return summary
