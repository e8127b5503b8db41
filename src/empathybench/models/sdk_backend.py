"""What the backends on the official SDKs (`openai/`, `anthropic/`) share: the server's URL and the API key as
read, checked and registered as secrets, the reply limit, the SDK clients the calls are lent (models/http_clients.py)
and their timeout. Each backend adds how its SDK client is made (`_new_client`) and how a call is made with it
(`_complete`)."""

import os
from functools import lru_cache
from typing import Any

from empathybench.models.base import Backend, ChatRequest, ChatResponse
from empathybench.models.capabilities import Capabilities, ModelArgs, resolve_capabilities, token_budget
from empathybench.models.http_clients import SdkClients, check_api_key
from empathybench.models.reply_bounds import reply_limit, reply_limit_override
from empathybench.redaction import register_secret, register_url, split_url_query, strip_url_credentials

# The SDK's own timeout bounds each connect/read, not the whole request; the engine bounds the whole request
# (`Engine.request_timeout_s`) and sets this to the same value through `set_request_timeout`.
REQUEST_TIMEOUT_S = 600.0


class SdkBackend(Backend):
    default_concurrency = 16

    def _set_up(
        self,
        model: str,
        *,
        args: ModelArgs | None,
        args_option: str,
        base_url: str | None,
        url_variable: str,
        default_url: str,
        api_key: str | None,
        api_key_env: str | None,
        key_variable: str,
        max_reply_bytes: int | None,
    ) -> str | None:
        """Set what every SDK backend has; the API key found (given, or from `api_key_env` or `key_variable`),
        checked and registered as a secret, or None (each backend says what a missing key means)."""
        self.model = model
        self.args = args or ModelArgs()
        self.capabilities = resolve_capabilities(self.provider, model, self.args, args_option)
        self._args_option = args_option
        # Every reply's limit in bytes (`--max-reply-bytes`, EMPATHYBENCH_MAX_REPLY_BYTES), else derived per request.
        self.max_reply_bytes = reply_limit_override(max_reply_bytes)
        url = (base_url or os.environ.get(url_variable) or default_url).rstrip("/")
        register_url(url)
        # Credentials in the URL (user:password@, ?key=) are sent but never recorded or shown: base_url is the
        # URL without them; the SDK gets the query separately, as it appends its paths to the base URL.
        self._request_url, self._default_query = split_url_query(url)
        self.base_url = strip_url_credentials(url)
        # The variable the key is read from: the provider's, or the role's own (`api_key_env=NAME`).
        self.api_key_env = api_key_env
        self.key_name = api_key_env or key_variable
        key = api_key or os.environ.get(self.key_name)
        register_secret(key)
        if key:
            check_api_key(key, "the API key" if api_key else self.key_name)
        # Made at the first call: a fully cached run never imports the SDK.
        self._clients = SdkClients(self._new_client)
        self._timeout_s = REQUEST_TIMEOUT_S
        return key

    def set_request_timeout(self, seconds: float) -> None:
        """The SDK's timeout, set by the engine to its whole-request bound (`--timeout`) before the first call: it
        also bounds the calls the engine does not time itself (the batch API's uploads, polls and downloads)."""
        self._timeout_s = seconds
        self._clients.update(lambda client: client.with_options(timeout=seconds))

    def _get_client(self) -> Any:
        """The SDK client of the batch API (the first of the chat calls' clients)."""
        return self._clients.first()

    def _new_client(self) -> Any:
        raise NotImplementedError

    def settings(self, request: ChatRequest) -> tuple[ModelArgs, Capabilities]:
        """The model arguments and capabilities `request` is sent with: the user's, over the protocol's for this
        model where the request carries some (Sampling.model_args)."""
        protocol = request.sampling.model_args
        if protocol is None:
            return self.args, self.capabilities
        return _resolved(self.provider, self.model, protocol, self.args, self._args_option)

    def reply_limit(self, request: ChatRequest) -> int:
        """The most bytes the reply to `request` may have (models/reply_bounds.py): from the token budget sent."""
        args, caps = self.settings(request)
        budget, _ = token_budget(request.sampling.max_tokens, caps, args)
        return reply_limit(budget, self.max_reply_bytes)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        with self._clients.lease() as client:
            return await self._complete(client, request)

    async def _complete(self, client: Any, request: ChatRequest) -> ChatResponse:
        raise NotImplementedError

    async def aclose(self) -> None:
        await self._clients.aclose()


@lru_cache(maxsize=256)
def _resolved(
    provider: str, model: str, protocol: ModelArgs, user: ModelArgs, what: str
) -> tuple[ModelArgs, Capabilities]:
    """(the protocol's arguments under the user's, their capabilities for the model): a request is built three times
    per call (cache key, record, reply limit), with the same few argument sets in a run."""
    args = protocol.under(user)
    return args, resolve_capabilities(provider, model, args, what)
