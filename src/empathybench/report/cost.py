"""The run's tokens and cost (run.json / summary.json `cost`, written by run/cost.py) as one line of text."""

from collections.abc import Mapping
from typing import Any

from empathybench.formatting import percent_of, usd

ROLES = ("model", "judge", "simulator")  # as run/cost.py counts them


def _source(price: Any) -> str:
    if not isinstance(price, Mapping):
        return "no price" if price is None else str(price)
    read = f" (read {price['read']})" if price.get("read") else ""
    return f"{price.get('source')}{read}"


def cost_line(cost: Mapping[str, Any] | None) -> str | None:
    """ "cost $X: model $Y (N in, M cached = P%, K out tokens), judge ..., simulator ...; prices: ..." or None
    without a record. The cached share is the part of the input the provider served from its prompt cache (billed
    lower): a conversation that sends its growing history as an unchanged prefix is mostly cached."""
    if not isinstance(cost, Mapping):
        return None
    parts = []
    for role in ROLES:
        spend = cost.get(role)
        if not isinstance(spend, Mapping) or not spend.get("calls"):
            continue
        cached_tokens, input_tokens = spend.get("cached_input_tokens") or 0, spend.get("input_tokens") or 0
        share = f" = {percent_of(cached_tokens, input_tokens)}" if input_tokens else ""
        cached = f", {cached_tokens:,} cached{share}" if cached_tokens else ""
        parts.append(
            f"{role} {usd(spend.get('cost_usd'))} ({spend.get('calls', 0):,} calls, "
            f"{spend.get('input_tokens', 0):,} in{cached}, {spend.get('output_tokens', 0):,} out tokens)"
        )
    prices = cost.get("prices") if isinstance(cost.get("prices"), Mapping) else {}
    used = [role for role in ROLES if role in prices and (role == "model" or (cost.get(role) or {}).get("calls"))]
    sources = "; ".join(f"{role} {_source(prices.get(role))}" for role in used)
    total = usd(cost.get("cost_usd"))
    hint = "" if total != "unknown" else " (give a price with --price input=X,output=Y, USD per million tokens)"
    return f"cost {total}{hint}: " + (", ".join(parts) or "no calls") + (f"; prices: {sources}" if sources else "")
