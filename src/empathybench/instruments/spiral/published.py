"""The published leaderboard's settings, and whether a run's figures can stand beside it (specs/spiral.md).

The canonical leaderboard (eqbench.com/spiral-bench.html) was made with the user agent Kimi-K2 (README:
`--user-model moonshotai/kimi-k2`; every released conversation records it as `user_model`) and the judge GPT-5,
snapshot gpt-5-2025-08-07 (README: `--judge-model "gpt-5-2025-08-07"`), 30 openings, 20 turns, chunk size 1.
Both the user agent and the judge move the figures, so a run with another simulator or judge is labelled.
"""

import json
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from typing import Any

from empathybench.instruments.comparability import Unstated
from empathybench.models.base import Sampling
from empathybench.models.capabilities import ModelArgs, lookup_capabilities
from empathybench.models.identity import identity_table

PUBLISHED_SIMULATOR = "moonshotai/kimi-k2"
PUBLISHED_JUDGE = "gpt-5-2025-08-07"
PUBLISHED_TURNS = 20
PUBLISHED_OPENINGS = 30
PUBLISHED_CHUNK_SIZE = 1
PUBLISHED_INJECTION_EVERY_N = 5  # main.py's default, which the README's command keeps
PUBLISHED_JUDGE_ASSISTANT_MAX_CHARS = 20000  # main.py --judge-assistant-max-chars default

# The published roles as checkpoints of the model identity table (models/identity.py), so that every name the
# table gives them is accepted: Kimi-K2 of July 2025 (OpenRouter moonshotai/kimi-k2, Moonshot kimi-k2-0711-preview,
# the open weights Kimi-K2-Instruct; the later kimi-k2-0905 and kimi-k2-thinking are other models), and the judge
# only as its dated snapshot (the "gpt-5" alias may move: the table knows it as the family only).
PUBLISHED_SIMULATOR_ID = "kimi-k2-0711"
PUBLISHED_JUDGE_ID = "gpt-5-2025-08-07"


def _last_segment(model: str) -> str:
    return model.strip().lower().rsplit("/", 1)[-1]


def checkpoint(model: str, instrument: str | None = None) -> str | None:
    """The identity table's checkpoint of a model name (`instrument`: the name is that instrument's published
    one), or None when the name is no known checkpoint."""
    match = identity_table().match(model, instrument=instrument)
    return match.id if match is not None else None


def is_published_simulator(model: str) -> bool:
    return checkpoint(model) == PUBLISHED_SIMULATOR_ID


def is_published_judge(model: str) -> bool:
    return checkpoint(model) == PUBLISHED_JUDGE_ID


def protocol_differences(config: Mapping[str, Any]) -> list[str]:
    """How a run's protocol options differ from the published run's (main.py's defaults, the README's command)."""
    differs = []
    if config.get("num_turns") != PUBLISHED_TURNS:
        differs.append(f"{config.get('num_turns')} turns, not {PUBLISHED_TURNS}")
    if config.get("chunk_size") != PUBLISHED_CHUNK_SIZE:
        differs.append(f"chunk size {config.get('chunk_size')}, not {PUBLISHED_CHUNK_SIZE}")
    if config.get("injection_every_n") != PUBLISHED_INJECTION_EVERY_N:
        differs.append(f"an injection every {config.get('injection_every_n')} moves, not {PUBLISHED_INJECTION_EVERY_N}")
    if config.get("judge_assistant_max_chars") != PUBLISHED_JUDGE_ASSISTANT_MAX_CHARS:
        differs.append(f"replies cut at {config.get('judge_assistant_max_chars')} characters for the chunk judge")
    if config.get("max_tokens") is not None:
        differs.append(f"every budget capped at {config.get('max_tokens')} tokens")
    if config.get("judge_errors", "faithful") != "faithful":
        differs.append("chunks the judge never rated left out (upstream scores them as no incidences)")
    return differs


def role_differences(simulator: str, judge: str, *, simulator_self: bool, judge_self: bool) -> list[str]:
    """The user agent and the judge against the published ones."""
    differs = []
    if simulator_self:
        differs.append("self-simulated: the model under test played the user agent")
    elif not is_published_simulator(simulator):
        differs.append(f"the user agent is not the published {PUBLISHED_SIMULATOR}")  # the label names it
    if judge_self:
        differs.append("self-judged: the model under test judged itself")
    elif not is_published_judge(judge):
        differs.append(f"the judge is not the published {PUBLISHED_JUDGE}")
    return differs


def published_call_body(role: str, model: str, sampling: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the published run sent `model` for a call of the recorded `sampling` (comparability.PublishedBody). A
    model upstream's code does not name that takes no temperature (an OpenAI reasoning model: `gpt-5`) would be sent
    0.3 and refuse it: no published run used that model, and the label says so rather than name the temperature."""
    budget = sampling.get("max_tokens")
    if not model or not isinstance(budget, int):
        return None
    body: dict[str, Any] = published_body(model, budget)
    if upstream_name(model) == model and model not in UPSTREAM_NAMED_MODELS and not _takes_temperature(model):
        body["temperature"] = Unstated(
            "the model takes none, and no published run used it: upstream's code does not name it and would send "
            f"it {UPSTREAM_TEMPERATURE:g}, which it refuses"
        )
    return body


def _takes_temperature(model: str) -> bool:
    return lookup_capabilities("openai", model).sampling


# --- the settings upstream sends each model (api_client.py get_completion at the pinned commit) -------------------

UPSTREAM_TEMPERATURE = 0.3  # get_completion's payload for every model, with the caller's max_tokens
# The models get_completion gives settings of their own, by the name it was called with (OpenRouter's names, except
# the OpenAI models called by their own).
UPSTREAM_NAMED_MODELS = (
    "openai/gpt-oss-120b",
    "openai/gpt-oss-20b",
    "o3",
    "gpt-5-2025-08-07",
    "gpt-5-mini-2025-08-07",
    "gpt-5-nano-2025-08-07",
    "gpt-5-chat-latest",
    "deepseek/deepseek-r1-0528",
    "google/gemini-2.5-pro",
    "openai/o4-mini",
)


def upstream_body(model: str, max_tokens: int) -> dict[str, Any]:
    """The body get_completion sends `model` besides its name and the messages, for a call of `max_tokens` (3072
    for a conversation turn, 8096 for the chunk judge, 2048 for the final judge), its overrides in its order."""
    body: dict[str, Any] = {"max_tokens": max_tokens, "temperature": UPSTREAM_TEMPERATURE}
    if model in ("openai/gpt-oss-120b", "openai/gpt-oss-20b"):
        body["provider"] = {"order": ["DeepInfra"], "allow_fallbacks": False}
        body["reasoning"] = {"effort": "low"}
    if model == "openai/gpt-oss-120b":
        body["max_tokens"] = 8096
    if model == "o3":
        del body["max_tokens"], body["temperature"]
        body["max_completion_tokens"] = 16000
    if model in ("gpt-5-2025-08-07", "gpt-5-mini-2025-08-07", "gpt-5-nano-2025-08-07"):
        body["reasoning_effort"] = "minimal"
        del body["max_tokens"]
        body["max_completion_tokens"] = 16000
        body["temperature"] = 1
    if model == "gpt-5-chat-latest":
        del body["max_tokens"]
        body["max_completion_tokens"] = 16000
        body["temperature"] = 1
    if model == "deepseek/deepseek-r1-0528":
        body["max_tokens"] = 32000
    if model == "google/gemini-2.5-pro":
        body["reasoning"] = {"max_tokens": 1}
    if model == "openai/o4-mini":
        body["reasoning"] = {"effort": "low"}
    return body


def upstream_name(model: str) -> str:
    """The name get_completion would have matched for `model`: the same name, or the upstream name with the same
    last path segment (case aside), so that `o4-mini` at OpenAI and `openai/o4-mini` at OpenRouter both get
    o4-mini's settings, or the upstream name of the same checkpoint in the identity table (`o4-mini-2025-04-16`,
    `o3-2025-04-16`); else `model` itself (no override)."""
    if model in UPSTREAM_NAMED_MODELS:
        return model
    segment = _last_segment(model)
    same_segment = next((name for name in UPSTREAM_NAMED_MODELS if _last_segment(name) == segment), None)
    if same_segment is not None:
        return same_segment
    same = checkpoint(model)
    return _upstream_checkpoints().get(same, model) if same is not None else model


@lru_cache(maxsize=1)
def _upstream_checkpoints() -> dict[str, str]:
    """The identity table's checkpoint of each model upstream's code names -> that name."""
    found: dict[str, str] = {}
    for name in UPSTREAM_NAMED_MODELS:
        same = checkpoint(name, "spiral")
        if same is not None:
            found.setdefault(same, name)
    return found


def published_body(model: str, max_tokens: int) -> dict[str, Any]:
    """What the published run sent `model` for a call of `max_tokens`: upstream's body for the name it knows. Under
    another name of the same model (e.g. `o4-mini` at OpenAI for OpenRouter's `openai/o4-mini`), the same settings in
    the terms of an OpenAI-compatible API: OpenRouter's `reasoning: {"effort": X}` as `reasoning_effort: X`
    (equivalent at OpenRouter, and what OpenAI and vLLM take), no `provider` routing, and no temperature for a model
    that takes none (OpenRouter drops it for such models; OpenAI refuses it); a `reasoning` budget stays."""
    name = upstream_name(model)
    body = upstream_body(name, max_tokens)
    if name != model:
        body.pop("provider", None)
        reasoning = body.get("reasoning")
        if isinstance(reasoning, dict) and set(reasoning) == {"effort"}:
            del body["reasoning"]
            body["reasoning_effort"] = reasoning["effort"]
        if not lookup_capabilities("openai", model).sampling:
            body.pop("temperature", None)
    return body


@lru_cache(maxsize=64)
def request_sampling(model: str, base: Sampling) -> Sampling:
    """`base` (the protocol's temperature and budget for one kind of call) as the published run sent it to `model`
    (`published_body`): for every model the budget as the whole budget, as upstream sends it (no room added for
    thinking); under upstream's own name of a model it names, its body exactly; under another name of it, its
    settings with the capabilities of the model deciding the fields. The user's model arguments still win (and the
    label names what then differs)."""
    body = published_body(model, base.max_tokens)
    budget_field = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
    budget = int(body[budget_field])
    effort = body.get("reasoning_effort")
    extra = {key: body[key] for key in ("provider", "reasoning") if key in body}
    exact = model in UPSTREAM_NAMED_MODELS
    args = ModelArgs(
        reasoning=True if effort is not None else None,
        sampling=("temperature" in body) if exact else None,
        token_field=budget_field if exact else None,
        reasoning_effort=effort,
        max_tokens=budget,
        extra_body=tuple(
            (key, json.dumps(value, separators=(",", ":"), sort_keys=True)) for key, value in sorted(extra.items())
        ),
    )
    temperature = float(body.get("temperature", base.temperature))
    return replace(base, temperature=temperature, max_tokens=budget, model_args=args)
