"""What a provider's batch API looks like to the engine (`--batch`): submit many requests, poll, read the results.

Each provider module (openai_batch, anthropic_batch) turns `ChatRequest`s into its batch format with the backend's
own `request_arguments` (so model arguments and capability rules apply exactly as on the live path) and turns the
result lines back into `ChatResponse`s with the backend's own reply parser.

A result file is untrusted input: its lines are read within `ResultFileBounds` (models/reply_bounds.py), and
`sort_results` decides which line answers which request. A line that cannot be read, names a request the batch
never held, answers with another model, or carries an error object where the answer belongs is reported with
its position; a request answered twice differently gets neither answer. Nothing doubtful is ever attached to a
request: it gets no answer from this batch, and is asked again.
"""

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from empathybench.models.base import ChatRequest, ChatResponse
from empathybench.models.prices import is_snapshot_of
from empathybench.models.reply_bounds import FileLine, ResultFileBounds
from empathybench.redaction import redact


@dataclass(frozen=True)
class EntryFailure:
    """One request of a batch that got no answer: retried in the next batch when `retryable`, else the item's error."""

    # "failed" (a 5xx/429 line), "rejected" (a 4xx line), "expired", "cancelled", "missing" (no line for it),
    # "malformed" (a line that could not be trusted: see sort_results)
    kind: str
    message: str
    retryable: bool


EntryOutcome = ChatResponse | EntryFailure


@dataclass(frozen=True)
class ResultLine:
    """One line of a batch's result files as its provider module read it."""

    where: str  # its position, as reported: "output file line 3"
    custom_id: str | None  # None: the line names no request (problem says why)
    outcome: EntryOutcome | None  # None: nothing usable on the line
    problem: str | None = None  # what is wrong with the line (reported in one line), else None


@dataclass
class SortedResults:
    """The outcome of each request of a batch, and one line per problem found in its result files."""

    outcomes: dict[str, EntryOutcome]
    problems: list[str]


MAX_SHOWN_CHARS = 80


def result_object(where: str, line: FileLine) -> dict[str, Any] | ResultLine:
    """The JSON object of one result-file line that names its request (`custom_id`), or the ResultLine saying what
    is wrong with the line (unread, cut off, not JSON, no custom_id); both providers' files are read so."""
    if line.data is None:
        return ResultLine(where, None, None, line.problem)
    try:
        data = json.loads(line.data)
    except ValueError:
        return ResultLine(where, None, None, "cut off (the file ends inside it)" if line.unterminated else "not JSON")
    if not isinstance(data, dict) or not isinstance(data.get("custom_id"), str):
        return ResultLine(where, None, None, "not a result line (no custom_id)")
    return data


def same_model(asked: str, answered: str | None) -> bool:
    """Whether a reply from model `answered` answers a request to `asked`: the same name (case aside), or a dated
    snapshot of it. A reply that names no model is taken (many OpenAI-compatible servers leave it out)."""
    if answered is None or answered == "":
        return True
    asked, answered = asked.lower(), answered.lower()
    if asked == answered:
        return True
    # A dated snapshot of the model asked for, or of the model its alias "...-latest" names.
    return is_snapshot_of(answered, asked.removesuffix("-latest"))


def _shown(text: str) -> str:
    """An untrusted name (custom_id, model) as a message may show it: redacted, cut, quoted."""
    return repr(redact(text)[:MAX_SHOWN_CHARS])


def sort_results(lines: Iterable[ResultLine], asked: Collection[str], model: str) -> SortedResults:
    """Which result line answers which request of a batch (`asked`: its custom_ids) sent to `model`.

    Every problem is one line naming the line's position. A line that names no request, or one never asked, is
    skipped; an answer by another model (a dated snapshot of it is the same model) is not an answer; a request
    answered twice is answered when both answers are the same, else by neither (no answer is ever attached to
    the wrong request): those requests have an EntryFailure "malformed", asked again like a failed entry.
    """
    outcomes: dict[str, EntryOutcome] = {}
    first_seen: dict[str, str] = {}
    doubted: set[str] = set()
    problems: list[str] = []
    for line in lines:
        if line.problem is not None:
            problems.append(f"{line.where}: {line.problem}")
        if line.custom_id is None or line.outcome is None:
            if line.problem is None:
                problems.append(f"{line.where}: no answer on it")
            continue
        custom_id, outcome = line.custom_id, line.outcome
        if custom_id not in asked:
            problems.append(f"{line.where}: custom_id {_shown(custom_id)} was never asked in this batch; skipped")
            continue
        if isinstance(outcome, ChatResponse) and not same_model(model, outcome.model):
            answered = _shown(str(outcome.model))
            problems.append(f"{line.where}: answered by model {answered}, not {_shown(model)}; not used")
            outcome = EntryFailure("malformed", f"the batch answered with model {answered}", retryable=True)
        if custom_id in doubted:
            problems.append(f"{line.where}: another answer to custom_id {_shown(custom_id)}; not used")
            continue
        if custom_id in first_seen:
            if outcomes[custom_id] == outcome:
                continue  # the same answer twice: no doubt about it
            doubted.add(custom_id)
            problems.append(
                f"{line.where}: custom_id {_shown(custom_id)} is answered differently on {first_seen[custom_id]}; "
                "neither answer is used"
            )
            outcomes[custom_id] = EntryFailure("malformed", "the batch answered it twice, differently", retryable=True)
            continue
        first_seen[custom_id] = line.where
        outcomes[custom_id] = outcome
    return SortedResults(outcomes, problems)


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

    def reply_limit(self, request: ChatRequest) -> int:
        """The most bytes the answer to `request` may take (the live path's limit, models/reply_bounds.py)."""
        ...

    async def submit(self, entries: Sequence[dict[str, Any]]) -> str:
        """Create one batch of these entries; its id."""
        ...

    async def poll(self, batch_id: str) -> BatchStatus: ...

    async def results(self, batch_id: str, bounds: ResultFileBounds) -> list[ResultLine]:
        """Every line of an ended batch's result files, read within `bounds` (see `sort_results` for what they
        mean)."""
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
