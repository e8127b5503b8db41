"""The published runs' settings, sent by default to the published models, and what a run's label compares with.

README and run_benchmark.sh at the pinned commit: the member `claude-haiku-4-5@20251001` and the judge
`claude-sonnet-4-5@20250929` (Vertex AI names), each through litellm 1.74.15 (poetry.lock) with
`max_completion_tokens` 16000 and `reasoning_effort` "high", temperature unset. litellm sends that to Anthropic as
`max_tokens` 16000 (the whole budget, thinking included) and extended thinking with `budget_tokens` 4096 (its mapping
of "high"), and no temperature (thinking allows none). The clinician's settings are not pinned.

When the member or the judge is its published model, its requests carry those settings as the protocol's model
arguments (Sampling.model_args; the user's own arguments still win and the label then names what differs):
through the Anthropic API as litellm sent them, through an OpenAI-compatible gateway as `reasoning_effort` "high"
with the same whole budget. Any other model gets the instrument's sampling.
"""

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from empathybench.models.base import Sampling
from empathybench.models.capabilities import ModelArgs

PUBLISHED_MEMBER = "claude-haiku-4-5@20251001"
PUBLISHED_JUDGE = "claude-sonnet-4-5@20250929"
PUBLISHED_BUDGET = 16000  # max_completion_tokens
PUBLISHED_THINKING = 4096  # reasoning_effort "high", as litellm maps it for Anthropic
PUBLISHED_EFFORT = "high"
PAPER_ROUNDS = 10  # run_benchmark.sh --n_turns 10
# The published models as providers and gateways name them (Anthropic API: dated with "-"; Vertex AI: with "@";
# gateways: "4.5"), compared on the name's last path segment in lower case.
_NAMES = {
    "simulator": re.compile(r"claude-haiku-4[-.]5(?:[-@]20251001)?"),
    "judge": re.compile(r"claude-sonnet-4[-.]5(?:[-@]20250929)?"),
}
PUBLISHED_MODELS = {"simulator": PUBLISHED_MEMBER, "judge": PUBLISHED_JUDGE}
ROLE_WORDS = {"simulator": "member", "judge": "judge"}
# What the published runs sent as the providers' default: temperature unset, which is 1 at Anthropic and OpenAI.
PROVIDER_DEFAULTS = {"temperature": 1.0}


def is_published(role: str, model: str) -> bool:
    pattern = _NAMES.get(role)
    return pattern is not None and pattern.fullmatch(model.strip().lower().rsplit("/", 1)[-1]) is not None


def published_body(role: str, provider: str) -> dict[str, Any] | None:
    """What the published run sent the member (`simulator`) or the judge besides the messages, in the terms of
    `provider`'s API (None: the clinician, whose settings upstream does not pin)."""
    if role not in _NAMES:
        return None
    if provider == "anthropic":
        return {"max_tokens": PUBLISHED_BUDGET, "thinking": {"type": "enabled", "budget_tokens": PUBLISHED_THINKING}}
    return {"max_tokens": PUBLISHED_BUDGET, "reasoning_effort": PUBLISHED_EFFORT}


def request_sampling(role: str, identity: Mapping[str, Any], base: Sampling) -> Sampling:
    """`base` with the published settings as the protocol's model arguments when `identity` (the role's model as
    the run gives it) is the published model of `role`; else `base` unchanged."""
    if not is_published(role, str(identity.get("model") or "")):
        return base
    if identity.get("provider") == "anthropic":
        args = ModelArgs(thinking_budget=PUBLISHED_THINKING, max_tokens=PUBLISHED_BUDGET)
    else:
        args = ModelArgs(reasoning=True, reasoning_effort=PUBLISHED_EFFORT, max_tokens=PUBLISHED_BUDGET)
    return replace(base, max_tokens=PUBLISHED_BUDGET, model_args=args)


def published_call_body(role: str, model: str, sampling: Mapping[str, Any]) -> dict[str, Any] | None:
    """comparability.PublishedBody: what the published run sent a call of `role`, in the terms the call was sent
    in (the protocol's model arguments say which; without them a Claude model's are Anthropic's), so that the same
    settings read alike."""
    protocol = sampling.get("model_args") if isinstance(sampling.get("model_args"), Mapping) else {}
    if "reasoning_effort" in protocol:
        return published_body(role, "openai")
    if "thinking_budget" in protocol or model.strip().lower().rsplit("/", 1)[-1].startswith("claude"):
        return published_body(role, "anthropic")
    return published_body(role, "openai")


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
