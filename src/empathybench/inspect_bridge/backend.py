"""An EmpathyBench model backend over an inspect_ai model: an instrument's calls become inspect model calls.

inspect owns what it owns for every model call (its providers, retries, cache, `--max-connections`, token usage and
transcript); this backend translates the request (messages and sampling, byte for byte) and the reply, and keeps
with each call the body inspect's provider actually built (wire.py): a provider may change it.
"""

import json
from collections.abc import Mapping
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentReasoning,
    GenerateConfig,
    Model,
    ModelName,
    ModelOutput,
)
from inspect_ai.util import LimitExceededError

from empathybench.inspect_bridge.wire import call_details, changes_text
from empathybench.models.base import Backend, ChatRequest, ChatResponse, Message, RequestRejectedError
from empathybench.models.capabilities import ModelArgs, is_truncated, split_think_tags

# inspect's model APIs that speak the OpenAI chat protocol to servers which read sampling fields the OpenAI API does
# not have from the body (vLLM, SGLang, llama.cpp servers): there, as with `openai/...` in EmpathyBench,
# top_k / min_p / repeat_penalty go in the request body; other APIs take top_k only (inspect's own field).
OPENAI_PROTOCOL_APIS = frozenset({"openai", "openai-api", "vllm", "sglang", "llama-cpp-python", "ollama", "together"})
# inspect's stop reasons in the OpenAI spelling EmpathyBench records (instruments read "length").
_FINISH_REASONS = {"max_tokens": "length", "model_length": "length", "stop": "stop", "tool_calls": "tool_calls"}
LOCAL_SERVER_HINT = "for a local server use openai-api/<service>/<model>, vllm/ or sglang/ (docs/inspect.md)"


def _inspect_message(message: Message) -> ChatMessage:
    if message.role == "system":
        return ChatMessageSystem(content=message.content)
    if message.role == "assistant":
        return ChatMessageAssistant(content=message.content)
    return ChatMessageUser(content=message.content)


class InspectBackend(Backend):
    """`Backend` (models/base.py) over one inspect `Model` (the task's model, or the `grader` role's)."""

    default_concurrency = 1024  # inspect's --max-connections bounds the calls in flight, not the engine

    def __init__(self, model: Model, role: str | None = None) -> None:
        self.inspect_model = model
        name = ModelName(model)
        self.provider = name.api
        self.model = name.name
        self.role = role
        self.base_url = getattr(model.api, "base_url", None)
        # The details of the calls that failed (an answered call's are in its reply's `extra`).
        self.failed_calls: list[dict[str, Any]] = []

    def identity(self) -> dict[str, Any]:
        # The same keys as EmpathyBench's own backends (an instrument may read provider / model / base_url, e.g. to
        # leave out a field that api.openai.com does not take), plus where the call is made.
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url, "harness": "inspect_ai"}

    def set_request_timeout(self, seconds: float) -> None:
        """inspect bounds its own calls (its --timeout and its providers' clients)."""

    def generate_config(self, request: ChatRequest) -> GenerateConfig:
        """The instrument's sampling as inspect's GenerateConfig (fields left None are not sent)."""
        sampling = request.sampling
        body: dict[str, Any] = {}
        if self.provider in OPENAI_PROTOCOL_APIS:
            named = (("top_k", sampling.top_k), ("min_p", sampling.min_p), ("repeat_penalty", sampling.repeat_penalty))
            body = {key: value for key, value in named if value is not None}
        # What a protocol gives this model besides its sampling (Sampling.model_args: e.g. a published judge's
        # reasoning effort and whole budget), in inspect's terms; inspect's own config for the model decides the rest.
        # A reasoning setting the user's own config gives, in any spelling, replaces the protocol's (one field on
        # the wire, never two that disagree); the protocol's other sampling fields win over the user's extra_body.
        user_body = dict(self.inspect_model.config.extra_body or {})
        args = sampling.model_args
        if args is not None:
            args = args.without(self._user_args().settings_named())
            body.update(args.body_fields())
        return GenerateConfig(
            temperature=sampling.temperature,
            max_tokens=args.max_tokens if args is not None and args.max_tokens is not None else sampling.max_tokens,
            top_p=sampling.top_p,
            top_k=None if self.provider in OPENAI_PROTOCOL_APIS else sampling.top_k,
            seed=sampling.seed,
            stop_seqs=list(sampling.stop) or None,
            reasoning_effort=args.reasoning_effort if args is not None else None,  # type: ignore[arg-type]
            extra_body={**user_body, **body} or None,
        )

    def _user_args(self) -> ModelArgs:
        """The reasoning settings of inspect's own config for the model, as model arguments."""
        config = self.inspect_model.config
        return ModelArgs(
            reasoning_effort=config.reasoning_effort,
            thinking_budget=config.reasoning_tokens,
            extra_body=tuple((key, json.dumps(value)) for key, value in (config.extra_body or {}).items()),
        )

    def request_parameters(self, request: ChatRequest, config: GenerateConfig | None = None) -> dict[str, Any]:
        """What this request carries besides the messages, as asked of inspect (`config`: its GenerateConfig, when
        already made); what inspect's provider sent instead, if it differs, is in the reply's call details
        (`complete`)."""
        fields = (config or self.generate_config(request)).model_dump(exclude_none=True)
        fields.update(fields.pop("extra_body", {}))
        return {"model": f"{self.provider}/{self.model}", **fields}

    def _details(
        self, request: ChatRequest, config: GenerateConfig, event: Any, served_model: str | None
    ) -> dict[str, Any]:
        recorded = recorded_request(event)
        reason = (
            "answered from inspect's cache: nothing was sent"
            if event is not None and event.cache == "read"
            else "inspect recorded no request for this call"
        )
        return call_details(
            self.provider,
            self.request_parameters(request, config),
            request.messages_as_dicts(),
            request.sampling.as_dict(),
            recorded,
            served_model,
            unrecorded_reason=reason,
        )

    async def complete(self, request: ChatRequest) -> ChatResponse:
        messages = [_inspect_message(m) for m in request.messages]
        config = self.generate_config(request)
        try:
            output = await self.inspect_model.generate(messages, config=config)
        except Exception as exc:
            event = recorded_model_event(messages[-1].id if messages else None)
            details = self._details(request, config, event, None)
            # As the engine records a role's calls: "judge" for inspect's grader, "simulator" for the simulator.
            role = {"grader": "judge"}.get(self.role or "", self.role)
            self.failed_calls.append({"role": role, **details} if role else details)
            # Only a call that went out and failed is said anew; inspect's limits end a sample as inspect ends it.
            if event is not None and event.error is not None and not isinstance(exc, LimitExceededError):
                refused = self._refusal(details, exc)
                if refused is not None:
                    raise refused from exc
            raise
        event = recorded_model_event(messages[-1].id if messages else None)
        response = response_of(output)
        # Recorded with the call (the engine keeps ChatResponse.extra in the call's record): what was asked of
        # inspect, the body its provider sent, and what it changed.
        response.extra = self._details(request, config, event, output.model)
        return response

    def _refusal(self, details: dict[str, Any], exc: Exception) -> RequestRejectedError | None:
        """The failure of a request the provider changed, said as such (None: the provider changed nothing)."""
        changes = details.get("request_changes")
        to_responses = self.provider == "openai" and details.get("sent_api") == "responses"
        if not changes and not to_responses:
            return None
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        error = (str(cause).strip().splitlines() or [type(cause).__name__])[0][:300]
        said = f"inspect's {self.provider} provider changed the instrument's request ({changes_text(changes)})"
        if not changes:
            said = f"inspect's {self.provider} provider sent the request to the Responses API"
        hint = f"; {LOCAL_SERVER_HINT}" if self.provider == "openai" else ""
        return RequestRejectedError(getattr(exc, "status_code", None), f"{said} and the call failed: {error}{hint}")

    async def aclose(self) -> None:
        return None  # inspect owns its models' clients


ATTACHMENT_PREFIX = "attachment://"  # inspect keeps long texts of a transcript's events apart, named by this


def with_attachments(value: Any, attachments: Mapping[str, str]) -> Any:
    """`value` (inspect's recorded request) with each `attachment://<hash>` string replaced by the text inspect
    keeps under that hash (left as it is when inspect has no such text)."""
    if isinstance(value, str):
        if value.startswith(ATTACHMENT_PREFIX):
            return attachments.get(value.removeprefix(ATTACHMENT_PREFIX), value)
        return value
    if isinstance(value, Mapping):
        return {key: with_attachments(item, attachments) for key, item in value.items()}
    if isinstance(value, list):
        return [with_attachments(item, attachments) for item in value]
    return value


def recorded_request(event: Any) -> dict[str, Any] | None:
    """The request body inspect recorded with a ModelEvent's call, its texts whole (None: no call recorded)."""
    from inspect_ai.log import transcript

    if event is None or event.call is None:
        return None
    attachments = transcript().attachments
    if callable(attachments):  # a method in some inspect versions, a property in others
        attachments = attachments()
    resolved = with_attachments(event.call.request, attachments or {})
    return resolved if isinstance(resolved, dict) else None


def recorded_model_event(message_id: str | None) -> Any:
    """The latest ModelEvent of this sample's transcript whose input ends with the message `message_id` (the
    bridge makes new messages for every call, so their ids name the call; a retried call's last attempt is the
    latest), or None."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import transcript

    if message_id is None:
        return None
    for event in reversed(transcript().events):
        if isinstance(event, ModelEvent) and event.input and event.input[-1].id == message_id:
            return event
    return None


def response_of(output: ModelOutput) -> ChatResponse:
    """inspect's model output as EmpathyBench's reply: the text, thinking apart (inspect's reasoning blocks or
    `<think>` tags, as the OpenAI backend reads them), finish reason, and usage with cache reads and writes counted
    in the prompt tokens as EmpathyBench counts them."""
    text = output.completion or ""
    reasoning_blocks: list[str] = []
    if output.choices:
        content = output.choices[0].message.content
        if not isinstance(content, str):
            reasoning_blocks = [part.reasoning for part in content if isinstance(part, ContentReasoning)]
    answer, tagged, unclosed = split_think_tags(text) if text else ("", None, False)
    if tagged is not None:
        reasoning_blocks.append(tagged)
    stop = output.stop_reason
    finish_reason = _FINISH_REASONS.get(stop, stop) if stop != "unknown" else None
    usage = output.usage
    cache_read = (usage.input_tokens_cache_read or 0) if usage else 0
    cache_write = (usage.input_tokens_cache_write or 0) if usage else 0
    return ChatResponse(
        text=answer,
        reasoning="\n\n".join(reasoning_blocks) if reasoning_blocks else None,
        truncated=is_truncated(text and answer, finish_reason, unclosed),
        finish_reason=finish_reason,
        prompt_tokens=(usage.input_tokens + cache_read + cache_write) if usage else 0,
        completion_tokens=usage.output_tokens if usage else 0,
        cached_input_tokens=cache_read,
        cache_write_input_tokens=cache_write,
        model=output.model,
    )
