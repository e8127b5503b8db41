"""Model specs `provider/model` → backends."""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from empathybench.errors import ModelConfigError
from empathybench.models.base import Backend, Canned
from empathybench.models.capabilities import ModelArgs, parse_model_args, resolve_capabilities

PROVIDERS: dict[str, str] = {
    "local": "the embedded SmolLM2-135M-Instruct, in process (needs the `local` extra); no key, no network",
    "llamacpp": "llamacpp/<path.gguf>: any GGUF file, in process through llama-cpp-python",
    "openai": "openai/<model>: any OpenAI-compatible server (OPENAI_BASE_URL or --base-url, OPENAI_API_KEY)",
    "anthropic": "anthropic/<model>: Anthropic's Messages API (ANTHROPIC_API_KEY)",
    "scripted": "scripted/<name>: canned answers for tests and demos (echo, fives, zeros, refuse)",
}


@dataclass(frozen=True)
class ModelSpec:
    provider: str
    model: str

    def __str__(self) -> str:
        return self.provider if self.provider == "local" else f"{self.provider}/{self.model}"


def parse_model_spec(spec: str) -> ModelSpec:
    spec = spec.strip()
    if spec == "local":
        return ModelSpec("local", "smollm2-135m-instruct")
    provider, sep, model = spec.partition("/")
    if not sep or not model:
        raise ModelConfigError(
            f"model spec {spec!r} is not provider/model; use one of: local, "
            + ", ".join(f"{p}/<model>" for p in PROVIDERS if p != "local")
        )
    if provider not in PROVIDERS:
        raise ModelConfigError(f"unknown provider {provider!r} in {spec!r}; known: {', '.join(PROVIDERS)}")
    return ModelSpec(provider, model)


# The role arguments that say where a role's calls go and with which key, rather than how the model answers.
ENDPOINT_ARGS = {
    "base_url": "URL of the role's server (openai/ and anthropic/; default: its provider's, or *_BASE_URL)",
    "api_key_env": "NAME of the environment variable its API key is read from (default OPENAI_API_KEY / "
    "ANTHROPIC_API_KEY); the key itself is never given on the command line",
}
ENDPOINT_PROVIDERS = ("openai", "anthropic")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Endpoint:
    """Where one model role's calls go: its server's URL and the variable its API key is read from (None: the
    provider's defaults). Never the key itself."""

    base_url: str | None = None
    api_key_env: str | None = None


def split_endpoint_args(pairs: Sequence[str], what: str) -> tuple[Endpoint, tuple[str, ...]]:
    """The endpoint arguments (`base_url=`, `api_key_env=`) among a role's KEY=VALUE arguments, and the others."""
    found: dict[str, str] = {}
    rest: list[str] = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or key not in ENDPOINT_ARGS:
            rest.append(pair)
            continue
        if key in found:
            raise ModelConfigError(f"{what} {key} is given twice")
        value = value.strip()
        if not value:
            raise ModelConfigError(f"{what} {key} is empty")
        if key == "api_key_env" and not _ENV_NAME.match(value):
            raise ModelConfigError(
                f"{what} api_key_env must name an environment variable (e.g. DEEPSEEK_API_KEY), not a key"
            )
        found[key] = value
    return Endpoint(found.get("base_url"), found.get("api_key_env")), tuple(rest)


def check_model_args(spec: ModelSpec | str, pairs: list[str] | tuple[str, ...], what: str = "--model-arg") -> ModelArgs:
    """The model arguments for `spec`, validated against its provider and capabilities (one-line errors)."""
    if isinstance(spec, str):
        spec = parse_model_spec(spec)
    args = parse_model_args(pairs, what)
    resolve_capabilities(spec.provider, spec.model, args, what)
    return args


def check_endpoint(spec: ModelSpec, endpoint: Endpoint, what: str) -> None:
    """An endpoint only where the provider has one (a model in process has no server and no key)."""
    if spec.provider not in ENDPOINT_PROVIDERS and (endpoint.base_url or endpoint.api_key_env):
        given = "base_url" if endpoint.base_url else "api_key_env"
        raise ModelConfigError(f"{what} {given} is for openai/ and anthropic/ models, not {spec}")


def create_backend(
    spec: ModelSpec | str,
    base_url: str | None = None,
    model_args: list[str] | tuple[str, ...] = (),
    args_option: str = "--model-arg",
    canned: Mapping[str, Canned] | None = None,
    api_key_env: str | None = None,
    max_reply_bytes: int | None = None,
) -> Backend:
    """The backend of `spec`; `canned` (request tag -> answer) is what a scripted model answers each instrument;
    `base_url` and `api_key_env` are the role's endpoint (None: the provider's defaults); `max_reply_bytes` fixes
    the limit of every reply of a server (models/reply_bounds.py)."""
    if isinstance(spec, str):
        spec = parse_model_spec(spec)
    args = check_model_args(spec, model_args, args_option)
    check_endpoint(spec, Endpoint(base_url, api_key_env), args_option)
    # What an HTTP provider's backend takes besides the model's name: its endpoint, arguments and reply limit.
    http = {"base_url": base_url, "args": args, "args_option": args_option, "api_key_env": api_key_env}
    if spec.provider == "openai":
        from empathybench.models.openai_backend import OpenAIBackend

        return OpenAIBackend(spec.model, **http, max_reply_bytes=max_reply_bytes)
    if spec.provider == "anthropic":
        from empathybench.models.anthropic_backend import AnthropicBackend

        return AnthropicBackend(spec.model, **http, max_reply_bytes=max_reply_bytes)
    if spec.provider == "local":
        from empathybench.models.llamacpp_backend import LlamaCppBackend, locate_embedded_gguf

        return LlamaCppBackend(locate_embedded_gguf(), model_name="smollm2-135m-instruct")
    if spec.provider == "llamacpp":
        from empathybench.models.llamacpp_backend import LlamaCppBackend

        return LlamaCppBackend(Path(spec.model).expanduser())
    if spec.provider == "scripted":
        from empathybench.models.scripted import ScriptedBackend

        return ScriptedBackend(spec.model, canned=canned)
    raise ModelConfigError(f"unknown provider {spec.provider!r}")
