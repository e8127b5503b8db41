"""MindEval on the typed protocol: presets, one judged conversation per profile, the run summary.

Each item is one of the 50 member profiles: the model under test is the clinician, the `simulator` role the member
(dialogue.py, on the shared conversation runner), then the `judge` role rates the whole conversation on five
criteria (1-6). The headline is the mean of the judge's Overall score over the conversations.
"""

from collections.abc import Mapping, Sequence
from dataclasses import asdict, field, replace
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from empathybench.engine.engine import ItemContext, stored_text
from empathybench.instruments.comparability import coverage, failed_item, label, role_names
from empathybench.instruments.conversation import run_conversation
from empathybench.instruments.mindeval import published
from empathybench.instruments.mindeval.canned import expected_output_tokens, plausible_answer
from empathybench.instruments.mindeval.data import (
    N_PROFILES,
    PAPER_CLINICIAN_VERSION,
    PAPER_JUDGE_VERSION,
    PAPER_MEMBER_VERSION,
    Profile,
    Templates,
    read_custom_template,
    render,
)
from empathybench.instruments.mindeval.dialogue import (
    PlanSettings,
    interaction,
    judge_conversation,
    judge_prompt,
    mindeval_plan,
)
from empathybench.instruments.mindeval.parse import CRITERIA, OVERALL, SHORT
from empathybench.instruments.mindeval.report import (
    comparison_section,
    report_section,
    sample_line,
    sample_text,
)
from empathybench.instruments.protocol import (
    BenchItem,
    DemoPreset,
    Instrument,
    PreparedBenchmark,
    ReportSection,
    RescoreCommand,
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

QUICK_PROFILES = 10
QUICK_ROUNDS = 5
CLINICIAN_TEMPLATES = (PAPER_CLINICIAN_VERSION, "v0_1_four_sentence_cap")  # upstream's `custom` is a placeholder
JUDGE_TEMPLATES = (PAPER_JUDGE_VERSION, "v0_1_w_length_guidelines")
MISSING_MODES = ("default", "strict")
CUSTOM = "custom"  # the recorded clinician_template of a run with --option clinician_template_file=PATH

OPTION_HELP = {
    "rounds": f"rounds per conversation: the clinician speaks, then the member (paper {published.PAPER_ROUNDS})",
    "profiles": f"profiles spread evenly over the {N_PROFILES} (empty: all; quick {QUICK_PROFILES})",
    "clinician_template": f"upstream's clinician template: {' or '.join(CLINICIAN_TEMPLATES)} (paper v0_1)",
    "clinician_template_file": "a custom clinician template (string.Template, $name ...) using only the 18 profile "
    "fields of v0_1; any other field is refused",
    "judge_template": f"upstream's judge template: {' or '.join(JUDGE_TEMPLATES)} (paper v0_1)",
    "missing_criterion": "default: a criterion the judge leaves out is 3, counted (upstream); strict: the judge is "
    "asked again, then the conversation is not scored",
    "judge_attempts": "asks of the judge in strict mode (default 3)",
    "temperature": "the clinician's temperature (default 1.0: upstream copies the member's, unset, the providers' "
    "default; none is sent with thinking)",
    "max_tokens": "the clinician's token budget per reply (default 16000, as upstream's member and judge)",
    "member_temperature": "the member's temperature (default 1.0: upstream sends none, the providers' default)",
    "member_max_tokens": f"the member's token budget (published {published.PUBLISHED_BUDGET})",
    "judge_temperature": "the judge's temperature (default 1.0: upstream sends none, the providers' default)",
    "judge_max_tokens": f"the judge's token budget (published {published.PUBLISHED_BUDGET})",
}


@pydantic_dataclass(frozen=True)  # validated (types, bounded ranges), with a JSON schema
class MindEvalConfig:
    """Everything that defines a MindEval run; recorded in run.json."""

    rounds: int = field(default=published.PAPER_ROUNDS, metadata=bounded(1, 50))
    profiles: int | None = field(default=None, metadata=bounded(1, N_PROFILES))
    clinician_template: str = PAPER_CLINICIAN_VERSION
    clinician_template_file: str | None = None
    judge_template: str = PAPER_JUDGE_VERSION
    missing_criterion: str = "default"
    judge_attempts: int = field(default=3, metadata=bounded(1, MAX_ATTEMPTS))
    # Upstream pins no sampling but the budget (max_completion_tokens 16000) and reasoning effort (the protocol's
    # model arguments, published.py, within each role's budget option below; the user's -M / --simulator-arg /
    # --judge-arg win); temperature is the providers' default, 1.
    temperature: float = field(default=1.0, metadata=bounded(0, MAX_TEMPERATURE))
    max_tokens: int = field(default=published.PUBLISHED_BUDGET, metadata=bounded(16, MAX_TOKENS_LIMIT))
    member_temperature: float = field(default=1.0, metadata=bounded(0, MAX_TEMPERATURE))
    member_max_tokens: int = field(default=published.PUBLISHED_BUDGET, metadata=bounded(16, MAX_TOKENS_LIMIT))
    judge_temperature: float = field(default=1.0, metadata=bounded(0, MAX_TEMPERATURE))
    judge_max_tokens: int = field(default=published.PUBLISHED_BUDGET, metadata=bounded(16, MAX_TOKENS_LIMIT))

    @property
    def template_name(self) -> str:
        return CUSTOM if self.clinician_template_file else self.clinician_template


PRESET_CONFIGS: dict[str, MindEvalConfig] = {
    "quick": MindEvalConfig(rounds=QUICK_ROUNDS, profiles=QUICK_PROFILES),
    "paper": MindEvalConfig(),
    "full": MindEvalConfig(),
}


def _sampling(temperature: float, max_tokens: int) -> Sampling:
    # Upstream sends neither top_p nor a seed.
    return Sampling(temperature=temperature, max_tokens=max_tokens, top_p=None, seed=None)


def _custom_template(config: MindEvalConfig, value: str) -> MindEvalConfig:
    if not value.strip():
        return replace(config, clinician_template_file=None)
    read_custom_template(value)  # refused here in one line if it uses a field other than the 18
    return replace(config, clinician_template_file=value)


class MindEval(Instrument[MindEvalConfig, Profile]):
    """MindEval: the model as the clinician in a check-in with a simulated member, rated by a judge."""

    name = "mindeval"
    order = 95  # after Spiral-Bench (90)
    title = (
        "MindEval: 10-round text check-ins with a simulated patient (50 profiles), a judge rates 5 criteria 1-6; "
        "mean Overall score (needs --simulator and --judge)"
    )
    presets: ClassVar[dict[str, str]] = {
        "quick": f"{QUICK_PROFILES} profiles spread over the {N_PROFILES}, {QUICK_ROUNDS} rounds: indicative only",
        "paper": f"all {N_PROFILES} profiles, {published.PAPER_ROUNDS} rounds, templates v0_1 / v0_2 / v0_1: the "
        "published protocol",
        "full": "the paper preset",
    }
    options = OPTION_HELP
    limit_unit = "profiles (a conversation of 10 rounds: 10 model and 10 simulator calls, then 1 judge call)"
    preset_configs: ClassVar[Mapping[str, MindEvalConfig]] = PRESET_CONFIGS
    chart_domain = (1.0, 6.0)
    profile_title = "MindEval"
    profile_question = "As a text-chat clinician with a simulated patient, how does a judge rate its care (1-6)?"
    canned = staticmethod(plausible_answer)
    expected_output_tokens = staticmethod(expected_output_tokens)
    report_section = staticmethod(report_section)
    sample_line = staticmethod(sample_line)
    sample_text = staticmethod(sample_text)
    required_roles = frozenset({"judge", "simulator"})
    in_default_run = False  # as its package (__init__.py) declares it for the registry, which checks the two agree
    demo = DemoPreset(
        items=1,
        options={"rounds": "1", "max_tokens": "48", "member_max_tokens": "48", "judge_max_tokens": "48"},
        self_judged=True,
        self_simulated=True,
        left_out_because="its judge prompt alone is about 22,000 tokens, beyond the embedded model's context",
    )

    rescore = RescoreCommand(
        help="The README's means (five criteria and Overall, with 95% intervals) of a judgments file from upstream's "
        "scripts, each judgment parsed again and the criteria the judge left out counted.",
        argument_help="A judgments file written by upstream's mindeval/scripts/generate_judgments.py (JSON lines)",
        run=lambda path: _rescore(path),
        render=lambda result, console: _render(result, console),
    )

    @property
    def judge_validation(self) -> Any:
        """`empathybench judge validate --bench mindeval`: the judge on the 55 expert-rated conversations."""
        from empathybench.instruments.mindeval.validate import JUDGE_VALIDATION

        return JUDGE_VALIDATION

    def comparison_section(self, results: Sequence[tuple[str, Mapping[str, Any]]]) -> ReportSection | None:
        return comparison_section(results)

    @staticmethod
    def item_value(fields: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, float | None]:
        """The judge's Overall score of the conversation (None: not scored)."""
        value = fields.get("overall")
        return {"overall": float(value) if isinstance(value, int | float) else None}

    def configure(self, preset: str, options: Mapping[str, str]) -> MindEvalConfig:
        return apply_options(
            PRESET_CONFIGS.get(preset, MindEvalConfig()),
            options,
            benchmark=self.name,
            known=OPTION_HELP,
            choices={
                "clinician_template": CLINICIAN_TEMPLATES,
                "judge_template": JUDGE_TEMPLATES,
                "missing_criterion": MISSING_MODES,
            },
            custom={"clinician_template_file": _custom_template},
        )

    def prepare(
        self, config: MindEvalConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark[Profile]:
        from empathybench.instruments.mindeval.data import load

        profiles, templates, files = load(allow_unverified=allow_unverified)
        clinician = (
            read_custom_template(config.clinician_template_file)
            if config.clinician_template_file
            else templates.clinician[config.clinician_template]
        )
        chosen = evenly_spread(profiles, config.profiles) if config.profiles is not None else list(profiles)
        if limit is not None:
            chosen = chosen[:limit]
        items = [BenchItem(str(profile.number), profile) for profile in chosen]

        async def run_item(item: BenchItem[Profile], ctx: ItemContext) -> dict[str, Any]:
            return await run_profile(config, templates, clinician, item.payload, ctx)

        def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
            return summarize_records(config, len(items), records, seed=seed)

        return PreparedBenchmark(
            name=self.name,
            config={
                **asdict(config),
                "clinician_template": config.template_name,
                "member_template": PAPER_MEMBER_VERSION,
                "preset": preset,
                "profiles_run": [profile.number for profile in chosen],
                **({"clinician_template_text": clinician} if config.clinician_template_file else {}),
            },
            items=items,
            run_item=run_item,
            summarize=summarize,
            data_files=files,
            summarize_failed=True,
        )


def _rescore(path: Any) -> dict[str, Any]:
    from empathybench.instruments.mindeval.rescore import rescore_file

    return rescore_file(path)


def _render(result: Any, console: Any) -> None:
    from empathybench.instruments.mindeval.rescore import render

    render(result, console)


def _identity(identity: Mapping[str, Any], is_self: bool) -> dict[str, Any]:
    return {"provider": identity.get("provider"), "model": identity.get("model"), "self": is_self}


async def run_profile(
    config: MindEvalConfig, templates: Templates, clinician_template: str, profile: Profile, ctx: ItemContext
) -> dict[str, Any]:
    """One profile: the conversation and the judge's rating. The member and the judge get the published settings
    when they are the published models (published.request_sampling). A call that cannot be answered fails the item
    (asked again when the run continues, its finished calls from the cache)."""
    values = profile.values
    member_placeholder = ctx.simulator_identity.get("provider") == "anthropic"
    member_sampling = _sampling(config.member_temperature, config.member_max_tokens)
    judge_sampling = _sampling(config.judge_temperature, config.judge_max_tokens)
    plan = mindeval_plan(
        PlanSettings(
            rounds=config.rounds,
            clinician_system=render(clinician_template, values),
            member_system=render(templates.member[PAPER_MEMBER_VERSION], values),
            clinician_sampling=published.clinician_sampling(
                ctx.model_identity, _sampling(config.temperature, config.max_tokens)
            ),
            member_sampling=published.request_sampling("simulator", ctx.simulator_identity, member_sampling),
            member_placeholder=member_placeholder,
        )
    )
    result = await run_conversation(plan, ctx)
    messages = interaction(result)
    outcome = await judge_conversation(
        ctx,
        judge_prompt(templates.judge[config.judge_template], messages, values),
        published.request_sampling("judge", ctx.judge_identity, judge_sampling),
        strict=config.missing_criterion == "strict",
        attempts=config.judge_attempts,
    )
    judgment = outcome.judgment
    record = result.as_record()
    fields: dict[str, Any] = {
        "profile": profile.number,
        "depressive_symptoms": profile.severity[0],
        "anxious_symptoms": profile.severity[1],
        "conversation_status": record["status"],
        "rounds": sum(1 for turn in result.turns if turn.speaker == "model"),
        # as the judge read it, each text bounded as a stored reply is (the whole reply is in the response cache)
        "interaction": [{"role": m["role"], "content": stored_text(m["content"])} for m in messages],
        "turns": record["turns"],
        "scores": None if judgment is None else {name: judgment.scores[name] for name in (*CRITERIA, OVERALL)},
        "overall": None if judgment is None else judgment.overall,
        "missing_criteria": [] if judgment is None else list(judgment.missing),
        "judge_asks": outcome.asks,
        "member_placeholder": member_placeholder,
        "member": _identity(ctx.simulator_identity, ctx.simulator_is_self),
        "judge": _identity(ctx.judge_identity, ctx.judge_is_self),
    }
    if outcome.error is not None:
        fields["judge_error"] = outcome.error
    return fields


def unscored_reason(record: Mapping[str, Any]) -> str | None:
    """Why a profile's conversation has no score (None: it has one)."""
    if record.get("status", "ok") != "ok":
        return failed_item(record)
    if record.get("judge_error"):
        return "not scored (the judge left out a criterion in every ask)"
    return None


def summarize_records(
    config: MindEvalConfig, n_items: int, records: list[dict[str, Any]], *, seed: int = 0
) -> dict[str, Any]:
    """The summary of every record (failed items too: they say why a profile is unscored and whom the roles were)."""
    answered = [r for r in records if r.get("status", "ok") == "ok"]
    scored = [r for r in answered if isinstance(r.get("overall"), int | float)]
    given = role_names(records)
    self_played = {
        "simulator": any((r.get("member") or {}).get("self") for r in answered) or "simulator" not in given,
        "judge": any((r.get("judge") or {}).get("self") for r in answered) or "judge" not in given,
    }
    names = {role: given.get(role) or given.get("model", "") for role in ("simulator", "judge")}
    covered = coverage(N_PROFILES, "profiles", [unscored_reason(r) for r in records], n_in_run=n_items)
    protocol = {
        "rounds": config.rounds,
        "clinician_template": config.template_name,
        "judge_template": config.judge_template,
        "missing_criterion": config.missing_criterion,
    }
    differences = published.role_differences(names, self_played) + published.protocol_differences(protocol)
    given_line, sent_differences = published.sent_differences(records, {**names, "model": given.get("model", "")})
    comparable, label_line = label(given_line, differences + sent_differences, covered, "the published protocol")
    missing = {name: sum(1 for r in scored if name in (r.get("missing_criteria") or ())) for name in CRITERIA}
    means = {
        name: (sum(float(r["scores"][name]) for r in scored) / len(scored) if scored else None)
        for name in (*CRITERIA, OVERALL)
    }
    judges = [r.get("judge") or {} for r in answered]
    summary: dict[str, Any] = {
        "score": round(means[OVERALL], 6) if scored else None,
        "score_name": "MindEval Overall score: the judge's mean of the five criteria (1-6), mean over conversations",
        "n_items": n_items,
        "n_answered": len(answered),
        "n_parsed": len(scored),
        "n_scored": len(scored),
        "n_judge_errors": sum(1 for r in answered if r.get("judge_error")),
        "criterion_means": {name: None if v is None else round(v, 6) for name, v in means.items()},
        "missing_criteria": missing,
        "n_missing_criteria": sum(missing.values()),
        "n_judge_reasks": sum(int(r.get("judge_asks") or 1) - 1 for r in answered),
        "overall_by_profile": {str(r["item_id"]): float(r["overall"]) for r in scored},
        "severity": {str(r["item_id"]): [r.get("depressive_symptoms"), r.get("anxious_symptoms")] for r in scored},
        "rounds_limit": config.rounds,
        "member": {"model": names["simulator"] or "unknown", "self": self_played["simulator"]},
        # read by every report: self-judged (validity) and the judge's model (a comparison warns when judges differ)
        "judge": {
            "self_judging": self_played["judge"],
            "identity": {k: v for k, v in (judges[0] if judges else {}).items() if k != "self"},
        },
        "member_placeholder": any(r.get("member_placeholder") for r in answered),
        "published": {
            "member": published.PUBLISHED_MEMBER,
            "judge": published.PUBLISHED_JUDGE,
            "budget": published.PUBLISHED_BUDGET,
            "reasoning_effort": published.PUBLISHED_EFFORT,
            "thinking_budget": published.PUBLISHED_THINKING,
            "figures": "not available here; no reproduction is claimed",
        },
        "comparable_with_published": comparable,
        "comparability": label_line,
        "coverage": covered.as_dict(),
        "config": {**asdict(config), "clinician_template": config.template_name},
        "headline_metric": "overall",
    }
    metrics: dict[str, Any] = {}
    if scored:
        # No reference: the published figures are not available (the label says how the protocol compares).
        metrics["overall"] = mean_metric(
            "Overall score",
            summary["overall_by_profile"],
            unit="judge's mean of 5 criteria (1-6)",
            paired_test="paired_t",
            seed=seed,
        )
        for name in CRITERIA:
            metrics[SHORT[name].lower()] = mean_metric(
                f"{name} ({SHORT[name]})",
                {str(r["item_id"]): float(r["scores"][name]) for r in scored},
                unit=f"1-6; {missing[name]} left out by the judge (given 3)"
                if config.missing_criterion == "default"
                else "1-6",
                paired_test="paired_t",
                seed=seed,
            )
    summary["metrics"] = metrics
    notes = []
    if not scored:
        notes.append("no conversation was scored")
    if summary["n_missing_criteria"]:
        notes.append(
            f"{summary['n_missing_criteria']} criterion score(s) left out by the judge were given 3, as upstream does"
        )
    notes.append(label_line)
    summary["headline_note"] = "; ".join(notes)
    if self_played["simulator"]:
        summary["self_simulated"] = True  # read by every report as self-simulated (like self-judged)
    return summary
