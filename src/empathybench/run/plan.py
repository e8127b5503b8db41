"""The plan of a command that calls models, made once before any data is fetched or any model is called.

`plan_run` turns a run's options into a `RunPlan`: every model role (the model under test, the judge, the simulated
person) with its spec, arguments, endpoint and price parsed and checked, and every instrument with its preset, item
limit, options and config resolved by its own `configure`. `run`, `run --dry-run`, the cost estimate and the
repeats work from the plan; `judge validate`, `report --judge` and the inspect bridge build their roles with
`plan_role` and their instruments with `plan_instrument`. The checks run here, before any data is fetched or
backend made; `create_backend` checks a role's endpoint and model arguments again, for its other callers.
"""

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.instruments.protocol import Instrument, PreparedBenchmark
from empathybench.instruments.registry import all_benchmarks
from empathybench.models.base import Backend, Canned
from empathybench.models.prices import Price, parse_price_option, price_for
from empathybench.models.registry import (
    Endpoint,
    ModelSpec,
    check_endpoint,
    check_model_args,
    parse_model_spec,
    split_endpoint_args,
)
from empathybench.models.reply_bounds import reply_limit_override
from empathybench.paths import cache_dir, check_writable_dir
from empathybench.run.cost import no_price_line
from empathybench.run.options import (
    BATCH_FALLBACKS,
    DEMO_PRESET,
    MAX_REPEATS,
    MAX_SEED,
    PRESETS,
    RunOptions,
    check_base_url,
    check_cost_and_batch,
    check_max_concurrency,
    run_benchmarks,
)


@dataclass(frozen=True)
class RoleFlags:
    """The command-line flags of one model role, for its messages."""

    spec: str  # e.g. "--judge"
    args: str  # e.g. "--judge-arg"
    base_url: str  # e.g. "--judge-base-url"
    price: str  # e.g. "--judge-price"


ROLE_FLAGS = {
    "model": RoleFlags("--model", "--model-arg", "--base-url", "--price"),
    "judge": RoleFlags("--judge", "--judge-arg", "--judge-base-url", "--judge-price"),
    "simulator": RoleFlags("--simulator", "--simulator-arg", "--simulator-base-url", "--simulator-price"),
}
# What a role is called in one line of text.
ROLE_WORDS = {"model": "the model", "judge": "the judge", "simulator": "the simulated person (simulator)"}


@dataclass(frozen=True)
class RolePlan:
    """One model role of a command: its spec, its model arguments (checked), where its calls go and its price."""

    role: str  # "model" (the model under test), "judge", "simulator"
    spec: ModelSpec
    args: tuple[str, ...]  # its KEY=VALUE model arguments, without the endpoint ones
    endpoint: Endpoint
    price: Price | None  # USD per million tokens (None: unknown)

    @property
    def flags(self) -> RoleFlags:
        return ROLE_FLAGS[self.role]

    def backend(self, canned: Mapping[str, Canned] | None = None, max_reply_bytes: int | None = None) -> Backend:
        """The role's backend (a missing API key is a one-line error here, before any data is read);
        `max_reply_bytes` fixes every reply's limit (None: derived per request, models/reply_bounds.py)."""
        from empathybench.models.registry import create_backend

        return create_backend(
            self.spec,
            base_url=self.endpoint.base_url,
            model_args=self.args,
            args_option=self.flags.args,
            canned=canned,
            api_key_env=self.endpoint.api_key_env,
            max_reply_bytes=max_reply_bytes,
        )

    def dry_identity(self) -> dict[str, Any]:
        """The role's identity as far as it is known without its backend (a dry run needs no API key)."""
        from empathybench.redaction import strip_url_credentials

        identity: dict[str, Any] = {"provider": self.spec.provider, "model": self.spec.model}
        if self.endpoint.base_url:
            identity["base_url"] = strip_url_credentials(self.endpoint.base_url.rstrip("/"))
        if self.endpoint.api_key_env:
            identity["api_key_env"] = self.endpoint.api_key_env
        return identity


def plan_role(
    role: str, spec: str, args: Sequence[str] = (), *, base_url: str | None = None, price: str | None = None
) -> RolePlan:
    """A role from its flags: `--judge SPEC --judge-arg K=V --judge-base-url URL --judge-price ...`; the endpoint may
    also come in the arguments (`base_url=URL`, `api_key_env=NAME`). Every mistake is one line naming the flag."""
    flags = ROLE_FLAGS[role]
    parsed = parse_model_spec(spec)
    endpoint, rest = split_endpoint_args(args, flags.args)
    if base_url is not None:
        if endpoint.base_url is not None and endpoint.base_url != base_url:
            raise UserError(f"{flags.base_url} and {flags.args} base_url=... name two servers; give one of them")
        endpoint = replace(endpoint, base_url=base_url)
    check_endpoint(parsed, endpoint, flags.base_url if base_url is not None else flags.args)
    if endpoint.base_url is not None:
        check_base_url(endpoint.base_url, flags.base_url if base_url is not None else f"{flags.args} base_url")
    elif parsed.provider == "openai" and os.environ.get("OPENAI_BASE_URL"):
        check_base_url(os.environ["OPENAI_BASE_URL"], "OPENAI_BASE_URL")
    check_model_args(parsed, rest, flags.args)
    override = parse_price_option(price) if price else None
    return RolePlan(role, parsed, rest, endpoint, price_for(parsed.provider, parsed.model, override))


@dataclass(frozen=True)
class InstrumentPlan:
    """One instrument of a run: its preset, item limit and options, and the config its `configure` made of them."""

    instrument: Instrument[Any, Any]
    preset: str
    limit: int | None
    options: Mapping[str, str]
    config: Any

    @property
    def name(self) -> str:
        return self.instrument.name

    def prepare(self, *, seed: int, allow_unverified: bool) -> PreparedBenchmark[Any]:
        return self.instrument.prepare(
            self.config, preset=self.preset, limit=self.limit, seed=seed, allow_unverified=allow_unverified
        )


def plan_instrument(
    instrument: Instrument[Any, Any], preset: str, limit: int | None, options: Mapping[str, str]
) -> InstrumentPlan:
    """The instrument configured for a preset: the demo preset is its quick preset cut down by its `demo` (the
    user's --limit and --option values winning); an unknown preset or a bad option is one line."""
    if preset == DEMO_PRESET:
        demo = instrument.demo
        preset, limit, options = "quick", min(limit or demo.items, demo.items), {**demo.options, **options}
    elif preset not in instrument.presets:
        raise UserError(
            f"benchmark {instrument.name} has no preset {preset!r}; choose one of {', '.join(instrument.presets)}"
        )
    config = instrument.configure(preset, options)
    return InstrumentPlan(instrument, preset, limit, dict(options), config)


@dataclass(frozen=True)
class RunPlan:
    """Everything a run will do, checked: its options, its model roles and its instruments, in run order."""

    options: RunOptions
    roles: Mapping[str, RolePlan]  # "model" always; "judge" and "simulator" when given
    instruments: tuple[InstrumentPlan, ...]
    # Roles an instrument needs that the model under test plays itself (the demo's self-judged / self-simulated).
    self_played: frozenset[str] = field(default_factory=frozenset)

    @property
    def model(self) -> RolePlan:
        return self.roles["model"]

    def canned(self) -> dict[str, Canned]:
        """What a scripted model answers each instrument (dispatched on the request's tag)."""
        return {p.name: p.instrument.canned for p in self.instruments if p.instrument.canned is not None}

    def backends(self) -> dict[str, Backend]:
        """A backend per role, the model's first: a missing key is the error to show before any data is fetched."""
        canned, limit = self.canned(), self.options.max_reply_bytes
        return {name: role.backend(canned, limit) for name, role in self.roles.items()}


def plan_run(options: RunOptions, repeats: int = 1) -> RunPlan:
    """The plan of `options`; every mistake is one UserError, before any data is fetched or model called."""
    _check_run_numbers(options, repeats)
    roles = _plan_roles(options)
    check_cost_and_batch(
        options.max_cost, options.batch, options.batch_poll_interval_s, [r.spec for r in roles.values()]
    )
    if options.batch_fallback not in BATCH_FALLBACKS:
        raise UserError(f"--batch-fallback must be live or fail, not {options.batch_fallback[:40]!r}")
    reply_limit_override(options.max_reply_bytes)  # the option, else the environment variable: one line if wrong
    chosen = run_benchmarks(options)
    self_played = _check_required_roles(options.preset, chosen, roles)
    _check_option_targets(options, chosen)
    instruments = tuple(
        plan_instrument(instrument, options.preset, options.limit, _scoped_options(options.options, instrument.name))
        for instrument in chosen
    )
    _check_writable_places(options)
    if options.max_cost is not None:
        unknown = [no_price_line(role.role, role.spec) for role in roles.values() if role.price is None]
        if unknown:
            raise UserError(f"--max-cost needs prices: {'; '.join(unknown)}")
    return RunPlan(options, roles, instruments, self_played)


def _check_run_numbers(options: RunOptions, repeats: int) -> None:
    if options.preset not in PRESETS:
        raise UserError(f"unknown preset {options.preset!r}; choose {', '.join(PRESETS[:-1])} or {PRESETS[-1]}")
    if not 1 <= repeats <= MAX_REPEATS:
        raise UserError(f"--repeats must be between 1 and {MAX_REPEATS}, not {repeats}")
    if options.limit is not None and options.limit < 1:
        raise UserError(f"--limit must be at least 1, not {options.limit}")
    check_max_concurrency(options.max_concurrency)
    highest_seed = MAX_SEED - (repeats - 1)
    if not 0 <= options.seed <= highest_seed:
        with_repeats = f" with --repeats {repeats}" if repeats > 1 else ""
        raise UserError(f"--seed must be between 0 and {highest_seed}{with_repeats}, not {options.seed}")


def _plan_roles(options: RunOptions) -> dict[str, RolePlan]:
    roles = {
        "model": plan_role("model", options.model, options.model_args, base_url=options.base_url, price=options.price)
    }
    given = {
        "judge": (options.judge, options.judge_args, options.judge_base_url, options.judge_price),
        "simulator": (options.simulator, options.simulator_args, options.simulator_base_url, options.simulator_price),
    }
    for name, (spec, args, base_url, price) in given.items():
        flags = ROLE_FLAGS[name]
        if spec is None:
            for flag, value in ((flags.args, args), (flags.base_url, base_url), (flags.price, price)):
                if value:
                    raise UserError(
                        f"{flag} needs {flags.spec} (without it the model under test plays {ROLE_WORDS[name]})"
                    )
            continue
        roles[name] = plan_role(name, spec, args, base_url=base_url, price=price)
    return roles


def self_played_in(instrument: Instrument[Any, Any], role: str, preset: str) -> bool:
    """Whether the model under test may play `role` for the instrument when no model is given for it: a role the
    instrument does not require, or one its demo cut lets the model play (self-judged, self-simulated)."""
    if role not in instrument.required_roles:
        return True
    demo = instrument.demo
    return preset == DEMO_PRESET and (demo.self_judged if role == "judge" else demo.self_simulated)


def missing_role_error(names: Sequence[str], role: str) -> str:
    """The one line refusing instruments that need `role`, which was not given."""
    if role == "judge":
        return f"{', '.join(names)} needs a judge: add --judge SPEC (it never judges itself)"
    return (
        f"{', '.join(names)} needs a simulated person: add --simulator SPEC (the model under test never plays the "
        "person it talks with)"
    )


def _check_required_roles(
    preset: str, chosen: Sequence[Instrument[Any, Any]], roles: Mapping[str, Any]
) -> frozenset[str]:
    """Refuse an instrument whose required role is missing; the roles the model plays itself (the demo's)."""
    self_played: set[str] = set()
    for role in ("judge", "simulator"):
        if role in roles:
            continue
        refused = [b.name for b in chosen if not self_played_in(b, role, preset)]
        if refused:
            raise UserError(missing_role_error(refused, role))
        if any(role in b.required_roles for b in chosen):
            self_played.add(role)
    return frozenset(self_played)


def _scoped_options(options: Mapping[str, str], name: str) -> dict[str, str]:
    prefix = f"{name}."
    return {key.removeprefix(prefix): value for key, value in options.items() if key.startswith(prefix)}


def _check_option_targets(options: RunOptions, chosen: Sequence[Instrument[Any, Any]]) -> None:
    """Every `--option BENCH.NAME=VALUE` names an instrument of the run."""
    selected = [instrument.name for instrument in chosen]
    for key in options.options:
        name = key.split(".", 1)[0]
        if name in selected:
            continue
        # Only a mistake loads the other instruments (each import costs start-up): to name them in the message.
        known = all_benchmarks()
        if name not in known:
            raise UserError(f"--option {key}: there is no benchmark {name!r}; known: {', '.join(known)}")
        raise UserError(
            f"--option {key} is for {name}, which this run does not include (it runs {', '.join(selected)}); "
            f"add --bench {name} or drop the option"
        )


def _check_writable_places(options: RunOptions) -> None:
    if options.out is not None:
        check_writable_dir(options.out, "--out")
    else:
        check_writable_dir(Path("runs"), "the run directory's parent")
    if options.use_cache:
        try:
            check_writable_dir(cache_dir(), "the cache directory")
        except UserError as exc:
            raise UserError(f"{exc}; set EMPATHYBENCH_CACHE_DIR to a writable directory or pass --no-cache") from None
