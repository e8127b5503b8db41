"""One item of an instrument run into its record, the same way wherever it runs (`empathybench run`, the dry run,
inside inspect_ai): an item context over the engines of the model roles, the instrument's `run_item`, and the record
samples.jsonl keeps (status, fields, every call, usage, time)."""

import contextlib
import time
from collections.abc import Mapping
from typing import Any

from empathybench.engine.batch import BatchRound
from empathybench.engine.engine import BudgetExhaustedError, CallFailedError, Engine, ItemContext, item_seed
from empathybench.errors import UserError
from empathybench.instruments.protocol import BenchItem, PreparedBenchmark
from empathybench.models.base import valid_text
from empathybench.run.summary import calls_usage

# A failure no instrument code expected is kept in the record to this many characters.
UNEXPECTED_ERROR_CHARS = 500


def item_context(name: str, item_id: str, run_seed: int, engines: Mapping[str, Engine]) -> ItemContext:
    """The context of one item of the instrument `name`: the model's engine, and the judge's and the simulated
    person's where those roles have engines of their own (else the model plays them)."""
    return ItemContext(
        engines["model"],
        item_id,
        item_seed(run_seed, name, item_id),
        engines.get("judge"),
        tag=name,
        simulator_engine=engines.get("simulator"),
    )


async def run_item_record(
    bench: PreparedBenchmark[Any],
    item: BenchItem[Any],
    engines: Mapping[str, Engine],
    run_seed: int,
    batch_round: BatchRound | None = None,
) -> dict[str, Any]:
    """Run one item into its record. A call that failed for good, or anything else that goes wrong with this item
    (a reply no instrument code expected), is the item's `error`, never the end of the run; a UserError (server
    unreachable, key refused) and the budget's stop propagate: the run cannot go on, and the item is asked again
    when it continues (its answers are cached)."""
    ctx = item_context(bench.name, item.id, run_seed, engines)
    started = time.monotonic()
    record: dict[str, Any] = {"benchmark": bench.name, "item_id": item.id}
    try:
        with batch_round.item(item.id) if batch_round is not None else contextlib.nullcontext():
            fields = await bench.run_item(item, ctx)
        record.update(status="ok", **fields)
    except (BudgetExhaustedError, UserError):
        raise
    except CallFailedError as exc:
        record.update(status="error", error=str(exc))
        if exc.role is not None:
            record["error_role"] = exc.role
    except Exception as exc:
        text = f"unexpected {type(exc).__name__}: {str(exc)[:UNEXPECTED_ERROR_CHARS]}"
        record.update(status="error", error=valid_text(text)[0])
    record["roles"] = ctx.role_models()  # who answered each role, whatever failed
    record["calls"] = ctx.calls
    record["usage"] = calls_usage(ctx.calls)
    record["elapsed_s"] = round(time.monotonic() - started, 3)
    return record
