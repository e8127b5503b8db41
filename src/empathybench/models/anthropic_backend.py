"""Anthropic's Messages API."""

import os
from typing import Any

from empathybench.errors import BackendUnavailableError, ModelConfigError
from empathybench.models.base import (
    ChatRequest,
    ChatResponse,
    RequestRejectedError,
    TransientBackendError,
    parse_retry_after,
)

REQUEST_TIMEOUT_S = 600.0


class AnthropicBackend:
    provider = "anthropic"
    default_concurrency = 16

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None) -> None:
        self.model = model
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ModelConfigError("ANTHROPIC_API_KEY is not set; export it to use anthropic/<model>")
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
        import anthropic

        self._anthropic = anthropic
        self._client = anthropic.AsyncAnthropic(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=REQUEST_TIMEOUT_S
        )

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        s = request.sampling
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"],
            "max_tokens": s.max_tokens,
            "temperature": s.temperature,
        }
        # Recent Claude models refuse temperature and top_p together; top_p is sent only when it narrows.
        if s.top_p is not None and s.top_p < 1.0:
            kwargs["top_p"] = s.top_p
        if s.top_k is not None:
            kwargs["top_k"] = s.top_k
        if s.stop:
            kwargs["stop_sequences"] = list(s.stop)
        if system:
            kwargs["system"] = system
        anthropic = self._anthropic
        try:
            message = await self._client.messages.create(**kwargs)
        except anthropic.RateLimitError as exc:
            raise TransientBackendError(
                "rate_limited", "429 rate limited", parse_retry_after(exc.response.headers.get("retry-after"))
            ) from exc
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
            raise BackendUnavailableError(
                f"Anthropic refused the API key (HTTP {exc.status_code}); check ANTHROPIC_API_KEY"
            ) from exc
        except anthropic.NotFoundError as exc:
            raise BackendUnavailableError(f"Anthropic has no model {self.model!r} (HTTP 404)") from exc
        except anthropic.APIStatusError as exc:
            status = exc.status_code
            if status >= 500 or status in (408, 529):
                raise TransientBackendError(
                    "server_error",
                    f"HTTP {status}",
                    parse_retry_after(exc.response.headers.get("retry-after")),
                ) from exc
            raise RequestRejectedError(status, f"HTTP {status}: {exc.message}") from exc
        except anthropic.APITimeoutError as exc:
            raise TransientBackendError("timeout", "request timed out") from exc
        except anthropic.APIConnectionError as exc:
            raise TransientBackendError("connection", f"connection failed: {exc.__cause__ or exc}") from exc
        except (anthropic.APIResponseValidationError, ValueError) as exc:
            raise TransientBackendError("malformed", f"malformed response body: {exc}") from exc
        text = "".join(getattr(block, "text", "") for block in (message.content or []))
        usage = message.usage
        return ChatResponse(
            text=text,
            finish_reason=message.stop_reason,
            prompt_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            model=message.model,
        )

    async def aclose(self) -> None:
        await self._client.close()
