"""Anthropic's Messages API (non-streaming), through the official SDK.

Sampling settings and SDK versions: SDK releases before 2.0 take `temperature`, `top_p` and `top_k` as arguments
of `messages.create` and send `anthropic-version: 2023-06-01`. From 2.0 (API version 2026-10-21, sent by default)
the SDK has no such arguments and the API answers 400 to any of them, even at their defaults; the API keeps
accepting them under `anthropic-version: 2023-06-01`. A benchmark's protocol fixes its sampling (EQ-Bench asks
for temperature 0.01, judges for near-greedy decoding), so with an SDK that lacks the arguments this backend asks
for API version 2023-06-01 and sends the settings in the request body. Which path is taken is read from the
installed SDK's `messages.create` signature, not from its version number.
"""

import inspect
from typing import Any

from empathybench.errors import BackendUnavailableError, ModelConfigError
from empathybench.models.base import (
    ChatRequest,
    ChatResponse,
    Sampling,
    TransientBackendError,
    normalise_response,
)
from empathybench.models.capabilities import (
    ModelArgs,
    is_truncated,
    merge_extra_body,
    token_budget,
)
from empathybench.models.http_clients import sdk_http_client
from empathybench.models.prompt_cache import mark_anthropic_prefix
from empathybench.models.reply_bounds import (
    reply_limit_scope,
)
from empathybench.models.sdk_backend import SdkBackend
from empathybench.models.sdk_errors import engine_error, sdk_failures, sdk_message
from empathybench.redaction import redact

ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"
# The API version that still takes temperature/top_p/top_k (see the module docstring).
SAMPLING_API_VERSION = "2023-06-01"
SAMPLING_ARGUMENTS = ("temperature", "top_p", "top_k")


def sdk_takes_sampling_arguments(create: Any) -> bool:
    """Whether an SDK's `messages.create` has `temperature`, `top_p` and `top_k` parameters."""
    try:
        parameters = inspect.signature(create).parameters
    except (TypeError, ValueError):
        return False
    return all(name in parameters for name in SAMPLING_ARGUMENTS)


def sampling_fields(sampling: Sampling) -> dict[str, Any]:
    """The sampling settings as Messages API body fields.

    `top_p` only when it narrows: recent Claude models refuse temperature and top_p together, and 1.0 is the
    API's default anyway. `seed`, `min_p` and `repeat_penalty` have no Messages API equivalent.
    """
    fields: dict[str, Any] = {"temperature": sampling.temperature}
    if sampling.top_p is not None and sampling.top_p < 1.0:
        fields["top_p"] = sampling.top_p
    if sampling.top_k is not None:
        fields["top_k"] = sampling.top_k
    return fields


class AnthropicBackend(SdkBackend):
    provider = "anthropic"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        args: ModelArgs | None = None,
        args_option: str = "--model-arg",
        api_key_env: str | None = None,
        max_reply_bytes: int | None = None,
    ) -> None:
        key = self._set_up(
            model,
            args=args,
            args_option=args_option,
            base_url=base_url,
            url_variable="ANTHROPIC_BASE_URL",
            default_url=ANTHROPIC_DEFAULT_BASE_URL,
            api_key=api_key,
            api_key_env=api_key_env,
            key_variable="ANTHROPIC_API_KEY",
            max_reply_bytes=max_reply_bytes,
        )
        if not key:
            raise ModelConfigError(f"{self.key_name} is not set; export it to use anthropic/{model}")
        self._api_key = key
        import anthropic

        self._anthropic = anthropic
        self._sampling_as_arguments = sdk_takes_sampling_arguments(anthropic.resources.AsyncMessages.create)
        # The API version the requests ask for: it decides which fields the API takes, so it is part of identity.
        self.api_version: str | None = (
            getattr(getattr(anthropic, "_constants", None), "ANTHROPIC_API_VERSION", None)
            if self._sampling_as_arguments
            else SAMPLING_API_VERSION
        )

    def _new_client(self) -> Any:
        anthropic = self._anthropic
        headers: dict[str, str] = {}
        if not self._sampling_as_arguments:
            # x-api-key as well as the SDK's Authorization: Bearer, as API version 2023-06-01 clients send it
            # (the API reads x-api-key when both are present; proxies built for that version read only it).
            headers = {"anthropic-version": SAMPLING_API_VERSION, "X-Api-Key": self._api_key}
        # The engine owns retries, so the SDK must not retry.
        return anthropic.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self._request_url,
            default_headers=headers or None,
            default_query=self._default_query or None,
            max_retries=0,
            timeout=self._timeout_s,
            http_client=sdk_http_client(anthropic),
        )

    def identity(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "api_version": self.api_version,
            **({"model_args": self.args.as_dict()} if self.args.as_dict() else {}),
            **({"api_key_env": self.api_key_env} if self.api_key_env else {}),
        }

    def request_arguments(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments of `messages.create` for this request."""
        s = request.sampling
        args, caps = self.settings(request)
        budget, thinking_budget = token_budget(s.max_tokens, caps, args)
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        # The shared prefix (system prompt, earlier turns) marked for Anthropic's prompt cache; texts unchanged.
        marked_system, messages = mark_anthropic_prefix(
            system, [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"]
        )
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": budget,
        }
        thinking = caps.thinking and caps.reasoning and thinking_budget is not None
        # With thinking on, the API refuses temperature (other than 1) and top_k: the thinking sampler is fixed.
        fields = sampling_fields(s) if caps.sampling and not thinking else {}
        body_fields: dict[str, Any] = {}
        if self._sampling_as_arguments:
            kwargs.update(fields)
        else:
            body_fields.update(fields)
        if thinking:  # in the body, whatever the SDK's signature knows
            body_fields["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
        if s.stop:
            kwargs["stop_sequences"] = list(s.stop)
        body_fields = merge_extra_body(body_fields, args, self._args_option, request_fields=kwargs)
        if body_fields:
            kwargs["extra_body"] = body_fields
        if marked_system:
            kwargs["system"] = marked_system
        return kwargs

    def request_parameters(self, request: ChatRequest) -> dict[str, Any]:
        """What the request body carries besides the messages and system prompt, as sent (recorded per call)."""
        kwargs = self.request_arguments(request)
        for name in ("messages", "system"):
            kwargs.pop(name, None)
        kwargs.update(kwargs.pop("extra_body", {}))
        return kwargs

    @property
    def where(self) -> str:
        """The server as messages name it."""
        return "Anthropic" if self.base_url == ANTHROPIC_DEFAULT_BASE_URL else self.base_url

    async def _complete(self, client: Any, request: ChatRequest) -> ChatResponse:
        anthropic = self._anthropic
        try:
            with reply_limit_scope(self.reply_limit(request)):
                message = await client.messages.create(**self.request_arguments(request))
        except sdk_failures(anthropic) as exc:
            not_found = BackendUnavailableError(
                f"{self.base_url} has no model {self.model!r} or no Messages endpoint (HTTP 404)"
            )
            raise engine_error(
                anthropic, exc, where=self.where, not_found=not_found, key_name=self.key_name, message=error_message
            ) from exc
        return _to_response(message)


def error_message(exc: Any) -> str:
    """The `error.message` of an Anthropic error body, else the SDK's message."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            kind = error.get("type")
            return f"{kind}: {error['message']}" if isinstance(kind, str) else error["message"]
    return sdk_message(exc)


def _field(value: Any, name: str) -> Any:
    """A field of an SDK object or of a JSON object (a batch result line), None when absent."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def _to_response(message: Any) -> ChatResponse:
    """Turn a message (an SDK object, or the JSON object of a batch result) into our record; a body without a
    content list counts as malformed."""
    content = _field(message, "content")
    if not isinstance(content, list):
        raise TransientBackendError("malformed", "response has no content list")
    text = "".join(
        block_text
        for block in content
        if (_field(block, "type") or "text") == "text" and isinstance(block_text := _field(block, "text"), str)
    )
    # Extended thinking comes in its own blocks (type "thinking"; "redacted_thinking" carries no readable text).
    thoughts = [
        thought
        for block in content
        if _field(block, "type") == "thinking" and isinstance(thought := _field(block, "thinking"), str)
    ]
    reasoning = redact("\n\n".join(thoughts)) if thoughts else None
    stop_reason = _field(message, "stop_reason")
    usage = _field(message, "usage")
    # The API's input_tokens counts only what came after the last cache breakpoint; prompt_tokens is the whole
    # input (as OpenAI counts it), with the parts read from and written to the prompt cache recorded beside it.
    cache_read = _token_count(_field(usage, "cache_read_input_tokens"))
    cache_write = _token_count(_field(usage, "cache_creation_input_tokens"))
    model = _field(message, "model")
    return normalise_response(
        ChatResponse(
            text=redact(text),  # a server may echo what it was sent, the key included
            reasoning=reasoning,
            truncated=is_truncated(text, stop_reason if isinstance(stop_reason, str) else None, False),
            finish_reason=stop_reason if isinstance(stop_reason, str) else None,
            prompt_tokens=_token_count(_field(usage, "input_tokens")) + cache_read + cache_write,
            cached_input_tokens=cache_read,
            cache_write_input_tokens=cache_write,
            completion_tokens=_token_count(_field(usage, "output_tokens")),
            model=model if isinstance(model, str) else None,
        )
    )


def _token_count(value: Any) -> int:
    """A usage count as a non-negative int; anything else (missing, text, huge floats) counts as 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    try:
        return max(0, int(value))
    except (OverflowError, ValueError):
        return 0
