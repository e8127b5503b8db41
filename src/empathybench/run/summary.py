"""Records and summaries shared by everything that runs instruments (`empathybench run`, the inspect bridge).

One item's record (samples.jsonl) and one instrument's entry of summary.json are built here, so that a number shown
by another harness is the number `empathybench run` shows for the same replies.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.instruments.protocol import PreparedBenchmark
from empathybench.report.profile import attach_score_interval, build_profile
from empathybench.report.validity import attach_validity


def calls_usage(calls: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """An item's token usage over the calls that reached the model (cache hits cost nothing)."""
    sent = [call for call in calls if not call.get("cached")]
    return {
        "prompt_tokens": sum(int(call.get("prompt_tokens") or 0) for call in sent),
        "completion_tokens": sum(int(call.get("completion_tokens") or 0) for call in sent),
        "cached_input_tokens": sum(int(call.get("cached_input_tokens") or 0) for call in sent),
        "cached_calls": len(calls) - len(sent),
    }


def benchmark_result(bench: PreparedBenchmark[Any], records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """summary.json's entry of one instrument from its records (every status): the instrument's own `summarize`
    over the answered items in item order, with the counts of failed items, calls and truncated answers."""
    answered = [dict(r) for r in records if r.get("status") == "ok"]
    order = {item.id: i for i, item in enumerate(bench.items)}
    answered.sort(key=lambda r: order.get(r["item_id"], len(order)))
    if bench.summarize_failed:
        every = sorted((dict(r) for r in records), key=lambda r: order.get(r["item_id"], len(order)))
        result = bench.summarize(every)
    else:
        result = bench.summarize(answered)
    result.setdefault("n_items", len(bench.items))
    result["n_failed_calls"] = sum(1 for r in records if r.get("status") != "ok")
    # Answers that never arrived (a reasoning model out of budget), beside the parse rate: they are why a reasoning
    # model's items fail to parse, not what it answered.
    calls = [call for r in records for call in r.get("calls") or ()]
    result["n_calls"] = len(calls)
    result["n_truncated_calls"] = sum(1 for call in calls if call.get("truncated"))
    result["truncated_rate"] = round(result["n_truncated_calls"] / len(calls), 4) if calls else None
    # Truncated answers re-asked with a larger budget (where the protocol re-asks), and those left without an answer
    # (not re-asked, or truncated at every budget).
    result["n_truncated_reasks"] = sum(1 for call in calls if call.get("budget_reask"))
    result["n_truncated_unanswered"] = sum(1 for c in calls if c.get("truncated") and not c.get("reasked"))
    result["status"] = "complete" if len(answered) == len(bench.items) else "incomplete"
    attach_score_interval(result)
    return result


def finish_benchmarks(benchmarks: dict[str, Any], skipped: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The skipped instruments' entries, every entry's validity (valid / invalid / insufficient / self-judged, read
    by every renderer) and the EI profile over them."""
    for name, reason in (skipped or {}).items():
        benchmarks[name] = {"status": "skipped", "error": reason}
    attach_validity(benchmarks)
    return build_profile(benchmarks)
