"""What a result's number is worth: one status per benchmark, computed once from its summary, shown everywhere.

Vocabulary (summary.json `benchmarks.<name>.validity.status`):
  valid         the instrument's own rules accept the run;
  invalid       the instrument's own validity rule rejects it (EQ-Bench's upstream 83.33% parse gate, SECEU's
                paper rule "FAILED when more than half of the items got no response"), or the requests that went
                over the wire were not the instrument's (labelled "not comparable": another harness's provider
                changed their sampling, token cap or roles, `request_changed`, inspect_bridge/wire.py);
  insufficient  too few parsed items for the number to mean anything: no headline figure could be computed, or
                fewer than half of the items parsed (an EmpathyBench rule, not an upstream one);
  self-judged   the model under test rated its own replies (no --judge);
  self-simulated  the model under test played the simulated person it talked with (no --simulator);
  skipped       the benchmark did not run.
When several apply the first in that order is the status; every reason is kept in `reasons`.
"""

from typing import Any

from empathybench.formatting import percent_of

MIN_PARSED_FRACTION = 0.5
STATUSES = ("valid", "invalid", "insufficient", "self-judged", "self-simulated", "skipped")


def truncated_text(result: dict[str, Any]) -> str:
    """The truncated rate, shown beside the parse rate: "" when no answer was truncated, else e.g.
    "12 of 300 answers truncated (4.0%), 10 re-asked with a larger budget, 2 never answered"."""
    truncated = result.get("n_truncated_calls")
    if not isinstance(truncated, int) or truncated <= 0:  # a reasoning model out of budget: no answer to parse
        return ""
    calls = result.get("n_calls") or 0
    text = f"{truncated} of {calls} answers truncated"
    if isinstance(calls, int) and calls > 0:
        text += f" ({percent_of(truncated, calls)})"
    reasks, unanswered = result.get("n_truncated_reasks"), result.get("n_truncated_unanswered")
    if isinstance(reasks, int) and reasks > 0:
        text += f", {reasks} re-asked with a larger budget"
    if isinstance(unanswered, int):
        text += f", {unanswered} never answered"
    return text


def truncated_share(result: dict[str, Any]) -> str:
    """The truncated rate in short: "12 = 4.0% of calls" (the terminal's parsed column)."""
    truncated, calls = result.get("n_truncated_calls") or 0, result.get("n_calls") or 0
    share = f" = {percent_of(truncated, calls)} of calls" if isinstance(calls, int) and calls > 0 else ""
    return f"{truncated}{share}"


def answers_text(result: dict[str, Any]) -> str:
    """The parse rate with the truncated rate beside it, as every report shows them."""
    text = f"{result.get('n_parsed', 0)} of {result.get('n_items', 0)} parsed"
    truncated = truncated_text(result)
    return f"{text}, {truncated}" if truncated else text


_parsed_text = answers_text


def result_validity(result: dict[str, Any]) -> dict[str, Any]:
    """{"status", "label", "reasons"} of one benchmark's summary entry."""
    if result.get("status") == "skipped":
        return {"status": "skipped", "label": "skipped", "reasons": [str(result.get("error", ""))]}
    found: list[tuple[str, str, str]] = []  # (status, short label, reason)
    changed = result.get("request_changed")
    if isinstance(changed, dict):  # not the instrument's measurement at all: said first
        found.append(("invalid", "not comparable (request changed)", str(changed.get("reason") or "")))
    if result.get("valid") is False:
        why = str(result.get("headline_note") or _parsed_text(result))
        found.append(("invalid", "invalid (below gate)", _without_status_word(why)))
    if result.get("invalid_reason"):  # the instrument's own published rule rejected the run
        found.append(("invalid", "invalid (paper rule)", f"{result['invalid_reason']}: {_parsed_text(result)}"))
    n_items, n_parsed = result.get("n_items") or 0, result.get("n_parsed")
    if result.get("score") is None:
        found.append(("insufficient", f"insufficient ({_parsed_text(result)})", "no headline figure could be computed"))
    elif n_parsed is not None and n_items and n_parsed < MIN_PARSED_FRACTION * n_items:
        found.append(("insufficient", f"insufficient ({_parsed_text(result)})", "fewer than half of the items parsed"))
    if (result.get("judge") or {}).get("self_judging"):
        found.append(("self-judged", "self-judged", "no --judge given, so the model rated its own replies"))
    if result.get("self_simulated"):
        found.append(
            ("self-simulated", "self-simulated", "no --simulator given, so the model played the person it talked with")
        )
    if not found:
        return {"status": "valid", "label": "valid", "reasons": []}
    order = {status: i for i, status in enumerate(STATUSES)}
    found.sort(key=lambda entry: order[entry[0]])
    return {"status": found[0][0], "label": found[0][1], "reasons": [f"{label}: {why}" for _, label, why in found]}


def _without_status_word(note: str) -> str:
    """A note that starts by naming the status ("invalid run: 0/3 parseable...") without it: the reason's label
    says it already (one sentence per fact)."""
    for prefix in ("invalid run: ", "invalid: "):
        if note.lower().startswith(prefix):
            return note[len(prefix) :]
    return note


def own_note(result: dict[str, Any]) -> str:
    """The instrument's headline note where it adds to the status reasons (empty when a reason says it already)."""
    note = str(result.get("headline_note") or "")
    reasons = validity_of(result)["reasons"]
    if not note or any(_without_status_word(note) in reason for reason in reasons):
        return ""
    return note


def short_reason(text: str, limit: int = 80) -> str:
    """A skipped instrument's reason in a few words for a card (the whole of it stays in its section and the
    terminal): up to the first parenthesis or sentence end, at most `limit` characters."""
    cut = text
    for mark in (" (", ". ", "; "):
        if mark in cut:
            cut = cut.split(mark, 1)[0]
    cut = cut.strip()
    return cut if len(cut) <= limit else cut[: limit - 1].rstrip() + "…"


def attach_validity(benchmarks: dict[str, dict[str, Any]]) -> None:
    """Set `validity` on every benchmark's summary entry (once, where the summary is built)."""
    for result in benchmarks.values():
        result["validity"] = result_validity(result)


def validity_of(result: dict[str, Any]) -> dict[str, Any]:
    """The stored validity; computed for summaries written before it existed."""
    return result.get("validity") or result_validity(result)


def plugin_source(result: dict[str, Any]) -> str:
    """ "package NAME VERSION" for an instrument a plugin provided (empty for the built-ins and for old runs)."""
    provider = result.get("provider") or {}
    distribution = provider.get("distribution")
    if not distribution or distribution == "empathybench":
        return ""
    return f"package {distribution} {provider.get('version') or ''}".rstrip()
