"""The run's tokens and cost (run.json / summary.json `cost`, written by run/cost.py) as one line of text."""

from collections.abc import Mapping
from typing import Any

from empathybench.formatting import usd


def _source(price: Any) -> str:
    if not isinstance(price, Mapping):
        return "no price" if price is None else str(price)
    read = f" (read {price['read']})" if price.get("read") else ""
    return f"{price.get('source')}{read}"


def cost_line(cost: Mapping[str, Any] | None) -> str | None:
    """ "cost $X: model $Y (N in, M cached, K out tokens), judge ...; prices: ..." or None without a record."""
    if not isinstance(cost, Mapping):
        return None
    parts = []
    for role in ("model", "judge"):
        spend = cost.get(role)
        if not isinstance(spend, Mapping) or not spend.get("calls"):
            continue
        cached = f", {spend.get('cached_input_tokens', 0):,} cached" if spend.get("cached_input_tokens") else ""
        parts.append(
            f"{role} {usd(spend.get('cost_usd'))} ({spend.get('calls', 0):,} calls, "
            f"{spend.get('input_tokens', 0):,} in{cached}, {spend.get('output_tokens', 0):,} out tokens)"
        )
    prices = cost.get("prices") if isinstance(cost.get("prices"), Mapping) else {}
    sources = "; ".join(f"{role} {_source(prices.get(role))}" for role in ("model", "judge") if role in prices)
    total = usd(cost.get("cost_usd"))
    hint = "" if total != "unknown" else " (give a price with --price input=X,output=Y, USD per million tokens)"
    return f"cost {total}{hint}: " + (", ".join(parts) or "no calls") + (f"; prices: {sources}" if sources else "")
