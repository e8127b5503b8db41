"""What a model takes and how it thinks: a capability table (data) plus the user's model arguments.

The table maps model-name patterns to capabilities; the first matching row wins. Model arguments (`-M KEY=VALUE`
for the model under test, `--judge-arg KEY=VALUE` for the judge) choose reasoning settings and override the
table for a model it does not know (a gateway alias, a new release).

Sources for the rows (provider documentation, read 2026-11):
- OpenAI reasoning models (o1, o3, o4-mini, gpt-5): "Reasoning models" guide and the chat-completions reference:
  `max_completion_tokens` (which counts reasoning tokens too) instead of `max_tokens`, `reasoning_effort`, and
  no `temperature`/`top_p` (HTTP 400 `unsupported_parameter`/`unsupported_value`).
- Anthropic extended thinking (Claude 3.7 Sonnet, Claude 4 family and later): "Building with extended
  thinking": `thinking: {type: "enabled", budget_tokens: N}` with N >= 1024 and N < `max_tokens`; temperature
  (other than 1) and top_k are not allowed with thinking.
- Open reasoning models behind OpenAI-compatible servers (DeepSeek-R1, Qwen3, QwQ, gpt-oss...): vLLM's reasoning
  parsers return the thinking in `message.reasoning_content` (newer servers: `reasoning`); without a parser it
  stays in the content between `<think>` and `</think>`.
"""

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from empathybench.errors import ModelConfigError


@dataclass(frozen=True)
class Capabilities:
    """How requests to one model are built and how its replies are read."""

    reasoning: bool = False  # the model thinks before answering: its token budget must leave room for that
    sampling: bool = True  # takes temperature / top_p (OpenAI reasoning models do not)
    token_field: str = "max_tokens"  # OpenAI body field of the token budget: max_tokens | max_completion_tokens
    reasoning_effort: bool = False  # takes `reasoning_effort` (OpenAI reasoning models)
    thinking: bool = False  # Anthropic extended thinking is available (enabled by a thinking budget)


_OPENAI_REASONING = Capabilities(
    reasoning=True, sampling=False, token_field="max_completion_tokens", reasoning_effort=True
)
_OPEN_REASONING = Capabilities(reasoning=True)
_CLAUDE_THINKING = Capabilities(thinking=True)

# (provider or "*", pattern on the model name's last path segment, lower case) -> capabilities; first match wins.
CAPABILITY_TABLE: tuple[tuple[str, str, Capabilities], ...] = (
    ("openai", r"^o[1345](-|$)", _OPENAI_REASONING),
    ("openai", r"^gpt-5(?!-chat)", _OPENAI_REASONING),  # gpt-5-chat-latest is the non-reasoning chat model
    (
        "openai",
        r"deepseek-r1|deepseek-reasoner|qwq|qwen3(?!.*instruct)|gpt-oss|magistral|phi-4-reasoning|r1-distill",
        _OPEN_REASONING,
    ),
    ("anthropic", r"^claude-(3-7-sonnet|sonnet-4|opus-4|haiku-4|4)", _CLAUDE_THINKING),
)

# Extra tokens a reasoning model is given beyond the instrument's answer budget when no thinking budget is set:
# an answer budget of a few tokens (a judge's "4") leaves no room to think, so the answer would never arrive.
DEFAULT_REASONING_ALLOWANCE = 8192
# Anthropic's documented minimum thinking budget.
ANTHROPIC_MIN_THINKING_BUDGET = 1024
DEFAULT_ANTHROPIC_THINKING_BUDGET = 4096
MAX_TOKENS_LIMIT = 1_000_000
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
TOKEN_FIELDS = ("max_tokens", "max_completion_tokens")
# One reply setting, its spellings: (ModelArgs field, request body field, sub-field of OpenRouter's `reasoning`).
# OpenRouter documents `reasoning: {"effort": X}` as `reasoning_effort: X`, and `reasoning: {"max_tokens": N}` as
# the thinking budget Anthropic calls `thinking.budget_tokens`. (The token budget has one spelling among the
# arguments, `max_tokens`; its body field is the capabilities' `token_field`, one field whatever it is.)
REASONING_SPELLINGS: dict[str, tuple[str, str, str]] = {
    "reasoning effort": ("reasoning_effort", "reasoning_effort", "effort"),
    "reasoning budget": ("thinking_budget", "thinking", "max_tokens"),
}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, allow_nan=False)


@dataclass(frozen=True)
class ModelArgs:
    """Validated model arguments; None means "not given" (the table or the instrument decides)."""

    reasoning: bool | None = None
    sampling: bool | None = None
    token_field: str | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    max_tokens: int | None = None
    # `extra_body.KEY=JSON`: fields the server reads beyond the OpenAI API (vLLM, SGLang, llama.cpp servers), as
    # (key, compact JSON) pairs in the order given, so the dataclass stays frozen and hashable.
    extra_body: tuple[tuple[str, str], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The given arguments only (part of the model's identity, so they separate cache entries and runs)."""
        given: dict[str, Any] = {k: v for k, v in self.__dict__.items() if v is not None and k != "extra_body"}
        if self.extra_body:
            given["extra_body"] = self.body_fields()
        return given

    def body_fields(self) -> dict[str, Any]:
        """The `extra_body.KEY=JSON` fields, decoded."""
        return {key: json.loads(text) for key, text in self.extra_body}

    def settings_named(self) -> frozenset[str]:
        """The reply settings these arguments set, whatever the spelling (REASONING_SPELLINGS): "reasoning effort",
        "reasoning budget"; `reasoning=false` names both (the model is not to think)."""
        body = self.body_fields()
        named = {
            setting
            for setting, (field, body_key, inner) in REASONING_SPELLINGS.items()
            if getattr(self, field) is not None
            or body_key in body
            or (isinstance(body.get("reasoning"), dict) and inner in body["reasoning"])
        }
        return frozenset(REASONING_SPELLINGS if self.reasoning is False else named)

    def without(self, settings: frozenset[str]) -> "ModelArgs":
        """These arguments without any spelling of `settings` (argument, extra_body field, OpenRouter's
        `reasoning` sub-field)."""
        if not settings:
            return self
        cleared = {REASONING_SPELLINGS[name][0]: None for name in settings}
        body = self.body_fields()
        for name in settings:
            _, body_key, inner = REASONING_SPELLINGS[name]
            body.pop(body_key, None)
            reasoning = body.get("reasoning")
            if isinstance(reasoning, dict) and inner in reasoning:
                rest = {k: v for k, v in reasoning.items() if k != inner}
                if rest:
                    body["reasoning"] = rest
                else:
                    del body["reasoning"]
        encoded = tuple((key, _compact(value)) for key, value in body.items())
        return replace(self, **cleared, extra_body=encoded)

    def under(self, user: "ModelArgs") -> "ModelArgs":
        """These arguments (a protocol's for one model) with the user's on top: a setting the user gives replaces
        the protocol's, whatever the spelling of either (one field on the wire, never two that disagree: the user's
        `reasoning_effort` removes a protocol's `reasoning: {"effort": ...}`, a thinking budget its reasoning
        budget), each other key the user gave wins, and the user's extra_body fields replace the protocol's of the
        same name."""
        base = self.without(user.settings_named())
        given = {k: v for k, v in user.__dict__.items() if v is not None and k != "extra_body"}
        body = dict(base.extra_body)
        body.update(user.extra_body)
        merged = replace(base, **given, extra_body=tuple(body.items()))
        if user.max_tokens is None and (user.thinking_budget is not None or user.reasoning):
            # The user's thinking is on top of the protocol's answer budget: the protocol's whole budget (which
            # would leave the thinking no room, and which Anthropic refuses below the thinking budget) yields.
            merged = replace(merged, max_tokens=None)
        return merged


MODEL_ARG_HELP: dict[str, str] = {
    "reasoning": "true|false: the model is (not) a reasoning model, whatever the capability table says",
    "sampling": "true|false: send temperature/top_p or not",
    "token_field": "max_tokens|max_completion_tokens: the OpenAI body field of the token budget",
    "reasoning_effort": "minimal|low|medium|high (OpenAI reasoning models)",
    "thinking_budget": "N tokens of thinking (Anthropic: extended thinking, N >= 1024; others: added to the budget)",
    "max_tokens": "N: the whole token budget of every call (answer and thinking), overriding the instruments'",
    "extra_body.KEY": "JSON: a field of the request body the server reads beyond the OpenAI API, e.g. "
    "extra_body.chat_template_kwargs='{\"enable_thinking\": false}' (vLLM, SGLang, llama.cpp servers)",
}
EXTRA_BODY_PREFIX = "extra_body."
# Request fields the protocol owns, never taken from extra_body: what the request is (model, messages, one answer,
# not streamed) and the sampling every instrument sets (a protocol's sampling is part of the measurement). The
# sampling fields an instrument sets only sometimes (top_k, min_p, repeat_penalty, seed, stop) are refused where
# an instrument's request sets them (see `merge_extra_body`).
PROTOCOL_FIELDS = ("model", "messages", "n", "stream", "system")
ALWAYS_SAMPLED_FIELDS = ("temperature", "top_p", "max_tokens", "max_completion_tokens")


def _parse_bool(key: str, value: str, what: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise ModelConfigError(f"{what} {key}={value}: {key} takes true or false")


def _parse_int(key: str, value: str, what: str, low: int) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        raise ModelConfigError(f"{what} {key}={value}: {key} takes a whole number") from None
    if not low <= number <= MAX_TOKENS_LIMIT:
        raise ModelConfigError(f"{what} {key}={value}: {key} must be between {low} and {MAX_TOKENS_LIMIT}")
    return number


def _check_body_field(field: str, what: str) -> None:
    if not field:
        raise ModelConfigError(f"{what} extra_body.KEY=JSON needs a KEY, e.g. extra_body.top_k=20")
    if field in PROTOCOL_FIELDS:
        raise ModelConfigError(f"{what} extra_body.{field}: {field} is the protocol's own, not a server option")
    if field in ALWAYS_SAMPLED_FIELDS:
        raise ModelConfigError(
            f"{what} extra_body.{field}: the instruments set {field} (a protocol's sampling is part of the "
            "measurement)" + ("; max_tokens=N sets the token budget" if "tokens" in field else "")
        )


def _json_value(key: str, value: str, what: str) -> str:
    """The value of `extra_body.KEY=VALUE` as compact JSON; a value that is not JSON is one line."""
    try:
        decoded = json.loads(value)
    except ValueError as exc:
        raise ModelConfigError(
            f'{what} {key}: the value must be JSON (e.g. 20, 0.05, true, "text", {{"a": 1}}): {exc.msg}'
        ) from None
    return _compact(decoded)


def merge_extra_body(
    protocol: dict[str, Any], args: ModelArgs, what: str = "--model-arg", *, request_fields: Iterable[str] = ()
) -> dict[str, Any]:
    """The request's body fields beyond the API (`protocol`: what the instrument's sampling puts there, e.g. min_p)
    with the user's `extra_body.KEY` fields; a user field that the request sets itself (in `protocol` or among its
    `request_fields`, e.g. seed or stop) is refused."""
    user = args.body_fields()
    clash = sorted(set(user) & (set(protocol) | set(request_fields)))
    if clash:
        raise ModelConfigError(
            f"{what} extra_body.{clash[0]}: this instrument's requests set {clash[0]} themselves (a protocol's "
            "sampling is part of the measurement); drop it"
        )
    return {**protocol, **user}


def parse_model_args(pairs: list[str] | tuple[str, ...], what: str = "--model-arg") -> ModelArgs:
    """`KEY=VALUE` strings as ModelArgs; any mistake is one ModelConfigError line naming the option. A key given
    twice with the same value counts once; with different values it is refused (which one was meant is unknown)."""
    values: dict[str, Any] = {}
    body: dict[str, Any] = {}  # extra_body fields, in the order given
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ModelConfigError(f"{what} {pair!r} is not KEY=VALUE; keys: {', '.join(MODEL_ARG_HELP)}")
        if key.startswith(EXTRA_BODY_PREFIX):
            field = key.removeprefix(EXTRA_BODY_PREFIX)
            _check_body_field(field, what)
            _set_once(body, field, _json_value(key, value, what), f"{what} {key}")
            continue
        if key not in MODEL_ARG_HELP:
            raise ModelConfigError(f"{what} {key}: unknown key; known: {', '.join(MODEL_ARG_HELP)}")
        parsed: Any
        if key in ("reasoning", "sampling"):
            parsed = _parse_bool(key, value, what)
        elif key == "token_field":
            if value.strip() not in TOKEN_FIELDS:
                raise ModelConfigError(f"{what} token_field={value}: choose one of {', '.join(TOKEN_FIELDS)}")
            parsed = value.strip()
        elif key == "reasoning_effort":
            if value.strip().lower() not in REASONING_EFFORTS:
                raise ModelConfigError(f"{what} reasoning_effort={value}: choose one of {', '.join(REASONING_EFFORTS)}")
            parsed = value.strip().lower()
        else:  # thinking_budget, max_tokens
            parsed = _parse_int(key, value, what, 1)
        _set_once(values, key, parsed, f"{what} {key}")
    if body:
        values["extra_body"] = tuple(body.items())
    return ModelArgs(**values)


def _set_once(values: dict[str, Any], key: str, value: Any, named: str) -> None:
    """values[key] = value, unless another value was given for it (one line, values not shown: they may be keys)."""
    if key in values and (values[key] != value or type(values[key]) is not type(value)):
        raise ModelConfigError(f"{named} is given twice with different values; give it once")
    values[key] = value


def lookup_capabilities(provider: str, model: str) -> Capabilities:
    """The table's row for a model (matched on the last path segment of its name, lower case), or the default."""
    name = model.rsplit("/", 1)[-1].lower()
    for row_provider, pattern, capabilities in CAPABILITY_TABLE:
        if row_provider in ("*", provider) and re.search(pattern, name):
            return capabilities
    return Capabilities()


def resolve_capabilities(provider: str, model: str, args: ModelArgs, what: str = "--model-arg") -> Capabilities:
    """The table's capabilities with the user's overrides applied, checked against the provider."""
    caps = lookup_capabilities(provider, model)
    if provider == "anthropic":
        if args.reasoning is not None:
            caps = replace(caps, thinking=args.reasoning or caps.thinking, reasoning=args.reasoning)
        if args.thinking_budget is not None:
            caps = replace(caps, thinking=True, reasoning=True)
        if args.reasoning_effort is not None:
            raise ModelConfigError(f"{what} reasoning_effort is for OpenAI models; use thinking_budget=N for Claude")
        if args.token_field is not None:
            raise ModelConfigError(f"{what} token_field is for OpenAI-compatible servers, not anthropic/{model}")
        if args.thinking_budget is not None and args.thinking_budget < ANTHROPIC_MIN_THINKING_BUDGET:
            raise ModelConfigError(
                f"{what} thinking_budget={args.thinking_budget}: Anthropic needs at least "
                f"{ANTHROPIC_MIN_THINKING_BUDGET} tokens"
            )
        budget = args.thinking_budget or (DEFAULT_ANTHROPIC_THINKING_BUDGET if caps.reasoning else None)
        if args.max_tokens is not None and budget is not None and args.max_tokens <= budget:
            raise ModelConfigError(
                f"{what} max_tokens={args.max_tokens} must exceed the thinking budget ({budget}): "
                "Anthropic counts thinking inside max_tokens"
            )
    elif provider == "openai":
        if args.reasoning is not None:
            caps = replace(caps, reasoning=args.reasoning)
        if args.reasoning_effort is not None and not caps.reasoning:
            raise ModelConfigError(
                f"{what} reasoning_effort: {model} is not a known reasoning model; add reasoning=true if it is one"
            )
        if args.reasoning_effort is not None:
            caps = replace(caps, reasoning_effort=True)
    elif args.as_dict():
        raise ModelConfigError(f"{what} applies to openai/ and anthropic/ models, not to {provider}")
    if args.sampling is not None:
        caps = replace(caps, sampling=args.sampling)
    if args.token_field is not None:
        caps = replace(caps, token_field=args.token_field)
    if caps.thinking and caps.reasoning and args.sampling is True:
        raise ModelConfigError(f"{what} sampling=true: Anthropic allows no temperature/top_k with thinking")
    return caps


def token_budget(answer_tokens: int, caps: Capabilities, args: ModelArgs) -> tuple[int, int | None]:
    """(whole token budget to send, thinking budget or None) for an instrument's answer budget.

    `max_tokens=N` fixes the whole budget. Otherwise a reasoning model gets the answer budget plus room to think
    (the thinking budget, or DEFAULT_REASONING_ALLOWANCE), since its thinking counts against the same budget.
    """
    thinking: int | None = None
    if caps.reasoning:
        if caps.thinking:
            thinking = args.thinking_budget or DEFAULT_ANTHROPIC_THINKING_BUDGET
        else:
            thinking = args.thinking_budget or DEFAULT_REASONING_ALLOWANCE
    if args.max_tokens is not None:
        return args.max_tokens, thinking
    return answer_tokens + (thinking or 0), thinking


# --- reading replies ----------------------------------------------------------------------------------------

_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
TRUNCATING_FINISH_REASONS = frozenset({"length", "max_tokens"})


def split_think_tags(text: str) -> tuple[str, str | None, bool]:
    """(answer, reasoning or None, unclosed) from content that may carry `<think>...</think>`.

    An opening tag may be missing (chat templates that put `<think>` in the prompt, e.g. Qwen3 and DeepSeek-R1
    under vLLM without a reasoning parser): text before a lone `</think>` is reasoning. An opening tag without
    its closing tag means the model ran out of budget while thinking: no answer arrived.
    """
    stripped = text.lstrip()
    if stripped.startswith(_THINK_OPEN):
        body = stripped[len(_THINK_OPEN) :]
        end = body.find(_THINK_CLOSE)
        if end < 0:
            return "", body.strip(), True
        return body[end + len(_THINK_CLOSE) :].lstrip(), body[:end].strip(), False
    end = text.find(_THINK_CLOSE)
    if end >= 0 and _THINK_OPEN not in text[:end]:
        return text[end + len(_THINK_CLOSE) :].lstrip(), text[:end].strip(), False
    return text, None, False


def is_truncated(answer: str | None, finish_reason: str | None, unclosed_think: bool) -> bool:
    """Whether the answer never arrived: cut while thinking, or nothing but the budget ran out."""
    if unclosed_think:
        return True
    return (answer is None or not answer.strip()) and finish_reason in TRUNCATING_FINISH_REASONS
