"""What a provider's batch API looks like to the engine (`--batch`): submit many requests, poll, read the results.

Each provider module (openai_batch, anthropic_batch) turns `ChatRequest`s into its batch format with the backend's
own `request_arguments` (so model arguments and capability rules apply exactly as on the live path) and turns the
result lines back into `ChatResponse`s with the backend's own reply parser.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from empathybench.models.base import ChatRequest, ChatResponse


@dataclass(frozen=True)
class EntryFailure:
    """One request of a batch that got no answer: retried in the next batch when `retryable`, else the item's error."""

    kind: str  # "failed" (a 5xx/429 line), "rejected" (a 4xx line), "expired", "cancelled", "missing"
    message: str
    retryable: bool


EntryOutcome = ChatResponse | EntryFailure


@dataclass
class BatchStatus:
    """A batch as one poll saw it."""

    # Common to both providers: validating, in_progress, finalizing or ended (OpenAI's completed, failed,
    # expired and cancelled, and Anthropic's ended, are all ended); the progress display shows it.
    state: str
    raw_status: str  # the provider's own word for it
    counts: dict[str, int] = field(default_factory=dict)
    # Why the provider refused the whole batch (OpenAI's "failed": the input did not validate), else None.
    failure: str | None = None

    @property
    def ended(self) -> bool:
        return self.state == "ended"


@dataclass(frozen=True)
class BatchLimits:
    """A provider's documented maximum size of one batch."""

    max_requests: int
    max_bytes: int


class BatchClient(Protocol):
    """One provider's batch API, bound to a backend (its client, its request rules)."""

    provider: str
    limits: BatchLimits

    def entry(self, custom_id: str, request: ChatRequest) -> dict[str, Any]:
        """The batch entry for one request, as the provider takes it."""
        ...

    async def submit(self, entries: Sequence[dict[str, Any]]) -> str:
        """Create one batch of these entries; its id."""
        ...

    async def poll(self, batch_id: str) -> BatchStatus: ...

    async def results(self, batch_id: str) -> dict[str, EntryOutcome]:
        """The outcome of every entry the provider reports, by custom_id (an ended batch)."""
        ...


def entry_size(entry: dict[str, Any]) -> int:
    """Bytes one entry takes in the batch (a JSONL line, or an element of a JSON array)."""
    return len(json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8")) + 1


def split_entries(entries: Sequence[dict[str, Any]], limits: BatchLimits) -> list[list[dict[str, Any]]]:
    """The entries in as few batches as the provider's limits allow (in order; an entry never split)."""
    chunks: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = 0
    # A little room under the byte limit for the envelope ({"requests": [...]} or multipart headers).
    budget = limits.max_bytes - 64 * 1024
    for entry in entries:
        length = entry_size(entry)
        if current and (len(current) >= limits.max_requests or size + length > budget):
            chunks.append(current)
            current, size = [], 0
        current.append(entry)
        size += length
    if current:
        chunks.append(current)
    return chunks
