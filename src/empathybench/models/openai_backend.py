"""Any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp server, Ollama, gateways)."""

import json
from typing import Any

from empathybench.errors import BackendUnavailableError, ModelConfigError
from empathybench.models.base import (
    ChatRequest,
    ChatResponse,
    TransientBackendError,
    normalise_response,
)
from empathybench.models.capabilities import (
    ModelArgs,
    is_truncated,
    merge_extra_body,
    split_think_tags,
    token_budget,
)
from empathybench.models.http_clients import sdk_http_client
from empathybench.models.reply_bounds import (
    reply_limit_scope,
)
from empathybench.models.sdk_backend import SdkBackend
from empathybench.models.sdk_errors import engine_error, sdk_failures
from empathybench.redaction import redact

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# The request options `chat.completions.create` passes to the SDK's POST (bearer-token auth from the API key).
_BEARER_AUTH: Any = {"security": {"bearer_auth": True}}


class OpenAIBackend(SdkBackend):
    provider = "openai"

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
            url_variable="OPENAI_BASE_URL",
            default_url=OPENAI_DEFAULT_BASE_URL,
            api_key=api_key,
            api_key_env=api_key_env,
            key_variable="OPENAI_API_KEY",
            max_reply_bytes=max_reply_bytes,
        )
        if api_key_env and not key:
            raise ModelConfigError(f"{api_key_env} is not set; export it (api_key_env of {args_option})")
        if not key:
            if self.base_url == OPENAI_DEFAULT_BASE_URL:
                raise ModelConfigError(
                    "OPENAI_API_KEY is not set; export it, or point --base-url / OPENAI_BASE_URL "
                    "at an OpenAI-compatible server that needs no key"
                )
            key = "no-key"  # local servers (vLLM, llama.cpp, Ollama) ignore it, but the SDK wants one
        self._api_key = key

    def _new_client(self) -> Any:
        import openai

        self._openai = openai
        # The engine owns retries: the SDK must not. The HTTP client is the SDK's own (models/http_clients.py).
        return openai.AsyncOpenAI(
            base_url=self._request_url,
            api_key=self._api_key,
            default_query=self._default_query or None,
            max_retries=0,
            timeout=self._timeout_s,
            http_client=sdk_http_client(openai),
        )

    def identity(self) -> dict[str, Any]:
        identity = {"provider": self.provider, "model": self.model, "base_url": self.base_url}
        if self.args.as_dict():  # only when given, so that caches of runs without model args stay valid
            identity["model_args"] = self.args.as_dict()
        if self.api_key_env:
            identity["api_key_env"] = self.api_key_env
        return identity

    def request_arguments(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments of `chat.completions.create` for this request, after the capability rules."""
        return {**self._fields(request), "messages": request.messages_as_dicts()}

    def _fields(self, request: ChatRequest) -> dict[str, Any]:
        """Everything but the messages (cheap to build for every record)."""
        s = request.sampling
        args, caps = self.settings(request)
        budget, _ = token_budget(s.max_tokens, caps, args)
        kwargs: dict[str, Any] = {"model": self.model}
        if caps.sampling:
            kwargs["temperature"] = s.temperature
            if s.top_p is not None:
                kwargs["top_p"] = s.top_p
        kwargs[caps.token_field] = budget
        if caps.reasoning_effort and args.reasoning_effort is not None:
            kwargs["reasoning_effort"] = args.reasoning_effort
        if s.seed is not None:
            kwargs["seed"] = s.seed
        if s.stop:
            kwargs["stop"] = list(s.stop)
        extra = {k: v for k, v in (("top_k", s.top_k), ("min_p", s.min_p)) if v is not None}
        if s.repeat_penalty is not None:
            extra["repeat_penalty"] = s.repeat_penalty
        # Understood by vLLM / llama.cpp servers, not by api.openai.com; the user's `extra_body.KEY` fields join them.
        body = merge_extra_body(extra if caps.sampling else {}, args, self._args_option, request_fields=kwargs)
        if body:
            kwargs["extra_body"] = body
        return kwargs

    def request_parameters(self, request: ChatRequest) -> dict[str, Any]:
        """What the request body carries besides the messages, as sent (recorded with each call)."""
        fields = self._fields(request)
        fields.update(fields.pop("extra_body", {}))
        return fields

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body of the request: `request_arguments` with its `extra_body` merged in, as the SDK sends it."""
        body = self.request_arguments(request)
        body.update(body.pop("extra_body", {}))
        return body

    async def _complete(self, client: Any, request: ChatRequest) -> ChatResponse:
        openai = self._openai
        try:
            with reply_limit_scope(self.reply_limit(request)):
                completion = await _sdk_post(client, self.request_body(request))
        except sdk_failures(openai) as exc:
            not_found = BackendUnavailableError(
                f"{self.base_url} has no model {self.model!r} or no chat-completions endpoint (HTTP 404)"
            )
            raise engine_error(openai, exc, where=self.base_url, not_found=not_found, key_name=self.key_name) from exc
        return _to_response(completion)


async def _sdk_post(client: Any, body: dict[str, Any]) -> Any:
    """The chat call through the SDK's own POST with the finished body, the reply read as JSON (checked field by
    field later). `chat.completions.create` would first walk every message through its type-driven transform,
    which changes nothing in plain role/content strings, and build pydantic models of the reply (issue 13:
    bench/bench_emotionbench_full.py); the path, headers, auth, timeout and error handling are the same."""
    return json.loads(await client.post("/chat/completions", cast_to=bytes, body=body, options=_BEARER_AUTH))


def _get(value: Any, name: str) -> Any:
    """A field of a JSON object; None when absent or when `value` is not an object."""
    return value.get(name) if isinstance(value, dict) else None


def _to_response(completion: Any) -> ChatResponse:
    """Turn a completion (the JSON body, parsed) into our record, secrets redacted (a server may echo what it was
    sent, the key included); a body without a message counts as malformed."""
    choices = _get(completion, "choices")
    if not choices or not isinstance(choices, list | tuple):
        raise TransientBackendError("malformed", "response has no choices")
    choice = choices[0]
    message = _get(choice, "message")
    text = _get(message, "content")
    if message is None or (text is not None and not isinstance(text, str)):
        raise TransientBackendError("malformed", "response choice has no message")
    usage = _get(completion, "usage")
    finish_reason = _get(choice, "finish_reason")
    # Thinking arrives in its own field (vLLM reasoning parsers, DeepSeek, OpenRouter) or inside the content.
    reasoning = _reasoning_field(message)
    answer, tagged, unclosed = split_think_tags(text) if text else ("", None, False)
    if tagged is not None:
        reasoning = tagged if reasoning is None else f"{reasoning}\n\n{tagged}"
    # Nothing validates the body: usage may be "abc", 1e400 or -5, text may hold lone surrogates.
    return normalise_response(
        ChatResponse(
            text=redact(answer),
            reasoning=None if reasoning is None else redact(reasoning),
            truncated=is_truncated(text and answer, finish_reason, unclosed),
            finish_reason=finish_reason,
            prompt_tokens=_get(usage, "prompt_tokens"),
            completion_tokens=_get(usage, "completion_tokens"),
            # OpenAI's automatic prompt caching: the part of prompt_tokens read from the cache.
            cached_input_tokens=_get(_get(usage, "prompt_tokens_details"), "cached_tokens"),
            model=_get(completion, "model"),
        )
    )


def _reasoning_field(message: Any) -> str | None:
    """The thinking a server returned beside the content (`reasoning_content`, or `reasoning`), if any text."""
    for name in ("reasoning_content", "reasoning"):
        value = _get(message, name)
        if isinstance(value, str) and value:
            return value
    return None
