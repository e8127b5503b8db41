"""An EmpathyBench model backend over an inspect_ai model: an instrument's calls become inspect model calls.

inspect owns what it owns for every model call (its providers, retries, cache, `--max-connections`, token usage and
transcript); this backend only translates the request (messages and sampling, byte for byte) and the reply.
"""

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

from empathybench.models.base import Backend, ChatRequest, ChatResponse, Message
from empathybench.models.capabilities import is_truncated, split_think_tags

# inspect's model APIs that speak the OpenAI chat protocol to servers which read sampling fields the OpenAI API does
# not have from the body (vLLM, SGLang, llama.cpp servers): there, as with `openai/...` in EmpathyBench,
# top_k / min_p / repeat_penalty go in the request body; other APIs take top_k only (inspect's own field).
OPENAI_PROTOCOL_APIS = frozenset({"openai", "openai-api", "vllm", "sglang", "llama-cpp-python", "ollama", "together"})
# inspect's stop reasons in the OpenAI spelling EmpathyBench records (instruments read "length").
_FINISH_REASONS = {"max_tokens": "length", "model_length": "length", "stop": "stop", "tool_calls": "tool_calls"}


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
        # The user's own extra_body (`--generate-config`, `-M`) is kept; the protocol's sampling fields win.
        user_body = dict(self.inspect_model.config.extra_body or {})
        return GenerateConfig(
            temperature=sampling.temperature,
            max_tokens=sampling.max_tokens,
            top_p=sampling.top_p,
            top_k=None if self.provider in OPENAI_PROTOCOL_APIS else sampling.top_k,
            seed=sampling.seed,
            stop_seqs=list(sampling.stop) or None,
            extra_body={**user_body, **body} or None,
        )

    def request_parameters(self, request: ChatRequest) -> dict[str, Any]:
        """What this request carries besides the messages, as handed to inspect (recorded with each call)."""
        config = self.generate_config(request).model_dump(exclude_none=True)
        config.update(config.pop("extra_body", {}))
        return {"model": f"{self.provider}/{self.model}", **config}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        output = await self.inspect_model.generate(
            [_inspect_message(m) for m in request.messages], config=self.generate_config(request)
        )
        return response_of(output)

    async def aclose(self) -> None:
        return None  # inspect owns its models' clients


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
