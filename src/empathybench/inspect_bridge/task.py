"""One instrument as an inspect task: its items as samples, its `run_item` as the solver, its `summarize` as the metric.

Nothing here knows an instrument by name: every instrument runs through the same protocol it runs through in
`empathybench run` (instruments/protocol.py), with an item context whose calls are inspect model calls.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, Model, ModelOutput, get_model
from inspect_ai.model import model_roles as inspect_model_roles
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from empathybench.engine.engine import Engine, RetryPolicy
from empathybench.errors import UserError
from empathybench.inspect_bridge.backend import InspectBackend
from empathybench.inspect_bridge.wire import changes_text, item_changes, mark_request_changes
from empathybench.instruments.protocol import Instrument, PreparedBenchmark, scalar_value
from empathybench.instruments.registry import load
from empathybench.run.items import run_item_record
from empathybench.run.options import DEMO_PRESET, MAX_SEED
from empathybench.run.plan import InstrumentPlan, plan_instrument, self_played_in
from empathybench.run.summary import benchmark_result, finish_benchmarks
from empathybench.version import __version__

JUDGE_ROLE = "grader"  # inspect's convention for the model that judges (`--model-role grader=...`)
SIMULATOR_ROLE = "simulator"  # the simulated person of conversational instruments (`--model-role simulator=...`)
# EmpathyBench's role -> inspect's model role.
INSPECT_ROLES = {"judge": JUDGE_ROLE, "simulator": SIMULATOR_ROLE}
RECORD_KEY = "empathybench"  # the item's record in the sample's metadata (its calls) and in its score's metadata
EXPLANATION_CHARS = 1_000


class TaskOptionError(UserError):
    """A bad `-T` value: one line, shown by inspect without a traceback."""


def _one_line_error(message: str) -> Exception:
    """An exception inspect prints as its message alone (its prerequisite errors), else a UserError."""
    try:
        from inspect_ai._util.error import PrerequisiteError  # inspect's own "print the message, no traceback"
    except ImportError:  # pragma: no cover - a later inspect without it: the message still says it all
        return TaskOptionError(message)

    class EmpathyBenchTaskError(PrerequisiteError, TaskOptionError):
        def __init__(self, text: str) -> None:
            PrerequisiteError.__init__(self, text)
            TaskOptionError.__init__(self, text)

        def __str__(self) -> str:
            return str(self.message)

    return EmpathyBenchTaskError(message)


def _int_option(value: Any, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _one_line_error(f"-T {what} must be a whole number between {low} and {high}, not {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise _one_line_error(f"-T {what} must be a whole number between {low} and {high}, not {value!r}") from None
    if not low <= number <= high:
        raise _one_line_error(f"-T {what} must be between {low} and {high}, not {number}")
    return number


def _option_text(value: Any) -> str:
    """A `-T` value as the text `--option` would give (inspect parses `-T` values as YAML: true, 3, 0.5)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class InstrumentSettings:
    """What one task runs: the instrument's plan (preset with the demo resolved to its cut, limit, options, config),
    the seed, and the preset as asked for."""

    plan: InstrumentPlan
    seed: int
    allow_unverified: bool = False
    requested_preset: str = "quick"  # as given with -T preset (demo included)

    @property
    def name(self) -> str:
        return self.plan.name

    def as_dict(self) -> dict[str, Any]:
        return {
            "instrument": self.name,
            "preset": self.plan.preset,
            "requested_preset": self.requested_preset,
            "limit": self.plan.limit,
            "seed": self.seed,
            "options": dict(self.plan.options),
            "allow_unverified": self.allow_unverified,
        }


def instrument_settings(
    name: str,
    *,
    preset: str = "quick",
    limit: Any = None,
    seed: Any = 0,
    allow_unverified: Any = False,
    options: Mapping[str, Any] | None = None,
) -> tuple[Instrument[Any, Any], InstrumentSettings]:
    """The instrument `name` and its settings from `-T` values, each checked as `empathybench run` checks it (before
    any data is fetched or any model is called); a bad value is one line naming the allowed ones."""
    try:
        instrument = load(name)
    except UserError as exc:
        raise _one_line_error(str(exc)) from None
    if preset not in instrument.presets and preset != DEMO_PRESET:
        allowed = ", ".join([*instrument.presets, DEMO_PRESET])
        raise _one_line_error(f"{name} has no preset {preset!r}: -T preset= one of {allowed}")
    count = None if limit is None else _int_option(limit, "limit", 1, 10**9)
    run_seed = _int_option(seed, "seed", 0, MAX_SEED)
    scoped = {key: _option_text(value) for key, value in (options or {}).items()}
    unknown = sorted(set(scoped) - set(instrument.options))
    if unknown:
        allowed = ", ".join(instrument.options) or "none"
        raise _one_line_error(f"{name} has no option {unknown[0]!r}: its options (-T NAME=VALUE) are {allowed}")
    try:  # the demo's cut resolved, as `empathybench run --preset demo` takes it
        plan = plan_instrument(instrument, preset, count, scoped)
    except UserError as exc:
        raise _one_line_error(str(exc)) from None
    return instrument, InstrumentSettings(plan, run_seed, bool(allow_unverified), preset)


def prepare_instrument(instrument: Instrument[Any, Any], settings: InstrumentSettings) -> PreparedBenchmark[Any]:
    """The instrument's items and functions for these settings, as `empathybench run` prepares them."""
    try:
        return settings.plan.prepare(seed=settings.seed, allow_unverified=settings.allow_unverified)
    except UserError as exc:
        raise _one_line_error(str(exc)) from None


def instrument_task(name: str, **task_args: Any) -> Task:
    """The inspect task of the instrument `name` (task_args: preset, limit, seed, allow_unverified, options)."""
    instrument, settings = instrument_settings(name, **task_args)
    prepared = prepare_instrument(instrument, settings)
    samples = [
        Sample(id=item.id, input=f"{instrument.title}: item {item.id}", metadata={"index": index})
        for index, item in enumerate(prepared.items)
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"empathybench/{name}"),
        solver=_item_solver(
            prepared,
            settings.seed,
            [role for role in INSPECT_ROLES if not self_played_in(instrument, role, settings.requested_preset)],
        ),
        scorer=_item_scorer(prepared, instrument.item_value),
        version=__version__,
        metadata={
            RECORD_KEY: {
                **settings.as_dict(),
                "config": prepared.config,
                "n_items": len(prepared.items),
                "data_files": [f.as_record() for f in prepared.data_files],
                "empathybench_version": __version__,
            }
        },
    )


def _role_model(role: str) -> Model | None:
    """The model bound to inspect's model role for EmpathyBench's `role` (`--model-role grader=...`), if any."""
    bound = inspect_model_roles().get(INSPECT_ROLES[role])
    if isinstance(bound, list):
        return bound[0] if bound else None
    return bound


def _engine(model: Model, label: str, seed: int) -> Engine:
    # inspect retries, caches and bounds the calls in flight itself: the engine only records each call.
    backend = InspectBackend(model, role=INSPECT_ROLES.get(label))
    return Engine(backend, cache=None, retry=RetryPolicy(max_retries=0), seed=seed, request_timeout_s=None, label=label)


def _engines(name: str, run_seed: int, required: Sequence[str]) -> dict[str, Engine]:
    """An engine per model role: inspect's model, and the models of the roles bound on the command line; a role the
    instrument requires and nobody plays is one line."""
    engines = {"model": _engine(get_model(), "model", run_seed)}
    for role in INSPECT_ROLES:
        bound = _role_model(role)
        if bound is not None:
            engines[role] = _engine(bound, role, run_seed)
        elif role in required:
            needs = "a judge and never judges itself" if role == "judge" else "a simulated person and never plays it"
            raise _one_line_error(f"{name} needs {needs}: add --model-role {INSPECT_ROLES[role]}=<model>")
    return engines


def _item_solver(prepared: PreparedBenchmark[Any], run_seed: int, required: Sequence[str]) -> Solver:
    name = prepared.name

    @solver(name=f"{name}_item")
    def run_instrument_item() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            engines = _engines(name, run_seed, required)
            item = prepared.items[int(state.metadata["index"])]
            record = await run_item_record(prepared, item, engines, run_seed)
            # What inspect's provider changed of the item's requests, the failed calls' included.
            failed = [call for engine in engines.values() for call in _inspect_backend(engine).failed_calls]
            changes = item_changes([*record["calls"], *failed])
            if changes:
                record["request_changes"] = changes
            if record["status"] != "ok":
                # The sample fails (inspect's --fail-on-error decides the rest; --retry-on-error asks it again);
                # its metadata keeps the calls made and the failed ones, which `empathybench report` counts.
                state.metadata[RECORD_KEY] = {**record, "failed_calls": failed}
                raise RuntimeError(record["error"])
            state.metadata[RECORD_KEY] = record
            _show_last_exchange(state, record["calls"], engines["model"])
            return state

        return solve

    return run_instrument_item()


def _inspect_backend(engine: Engine) -> InspectBackend:
    assert isinstance(engine.backend, InspectBackend)  # every engine of the bridge is made by _engine
    return engine.backend


def _show_last_exchange(state: TaskState, calls: Sequence[Mapping[str, Any]], engine: Engine) -> None:
    """The sample's messages and output in inspect's view: the last exchange with the model under test (every call
    is in the transcript and in the record)."""
    own = [call for call in calls if call.get("role") != "judge"] or list(calls)
    if not own:
        return
    last = own[-1]
    kinds = {"system": ChatMessageSystem, "assistant": ChatMessageAssistant}
    state.messages = [kinds.get(m["role"], ChatMessageUser)(content=m["content"]) for m in last["messages"]]
    state.messages.append(ChatMessageAssistant(content=last["reply"]))
    state.output = ModelOutput.from_content(model=str(engine.identity.get("model", "")), content=last["reply"])


def item_values(
    fields: Mapping[str, Any], item_value: Any, config: Mapping[str, Any] | None = None
) -> dict[str, float | bool | None]:
    """The item's own value(s) for its Score: the instrument's `item_value(fields, config)` (None when the item has
    no value, e.g. its reply did not parse), as scalars inspect can average."""
    return {str(key): scalar_value(value) for key, value in dict(item_value(fields, config or {})).items()}


def item_explanation(fields: Mapping[str, Any]) -> str:
    """The parse result of one item in a line: its failure reason when it has one, else its scalar fields; first
    what inspect's provider changed of the item's requests, if anything."""
    changes = fields.get("request_changes")
    if changes:
        changed = f"request changed by inspect's provider ({changes_text(list(changes))}): not comparable; "
        return (changed + item_explanation({k: v for k, v in fields.items() if k != "request_changes"}))[
            :EXPLANATION_CHARS
        ]
    for key in ("error", "parse_error", "no_response"):
        reason = fields.get(key)
        if reason and isinstance(reason, str):
            return f"{key.replace('_', ' ')}: {reason}"[:EXPLANATION_CHARS]
    shown = [
        f"{key}={value}"
        for key, value in fields.items()
        if key not in ("benchmark", "item_id", "status", "calls", "usage", "elapsed_s")
        and (isinstance(value, str | bool | int) or (isinstance(value, float) and math.isfinite(value)))
    ]
    return ("; ".join(shown) or "answered")[:EXPLANATION_CHARS]


def _compact_calls(calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What the summary counts of each call (the whole calls stay in the sample's metadata)."""
    keys = ("role", "truncated", "budget_reask", "reasked", "cached", "request_changes")
    return [{key: call[key] for key in keys if key in call} for call in calls]


def _item_scorer(prepared: PreparedBenchmark[Any], item_value: Any) -> Scorer:
    name = prepared.name

    @scorer(metrics=[_instrument_metric(prepared)], name=name)
    def score_instrument_item() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            record = state.metadata.get(RECORD_KEY)
            if not isinstance(record, dict):
                return Score.unscored(reason="no record", explanation="the item did not run")
            fields = {key: value for key, value in record.items() if key not in ("calls",)}
            return Score(
                value=item_values(fields, item_value, prepared.config),
                explanation=item_explanation(fields),
                metadata={
                    RECORD_KEY: {
                        **fields,
                        "calls": _compact_calls(record.get("calls") or ()),
                        "index": state.metadata.get("index"),
                        "epoch": state.epoch,
                    }
                },
            )

        return score

    return score_instrument_item()


def records_of(scores: Sequence[SampleScore]) -> dict[int, list[dict[str, Any]]]:
    """The item records kept in the scores, per epoch, in item order."""
    by_epoch: dict[int, list[dict[str, Any]]] = {}
    for sample_score in scores:
        record = (sample_score.score.metadata or {}).get(RECORD_KEY)
        if isinstance(record, dict):
            by_epoch.setdefault(int(record.get("epoch") or 1), []).append(record)
    for records in by_epoch.values():
        records.sort(key=lambda r: int(r.get("index") or 0))
    return dict(sorted(by_epoch.items()))


def instrument_summary(prepared: PreparedBenchmark[Any], records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """summary.json's entry of the instrument for these records: the same function `empathybench run` uses."""
    benchmarks = {prepared.name: benchmark_result(prepared, records)}
    mark_request_changes(benchmarks[prepared.name], records)
    finish_benchmarks(benchmarks)
    return benchmarks[prepared.name]


def metric_values(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """The numbers the log shows: the headline first (named as the instrument names it), the parse counts and the
    validity as flags (1 = it applies; `request_changed`: inspect's provider changed the instrument's request, so
    the number is not comparable, each sample's explanation says how)."""
    headline = str(summary.get("headline_metric") or "score")
    validity = summary.get("validity") or {}
    status = str(validity.get("status", "valid"))
    # Each reason starts with its status's label ("invalid (below gate): ...", "self-judged: ...").
    applies = {status} | {str(reason).split(" ", 1)[0].rstrip(":") for reason in validity.get("reasons") or ()}
    # The headline stays the first metric (inspect's headline) even without a figure: NaN, never left out.
    score = _finite(summary.get("score"))
    values: dict[str, float | None] = {headline: math.nan if score is None else score}
    values["n_items"] = _finite(summary.get("n_items"))
    values["n_parsed"] = _finite(summary.get("n_parsed"))
    values["valid"] = 1.0 if status == "valid" else 0.0
    flags = ("invalid", "insufficient", "self-judged", "self-simulated")
    for flag, word in ((word.replace("-", "_"), word) for word in flags):
        values[flag] = 1.0 if word in applies else 0.0
    values["request_changed"] = 1.0 if summary.get("request_changed") else 0.0
    return values


def _finite(value: Any) -> float | None:
    scalar = scalar_value(value)
    return None if isinstance(scalar, bool) else scalar


def _instrument_metric(prepared: PreparedBenchmark[Any]) -> Metric:
    @metric(name=prepared.name, scores="unreduced")
    def instrument_headline() -> Metric:
        def compute(scores: list[SampleScore]) -> dict[str, float | None]:
            by_epoch = records_of(scores)
            if not by_epoch:
                return metric_values(instrument_summary(prepared, []))
            per_epoch = [metric_values(instrument_summary(prepared, records)) for records in by_epoch.values()]
            if len(per_epoch) == 1:
                return per_epoch[0]
            # inspect's --epochs: each epoch is a whole run of the items; the log shows their mean.
            merged: dict[str, float | None] = {}
            for key in per_epoch[0]:
                known = [v[key] for v in per_epoch if v.get(key) is not None]
                merged[key] = sum(known) / len(known) if known else None  # type: ignore[operator]
            merged["epochs"] = float(len(per_epoch))
            return merged

        return compute

    return instrument_headline()
