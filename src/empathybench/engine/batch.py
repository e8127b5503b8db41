"""`--batch`: the engine's calls answered through the providers' batch APIs, one round of requests at a time.

While `--batch` is on, `Engine.generate` hands each request that the cache cannot answer to a `Batcher` instead of
calling the model. The `BatchRound` knows which item tasks are running: when every one of them waits for a reply
(and no request has come for a short settling moment), the round is complete and every batcher sends what it
collected as one batch (split only at the provider's documented size limits), polls it every
`poll_interval_s` seconds and hands each waiting call its reply, which then enters the cache and samples.jsonl as a
live reply does. Instruments that need several rounds (a re-ask, the judge after the model, a second turn) send
their next requests when the replies arrive, and those form the next round.

batches.jsonl in the run directory records each batch (id, provider, and what each custom_id stands for) when it
is created, before it is polled, and when its results were read. A run killed while polling finds the open batch
the next time (the custom_id is the call's cache key, the same for the same request) and polls it instead of
sending the requests again. The file holds ids and cache keys, never a request body, a key or a URL's credentials.

Entries that failed, expired or were cancelled go into the next batch (counted as retries); a rejected entry (a
4xx, as a live 400) becomes its item's error, as on the live path. The result files are untrusted: they are read
within their bounds (models/reply_bounds.py), and a line that cannot be read, names a request never asked, answers
with another model, holds an error object where the answer belongs, or answers a request a second time differently
is reported in one line with its position (`warn`, and the batch's "ended" event in batches.jsonl); no doubtful
answer is attached to a request, which is asked again instead. A request is put into at most 1 + `reasks` batches
(BATCH_REASKS more after the first); then it is asked live (`--batch-fallback live`, the default: billed at the
full price) or recorded as its item's error (`--batch-fallback fail`). Answers already in the cache or in
samples.jsonl are never touched.
"""

import asyncio
import contextlib
import json
import os
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from empathybench.engine.cache import warn_on_stderr
from empathybench.engine.engine import AskLiveError, CallFailedError, Engine, RetryPolicy, RunStats
from empathybench.models.base import (
    Backend,
    ChatRequest,
    ChatResponse,
    RequestRejectedError,
    TransientBackendError,
    normalise_response,
)
from empathybench.models.batching import (
    BatchClient,
    BatchStatus,
    EntryFailure,
    EntryOutcome,
    sort_results,
    split_entries,
)
from empathybench.models.reply_bounds import ResultFileBounds

DEFAULT_POLL_INTERVAL_S = 30.0
# A request that got no usable answer is put into at most this many more batches (each may take 24 h), then it is
# asked live or fails (`--batch-fallback`).
BATCH_REASKS = 2
FALLBACKS = ("live", "fail")
# At most this many problem lines of one batch's result files are printed (all of them up to JOURNAL_PROBLEMS go
# to batches.jsonl); the rest are counted.
SHOWN_PROBLEMS = 20
JOURNAL_PROBLEMS = 1000
# How long the round stays quiet (every item waiting, no new request) before its batch is sent: item code runs
# between its awaits without yielding, so a short moment is enough for every item to have asked.
SETTLE_S = 0.05
JOURNAL_FILE = "batches.jsonl"
_RNG = random.Random(0)  # backoff jitter of batch API calls

T = TypeVar("T")


def batch_client_for(backend: Backend) -> BatchClient | None:
    """The batch API of this backend's provider, or None when it has none (local models, scripted)."""
    from empathybench.models.anthropic_backend import AnthropicBackend
    from empathybench.models.openai_backend import OpenAIBackend

    if isinstance(backend, OpenAIBackend):
        from empathybench.models.openai_batch import OpenAIBatchClient

        return OpenAIBatchClient(backend)
    if isinstance(backend, AnthropicBackend):
        from empathybench.models.anthropic_batch import AnthropicBatchClient

        return AnthropicBatchClient(backend)
    return None


@dataclass
class _OpenBatch:
    batch_id: str
    provider: str
    custom_ids: set[str]
    claimed: bool = False


class BatchJournal:
    """batches.jsonl: every batch created for this run directory, and which of them have been read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._open: dict[str, _OpenBatch] = {}
        if path.exists():
            for line in path.read_bytes().splitlines():
                try:
                    event = json.loads(line)
                except ValueError:
                    continue  # a line cut by a kill: that batch was never recorded as created
                if not isinstance(event, dict) or not isinstance(event.get("batch_id"), str):
                    continue
                if event.get("event") == "submitted" and isinstance(event.get("requests"), dict):
                    ids = {key for key in event["requests"] if isinstance(key, str)}
                    self._open[event["batch_id"]] = _OpenBatch(event["batch_id"], str(event.get("provider")), ids)
                elif event.get("event") == "ended":
                    self._open.pop(event["batch_id"], None)

    @property
    def open_batches(self) -> list[str]:
        return list(self._open)

    def claim(self, provider: str, custom_ids: set[str]) -> list[tuple[str, set[str]]]:
        """Open batches of an earlier session that hold some of these requests: (batch id, those custom ids)."""
        found: list[tuple[str, set[str]]] = []
        left = set(custom_ids)
        for batch in self._open.values():
            if batch.claimed or batch.provider != provider:
                continue
            matched = batch.custom_ids & left
            if matched:
                batch.claimed = True
                found.append((batch.batch_id, batch.custom_ids))
                left -= matched
        return found

    def submitted(self, batch_id: str, provider: str, engine: str, requests: dict[str, dict[str, Any]]) -> None:
        self._open[batch_id] = _OpenBatch(batch_id, provider, set(requests), claimed=True)
        self._append(
            {
                "event": "submitted",
                "batch_id": batch_id,
                "provider": provider,
                "engine": engine,
                "time": datetime.now(UTC).isoformat(timespec="seconds"),
                "requests": requests,
            }
        )

    def ended(self, batch_id: str, status: str, counts: dict[str, int], problems: list[str] | None = None) -> None:
        self._open.pop(batch_id, None)
        event: dict[str, Any] = {
            "event": "ended",
            "batch_id": batch_id,
            "status": status,
            "counts": counts,
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        if problems:  # what was wrong with its result files, line by line
            event["problems"] = problems[:JOURNAL_PROBLEMS]
            if len(problems) > JOURNAL_PROBLEMS:
                event["problems_omitted"] = len(problems) - JOURNAL_PROBLEMS
        self._append(event)

    def _append(self, event: dict[str, Any]) -> None:
        # On disk before the batch is polled: a kill -9 a moment later must still find it.
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(event, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


@dataclass
class _Entry:
    request: ChatRequest
    describe: dict[str, Any]
    futures: list[asyncio.Future[EntryOutcome]] = field(default_factory=list)


class _ItemScope:
    """One running item: how many of its calls wait for a batch."""

    __slots__ = ("name", "waiting")

    def __init__(self, name: str) -> None:
        self.name = name
        self.waiting = 0


_CURRENT_ITEM: ContextVar[_ItemScope | None] = ContextVar("empathybench_batch_item", default=None)


class BatchRound:
    """Knows the running items and sends the collected requests when all of them wait (see the module docstring)."""

    def __init__(
        self,
        journal: BatchJournal,
        stats: RunStats,
        *,
        poll_interval_s: float = DEFAULT_POLL_INTERVAL_S,
        retry: RetryPolicy | None = None,
        settle_s: float = SETTLE_S,
        reasks: int = BATCH_REASKS,
        fallback: str = "live",
        warn: Callable[[str], None] | None = None,
    ) -> None:
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {FALLBACKS}, not {fallback!r}")
        self.journal = journal
        self.stats = stats
        self.poll_interval_s = poll_interval_s
        self.retry = retry or RetryPolicy()
        self.settle_s = settle_s
        self.reasks = reasks
        self.fallback = fallback
        self.warn = warn or warn_on_stderr
        self._warned_fallback = False
        self.batchers: list[Batcher] = []
        self.active = 0  # running items, plus calls made outside any item
        self.blocked = 0  # of those, how many wait for a batch
        self.counts: Counter[str] = Counter()
        self.states: dict[str, tuple[str, BatchStatus]] = {}  # batch id -> (engine label, last status)
        self._check_handle: asyncio.TimerHandle | None = None

    def attach(self, engine: Engine) -> "Batcher":
        """Make `engine` send its calls through a batch; refused (UserError) when its provider has no batch API."""
        client = batch_client_for(engine.backend)
        if client is None:
            raise ValueError(f"{engine.backend.provider} has no batch API")
        batcher = Batcher(self, client, engine.label, engine.backend.model)
        self.batchers.append(batcher)
        engine.batcher = batcher
        return batcher

    @contextlib.contextmanager
    def item(self, name: str) -> Iterator[None]:
        """The scope of one item task: while it runs, a round is complete only when it waits too."""
        scope = _ItemScope(name)
        token = _CURRENT_ITEM.set(scope)
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1
            _CURRENT_ITEM.reset(token)
            self.check_soon()  # the others may all be waiting

    def wait_started(self) -> _ItemScope | None:
        scope = _CURRENT_ITEM.get()
        if scope is None:  # a call outside any item counts as an item of its own while it waits
            self.active += 1
            self.blocked += 1
        else:
            scope.waiting += 1
            if scope.waiting == 1:
                self.blocked += 1
        self.check_soon()
        return scope

    def wait_ended(self, scope: _ItemScope | None) -> None:
        if scope is None:
            self.active -= 1
            self.blocked -= 1
            return
        scope.waiting -= 1
        if scope.waiting == 0:
            self.blocked -= 1

    def check_soon(self) -> None:
        if self._check_handle is None:
            self._check_handle = asyncio.get_running_loop().call_later(self.settle_s, self._check)

    def _check(self) -> None:
        self._check_handle = None
        if self.blocked < self.active:
            return  # some item is still working out what to ask
        for batcher in self.batchers:
            batcher.flush()

    def show(self, label: str, batch_id: str, status: BatchStatus) -> None:
        """The batches' state for the progress display."""
        self.states[batch_id] = (label, status)
        open_states = [s for _, s in self.states.values() if not s.ended]
        shown = open_states or [status]
        phases = Counter(s.state for s in shown)
        phase = ", ".join(f"{n} {state}" if n > 1 else state for state, n in phases.items())
        counts = _counts_text(shown)
        self.stats.batch_state = f"batch {phase}" + (f" ({counts})" if counts else "")

    async def aclose(self) -> None:
        if self._check_handle is not None:
            self._check_handle.cancel()
            self._check_handle = None
        for batcher in self.batchers:
            await batcher.aclose()

    def gave_up_on_batches(self, outcome: EntryFailure) -> None:
        """A request got no usable answer from 1 + `reasks` batches: counted, and said once per session."""
        self.counts["entries_live" if self.fallback == "live" else "entries_failed"] += 1
        if self._warned_fallback:
            return
        self._warned_fallback = True
        then = (
            "asking it live, at the full price (--batch-fallback fail records such requests as failed instead)"
            if self.fallback == "live"
            else "recording it as failed (--batch-fallback live asks such requests live instead)"
        )
        self.warn(
            f"a request got no usable answer from {1 + self.reasks} batches (last: {outcome.kind}: "
            f"{outcome.message[:120]}); {then}; run.json counts them"
        )

    def as_dict(self) -> dict[str, Any]:
        """run.json's `batch` block for this session."""
        return {
            "poll_interval_s": self.poll_interval_s,
            "reasks": self.reasks,
            "fallback": self.fallback,
            "batches_submitted": self.counts["batches_submitted"],
            "batches_resumed": self.counts["batches_resumed"],
            "entries_submitted": self.counts["entries_submitted"],
            "entries_answered": self.counts["entries_answered"],
            "entries_retried": self.counts["entries_retried"],
            "entries_rejected": self.counts["entries_rejected"],
            "entries_live": self.counts["entries_live"],
            "entries_failed": self.counts["entries_failed"],
            "result_problems": self.counts["result_problems"],
            "journal": JOURNAL_FILE,
        }


def _counts_text(statuses: list[BatchStatus]) -> str:
    total: Counter[str] = Counter()
    for status in statuses:
        total.update(status.counts)
    if "total" in total:  # OpenAI: completed/failed of total
        failed = f", {total['failed']} failed" if total["failed"] else ""
        return f"{total['completed']}/{total['total']} done{failed}"
    if total:  # Anthropic: processing and per-result counts
        return ", ".join(f"{n} {name}" for name, n in total.items() if n)
    return ""


class Batcher:
    """One engine's requests, collected into batches of its provider's batch API."""

    def __init__(self, round_: BatchRound, client: BatchClient, label: str, model: str) -> None:
        self.round = round_
        self.client = client
        self.label = label
        self.model = model  # the model asked: an answer from another one is not taken
        self._unsent: dict[str, _Entry] = {}
        self._sent: dict[str, _Entry] = {}
        self._spare: dict[str, ChatResponse] = {}  # answers of a resumed batch that no call has asked for yet
        self._tasks: set[asyncio.Task[None]] = set()

    async def call(self, request: ChatRequest, key: str, *, describe: dict[str, Any]) -> tuple[ChatResponse, int]:
        """The reply to `request` (cache key `key`) through the next batches; like `Engine._call_with_retries`.
        After 1 + `reasks` batches without a usable answer: AskLiveError (`--batch-fallback live`), else
        CallFailedError."""
        retries = 0
        round_ = self.round
        while True:
            outcome = await self._outcome(request, key, describe)
            if isinstance(outcome, ChatResponse):
                round_.counts["entries_answered"] += 1
                return normalise_response(outcome), retries
            if not outcome.retryable:
                round_.counts["entries_rejected"] += 1
                raise CallFailedError(f"request rejected in batch: {outcome.message}")
            if retries >= round_.reasks:
                round_.gave_up_on_batches(outcome)
                if round_.fallback == "live":
                    raise AskLiveError(retries)
                raise CallFailedError(
                    f"no usable answer from {retries + 1} batches (last: {outcome.kind}: {outcome.message}); "
                    "--batch-fallback fail"
                )
            round_.stats.count_retry(f"batch_{outcome.kind}")
            round_.counts["entries_retried"] += 1
            retries += 1

    async def _outcome(self, request: ChatRequest, key: str, describe: dict[str, Any]) -> EntryOutcome:
        spare = self._spare.pop(key, None)
        if spare is not None:
            return spare
        future: asyncio.Future[EntryOutcome] = asyncio.get_running_loop().create_future()
        entry = self._sent.get(key) or self._unsent.get(key)
        if entry is None:  # the same request asked twice in a round is sent once
            scope = _CURRENT_ITEM.get()
            described = {"item": scope.name, **describe} if scope is not None else describe
            entry = self._unsent[key] = _Entry(request, described)
        entry.futures.append(future)
        scope = self.round.wait_started()
        try:
            return await future
        finally:
            self.round.wait_ended(scope)

    def flush(self) -> None:
        """Send what was collected (called when the round is complete)."""
        if not self._unsent:
            return
        entries, self._unsent = self._unsent, {}
        self._sent.update(entries)
        task = asyncio.get_running_loop().create_task(self._send(entries))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, entries: dict[str, _Entry]) -> None:
        try:
            left = dict(entries)
            jobs: list[Awaitable[None]] = []
            for batch_id, custom_ids in self.round.journal.claim(self.client.provider, set(entries)):
                mine = {key: left.pop(key) for key in custom_ids if key in left}
                jobs.append(self._one_batch(batch_id, mine, [], custom_ids))
            if left:
                lines = [self.client.entry(key, entry.request) for key, entry in left.items()]
                for chunk in split_entries(lines, self.client.limits):
                    group = {line["custom_id"]: left[line["custom_id"]] for line in chunk}
                    jobs.append(self._one_batch(None, group, chunk, set(group)))
        except Exception as exc:  # nothing was sent: every waiting call learns why
            self._fail(entries, exc)
            return
        await asyncio.gather(*jobs)

    async def _one_batch(
        self, batch_id: str | None, entries: dict[str, _Entry], lines: list[dict[str, Any]], asked: set[str]
    ) -> None:
        """Create (or, resuming, find) one batch, wait for it to end and hand out its answers; `asked`: every
        custom_id the batch holds (a resumed batch's include requests this session has not asked for yet)."""
        round_ = self.round
        resumed = batch_id is not None
        try:
            try:
                if batch_id is None:
                    batch_id = await self._retrying(lambda: self.client.submit(lines))
                    round_.journal.submitted(
                        batch_id, self.client.provider, self.label, {k: e.describe for k, e in entries.items()}
                    )
                    round_.counts["batches_submitted"] += 1
                    round_.counts["entries_submitted"] += len(entries)
                    round_.stats.calls += len(entries)
                else:
                    round_.counts["batches_resumed"] += 1
                status = await self._wait(batch_id)
                found_id = batch_id
                problems: list[str] = []
                if status.failure is not None:
                    failure = EntryFailure("rejected", f"the batch failed: {status.failure}", retryable=False)
                    outcomes = dict.fromkeys(entries, failure)
                else:
                    bounds = self._result_bounds(entries, asked)
                    lines_read = await self._retrying(lambda: self.client.results(found_id, bounds))
                    sorted_results = sort_results(lines_read, asked, self.model)
                    outcomes, problems = sorted_results.outcomes, sorted_results.problems
                    unanswered = sum(1 for key in entries if key not in outcomes)
                    if unanswered:
                        problems.append(f"{unanswered} of its requests have no result line; asked again")
                    self._report(batch_id, problems)
                round_.journal.ended(batch_id, status.raw_status, status.counts, problems)
            except RequestRejectedError as exc:
                if resumed and exc.status == 404 and batch_id is not None:  # gone meanwhile: ask again
                    round_.journal.ended(batch_id, "not found", {})
                    outcomes = {}
                else:
                    failure = EntryFailure("rejected", f"the batch was refused: {exc}", retryable=False)
                    outcomes = dict.fromkeys(entries, failure)
        except BaseException as exc:
            self._fail(entries, exc if isinstance(exc, Exception) else CallFailedError("interrupted"))
            if not isinstance(exc, Exception):
                raise
            return
        self._deliver(entries, outcomes)

    def _result_bounds(self, entries: dict[str, _Entry], asked: set[str]) -> ResultFileBounds:
        """How much of the batch's result files is read: each request's reply limit (as live); requests of a resumed
        batch that this session has not asked for count at the largest of the others."""
        limits = [self.client.reply_limit(entry.request) for entry in entries.values()]
        unknown = len(asked - set(entries))
        return ResultFileBounds.for_limits(limits + [max(limits, default=0)] * unknown)

    def _report(self, batch_id: str, problems: list[str]) -> None:
        """One line per problem of the batch's result files (the first SHOWN_PROBLEMS; the rest counted)."""
        self.round.counts["result_problems"] += len(problems)
        for problem in problems[:SHOWN_PROBLEMS]:
            self.round.warn(f"batch {batch_id}: {problem}")
        if len(problems) > SHOWN_PROBLEMS:
            self.round.warn(f"batch {batch_id}: {len(problems) - SHOWN_PROBLEMS} more problems in {JOURNAL_FILE}")

    def _fail(self, entries: dict[str, _Entry], exc: Exception) -> None:
        for key, entry in entries.items():
            self._sent.pop(key, None)
            for future in entry.futures:
                if not future.done():
                    future.set_exception(exc)

    def _deliver(self, entries: dict[str, _Entry], outcomes: dict[str, EntryOutcome]) -> None:
        """Every waiting call gets its outcome at once (the next round forms from what they ask next)."""
        missing = EntryFailure("missing", "the batch reported no result for this request", retryable=True)
        for key, entry in entries.items():
            self._sent.pop(key, None)
            outcome = outcomes.pop(key, missing)
            for future in entry.futures:
                if not future.done():
                    future.set_result(outcome)
        for key, outcome in outcomes.items():  # a resumed batch's answers to requests not asked (yet)
            if isinstance(outcome, ChatResponse):
                self._spare[key] = outcome

    async def _wait(self, batch_id: str) -> BatchStatus:
        while True:
            status = await self._retrying(lambda: self.client.poll(batch_id))
            self.round.show(self.label, batch_id, status)
            if status.ended:
                return status
            await asyncio.sleep(self.round.poll_interval_s)

    async def _retrying(self, make: Callable[[], Awaitable[T]]) -> T:
        """A batch API call, retried as the engine retries a live call (transient failures, with backoff)."""
        policy = self.round.retry
        stats = self.round.stats
        retries = 0
        while True:
            try:
                return await make()
            except TransientBackendError as exc:
                if retries >= policy.max_retries:
                    raise CallFailedError(f"batch API: gave up after {retries} retries: {exc}") from exc
                stats.count_retry("batch_api")
                await asyncio.sleep(policy.backoff(retries, exc.retry_after, _RNG))
                retries += 1

    async def aclose(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
