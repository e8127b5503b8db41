"""The published runs' settings, sent by default to the published models and to the clinician, and what a run's
label compares with.

README and run_benchmark.sh at the pinned commit: the member `claude-haiku-4-5@20251001` and the judge
`claude-sonnet-4-5@20250929` (Vertex AI names), each through litellm 1.74.15 (poetry.lock) with
`max_completion_tokens` 16000 and `reasoning_effort` "high", temperature unset. litellm sends that to Anthropic as
`max_tokens` 16000 (the whole budget, thinking included) and extended thinking with `budget_tokens` 4096 (its mapping
of "high"), and no temperature (thinking allows none). The clinician's are the user's; the README says "Copy the
syntax of `--member_model_api_params` for your clinician model", so the clinician gets the member's settings too.

When the member or the judge is its published model, and for the clinician whatever its model, its requests carry
those settings as the protocol's model arguments (Sampling.model_args; the user's own arguments still win, and so
does a budget option the user set, whose default is the published budget; the label then names what differs):
through the Anthropic API as litellm sent them (a model with extended thinking), through an OpenAI-compatible
endpoint as `reasoning_effort` "high" with the same whole budget (a model that takes a reasoning effort). There
the endpoint chooses the thinking budget of a Claude model: OpenRouter documents 80% of max_tokens for "high"
(12,800 of 16,000; https://openrouter.ai/docs/use-cases/reasoning-tokens), not litellm's 4,096, and the label says
so. A clinician that takes no reasoning setting gets the budget alone (litellm would pass the
effort on, and the provider refuse it).
"""

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from empathybench.instruments.comparability import ROLE_NAMES, call_role, settings_differences
from empathybench.models.base import Sampling
from empathybench.models.capabilities import ModelArgs, lookup_capabilities

PUBLISHED_MEMBER = "claude-haiku-4-5@20251001"
PUBLISHED_JUDGE = "claude-sonnet-4-5@20250929"
PUBLISHED_BUDGET = 16000  # max_completion_tokens
PUBLISHED_THINKING = 4096  # reasoning_effort "high", as litellm maps it for Anthropic
PUBLISHED_EFFORT = "high"
# OpenRouter's thinking budget for an Anthropic model given an effort: max(min(max_tokens x ratio, 32000), 1024), with
# ratio 0.8 for "high" (its reasoning-tokens guide); another endpoint may choose otherwise.
OPENROUTER_EFFORT_RATIOS = {"xhigh": 0.95, "high": 0.8, "medium": 0.5, "low": 0.2, "minimal": 0.1}
PAPER_ROUNDS = 10  # run_benchmark.sh --n_turns 10
# The published models as providers and gateways name them (Anthropic API: dated with "-"; Vertex AI: with "@";
# gateways: "4.5"), compared on the name's last path segment in lower case.
_NAMES = {
    "simulator": re.compile(r"claude-haiku-4[-.]5(?:[-@]20251001)?"),
    "judge": re.compile(r"claude-sonnet-4[-.]5(?:[-@]20250929)?"),
}
PUBLISHED_MODELS = {"simulator": PUBLISHED_MEMBER, "judge": PUBLISHED_JUDGE}
ROLE_WORDS = {"simulator": "member", "judge": "judge", "model": "clinician"}
# What the published runs sent as the providers' default: temperature unset, which is 1 at Anthropic and OpenAI.
PROVIDER_DEFAULTS = {"temperature": 1.0}


def is_published(role: str, model: str) -> bool:
    pattern = _NAMES.get(role)
    return pattern is not None and pattern.fullmatch(model.strip().lower().rsplit("/", 1)[-1]) is not None


def published_body(role: str, provider: str, *, reasoning: bool = True) -> dict[str, Any] | None:
    """What the published run sent the member (`simulator`), the judge or, copied from the member, the clinician
    (`model`) besides the messages, in the terms of `provider`'s API; `reasoning=False`: to a clinician that takes no
    reasoning setting, the budget alone."""
    if role not in (*_NAMES, "model"):
        return None
    if not reasoning:
        return {"max_tokens": PUBLISHED_BUDGET}
    if provider == "anthropic":
        return {"max_tokens": PUBLISHED_BUDGET, "thinking": {"type": "enabled", "budget_tokens": PUBLISHED_THINKING}}
    return {"max_tokens": PUBLISHED_BUDGET, "reasoning_effort": PUBLISHED_EFFORT}


def _published_args(provider: str, budget: int) -> ModelArgs:
    """The published reasoning setting within `budget`: the role's token budget option, whose default is the
    published 16,000, so a budget the user set replaces the published one (one field on the wire; the label names
    the difference from what was sent)."""
    if provider == "anthropic":
        return ModelArgs(thinking_budget=PUBLISHED_THINKING, max_tokens=budget)
    return ModelArgs(reasoning=True, reasoning_effort=PUBLISHED_EFFORT, max_tokens=budget)


def request_sampling(role: str, identity: Mapping[str, Any], base: Sampling) -> Sampling:
    """`base` with the published reasoning setting as the protocol's model arguments when `identity` (the role's
    model as the run gives it) is the published model of `role`; else `base` unchanged. The budget is `base`'s (the
    role's option: the published 16,000 unless the user set another)."""
    if not is_published(role, str(identity.get("model") or "")):
        return base
    return replace(base, model_args=_published_args(str(identity.get("provider")), base.max_tokens))


def takes_reasoning(identity: Mapping[str, Any]) -> bool:
    """Whether a model takes the published reasoning setting: extended thinking at Anthropic; over an OpenAI-compatible
    API a reasoning model (the capability table's, or the user's `-M reasoning=true`) or a Claude model that thinks
    (a gateway's name for it)."""
    provider, model = str(identity.get("provider") or ""), str(identity.get("model") or "")
    if provider == "anthropic":
        return lookup_capabilities("anthropic", model).thinking
    if provider != "openai":
        return False
    given = identity.get("model_args") if isinstance(identity.get("model_args"), Mapping) else {}
    if given.get("reasoning") is not None:
        return bool(given["reasoning"])
    return lookup_capabilities("openai", model).reasoning or lookup_capabilities("anthropic", model).thinking


def clinician_sampling(identity: Mapping[str, Any], base: Sampling) -> Sampling:
    """The clinician's sampling: the member's published settings (upstream's README: copy them), the reasoning
    setting where its model takes one; `base` (the instrument's budget and temperature) otherwise."""
    if not takes_reasoning(identity):
        return base
    return replace(base, model_args=_published_args(str(identity.get("provider")), base.max_tokens))


def published_call_body(role: str, model: str, sampling: Mapping[str, Any]) -> dict[str, Any] | None:
    """comparability.PublishedBody: what the published run sent a call of `role`, in the terms the call was sent
    in (the protocol's model arguments say which; without them a Claude model's are Anthropic's, and a clinician's
    the budget alone: its model takes no reasoning setting), so that the same settings read alike."""
    protocol = sampling.get("model_args") if isinstance(sampling.get("model_args"), Mapping) else {}
    if "reasoning_effort" in protocol:
        return published_body(role, "openai")
    if "thinking_budget" in protocol:
        return published_body(role, "anthropic")
    if role == "model":
        return published_body(role, "openai", reasoning=False)
    if model.strip().lower().rsplit("/", 1)[-1].startswith("claude"):
        return published_body(role, "anthropic")
    return published_body(role, "openai")


def thinking_sent(sent: Mapping[str, Any]) -> str:
    """The thinking budget a request body carried, in words: "thinking 4,096 of 16,000 tokens" (Anthropic),
    "reasoning effort high within 16,000 tokens" (the endpoint chooses the budget) or "16,000 tokens, no thinking"."""
    budget = next((sent[f] for f in ("max_tokens", "max_completion_tokens") if isinstance(sent.get(f), int)), None)
    whole = f"{budget:,} tokens" if budget is not None else "no token budget"
    thinking = sent.get("thinking") if isinstance(sent.get("thinking"), Mapping) else {}
    reasoning = sent.get("reasoning") if isinstance(sent.get("reasoning"), Mapping) else {}
    if thinking.get("type") == "enabled" and isinstance(thinking.get("budget_tokens"), int):
        return f"thinking {thinking['budget_tokens']:,} of {whole}"
    if isinstance(reasoning.get("max_tokens"), int):
        return f"thinking {reasoning['max_tokens']:,} of {whole}"
    effort = sent.get("reasoning_effort") or reasoning.get("effort")
    if effort:
        return f"reasoning effort {str(effort)[:20]} within {whole}"
    return f"{whole}, no thinking"


def _gateway_budget(effort: str, budget: int | None) -> str:
    ratio = OPENROUTER_EFFORT_RATIOS.get(effort)
    if ratio is None or budget is None:
        return "the endpoint's"
    return f"OpenRouter's {max(min(int(budget * ratio), 32000), 1024):,} of {budget:,}"


def _sent(call: Mapping[str, Any]) -> Mapping[str, Any]:
    sent = call.get("sent")
    if isinstance(sent, Mapping):
        return sent
    sampling = call.get("sampling") if isinstance(call.get("sampling"), Mapping) else {}
    return {k: v for k, v in sampling.items() if k != "model_args"}


def thinking_budgets(records: Sequence[Mapping[str, Any]]) -> tuple[dict[str, str], list[str]]:
    """What each role's calls sent as their thinking budget ({role: "thinking 4,096 of 16,000 tokens"}, the ways
    joined when calls differ), and a difference line per role and model whose Claude model got a reasoning effort
    over an OpenAI-compatible endpoint: the endpoint's thinking budget, not the published 4,096."""
    budgets: dict[str, dict[str, None]] = {}
    gateway: Counter[tuple[str, str, str]] = Counter()
    for record in records:
        for call in record.get("calls") or ():
            if not isinstance(call, Mapping):
                continue
            role, sent = call_role(call), _sent(call)
            budgets.setdefault(role, {})[thinking_sent(sent)] = None
            model = str(sent.get("model") or "")
            reasoning = sent.get("reasoning") if isinstance(sent.get("reasoning"), Mapping) else {}
            effort = sent.get("reasoning_effort") or reasoning.get("effort")
            if effort and lookup_capabilities("anthropic", model).thinking:
                budget = next((sent[f] for f in ("max_tokens", "max_completion_tokens") if sent.get(f)), None)
                phrase = (
                    f"reasoning effort {str(effort)[:20]} through an OpenAI-compatible endpoint, which sets the "
                    f"thinking budget ({_gateway_budget(str(effort), budget)} tokens; published "
                    f"{PUBLISHED_THINKING:,}, litellm's for Anthropic)"
                )
                gateway[(role, model, phrase)] += 1
    lines = [
        f"{ROLE_NAMES.get(role, role)} {model}: {phrase}, {count} {'call' if count == 1 else 'calls'}"
        for (role, model, phrase), count in sorted(gateway.items())
    ]
    return {role: "; ".join(ways) for role, ways in budgets.items()}, lines


def sent_differences(records: Sequence[Mapping[str, Any]], names: Mapping[str, str]) -> tuple[str, list[str]]:
    """(the label's roles, each with the thinking budget its calls sent; every difference between what the calls
    sent and what the published run sent the same role, a gateway's thinking budget among them). `names`: role ->
    its model(s) as given."""
    differences = settings_differences(records, published_call_body, provider_defaults=PROVIDER_DEFAULTS)
    budgets, gateway = thinking_budgets(records)
    given = ", ".join(
        f"{ROLE_WORDS[role]} {names.get(role) or 'unknown'}" + (f" ({budgets[role]})" if role in budgets else "")
        for role in ("simulator", "judge", "model")
    )
    return given, differences + gateway


def role_differences(roles: Mapping[str, str], self_played: Mapping[str, bool]) -> list[str]:
    """The member's and the judge's models against the published ones (`roles`: role -> its model(s) as given)."""
    differences = []
    for role, published in PUBLISHED_MODELS.items():
        word = ROLE_WORDS[role]
        name = roles.get(role) or "unknown"
        if self_played.get(role):
            played = "simulated" if role == "simulator" else "judged"
            differences.append(f"self-{played}: the model under test played the {word} ({name})")
        elif not all(is_published(role, each) for each in name.split(", ")):
            differences.append(f"the {word} is not the published {published}")  # the label names the model given
    return differences


def protocol_differences(config: Mapping[str, Any]) -> list[str]:
    """How a run's protocol options differ from the published run's."""
    differences = []
    rounds = config.get("rounds")
    if rounds != PAPER_ROUNDS:
        differences.append(f"{rounds} {'round' if rounds == 1 else 'rounds'}, not {PAPER_ROUNDS}")
    if config.get("clinician_template") != "v0_1":
        differences.append(f"clinician template {config.get('clinician_template')}, not v0_1")
    if config.get("judge_template") != "v0_1":
        differences.append(f"judge template {config.get('judge_template')}, not v0_1")
    if config.get("missing_criterion") == "strict":
        differences.append("strict parse (upstream scores a criterion the judge leaves out as 3)")
    return differences
