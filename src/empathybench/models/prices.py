"""What tokens cost: the shipped, dated price table (prices.json), `--price` overrides, and the cost arithmetic.

Prices are USD per million tokens (input, output, cached input). A model the table does not know has no price
(cost "unknown") unless the user gives one; models that run here (local, llamacpp/, scripted/) cost nothing.
"""

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from empathybench.errors import UserError

# Providers whose calls run on this machine (or nowhere): no bill.
FREE_PROVIDERS = frozenset({"local", "llamacpp", "scripted"})
# A dated snapshot of a model: "gpt-4o-2024-08-06" of "gpt-4o", "claude-sonnet-4-20250514" of "claude-sonnet-4".
_SNAPSHOT_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})")


def is_snapshot_of(name: str, base: str) -> bool:
    """Whether model `name` is a dated snapshot of `base` ("-2024-08-06" or "-20250514" after it)."""
    return name.startswith(base) and _SNAPSHOT_SUFFIX.fullmatch(name[len(base) :]) is not None


PRICE_HELP = "--price input=X,output=Y[,cached=Z] (USD per million tokens)"


@dataclass(frozen=True)
class Price:
    """USD per million tokens, and where the figures come from."""

    input: float
    output: float
    cached_input: float | None  # None: cached input is billed as input
    source: str  # a URL, "--price", or "free (runs locally)"
    read: str | None = None  # the date the source was read

    def as_dict(self) -> dict[str, Any]:
        return {
            "input_per_mtok": self.input,
            "output_per_mtok": self.output,
            "cached_input_per_mtok": self.cached_input,
            "source": self.source,
            "read": self.read,
        }


@dataclass(frozen=True)
class PriceTable:
    as_of: str
    batch_factor: float
    batch_sources: tuple[str, ...]
    entries: dict[tuple[str, str], Price]


@lru_cache(maxsize=1)
def price_table() -> PriceTable:
    raw = json.loads(resources.files("empathybench.models").joinpath("prices.json").read_text("utf-8"))
    entries = {
        (row["provider"], row["model"]): Price(
            float(row["input"]), float(row["output"]), row.get("cached_input"), row["source"], row.get("read")
        )
        for row in raw["models"]
    }
    batch = raw["batch_discount"]
    return PriceTable(raw["as_of"], float(batch["factor"]), tuple(batch["sources"]), entries)


def parse_price_option(text: str) -> Price:
    """`input=X,output=Y[,cached=Z]` in USD per million tokens (one-line UserError otherwise)."""
    values: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        if not sep or key not in ("input", "output", "cached"):
            raise UserError(f"--price {text!r}: each part is input=X, output=Y or cached=Z; got {part!r}")
        try:
            number = float(value)
        except ValueError:
            raise UserError(f"--price {text!r}: {key} must be a number of USD per million tokens") from None
        if not math.isfinite(number) or number < 0:
            raise UserError(f"--price {text!r}: {key} must be a finite number >= 0")
        if key in values:  # which of the two was meant cannot be guessed
            raise UserError(f"--price {text!r}: {key} is given twice; give each of input, output, cached once")
        values[key] = number
    if "input" not in values or "output" not in values:
        raise UserError(f"--price {text!r} needs both input=X and output=Y (USD per million tokens)")
    return Price(values["input"], values["output"], values.get("cached"), "--price")


def price_for(provider: str, model: str, override: Price | None = None) -> Price | None:
    """The price of `provider/model`: the override, free for local models, the table's row, or None (unknown)."""
    if override is not None:
        return override
    if provider in FREE_PROVIDERS:
        return Price(0.0, 0.0, 0.0, "free (runs locally)")
    name = model.rsplit("/", 1)[-1].lower()
    entries = price_table().entries
    if (provider, name) in entries:
        return entries[(provider, name)]
    # The longest listed name that this one is a dated snapshot of.
    candidates = [
        listed
        for (listed_provider, listed) in entries
        if listed_provider == provider and (is_snapshot_of(name, listed) or name == f"{listed}-latest")
    ]
    return entries[(provider, max(candidates, key=len))] if candidates else None


def cost_usd(
    price: Price, *, input_tokens: float, output_tokens: float, cached_input_tokens: float = 0, batch: bool = False
) -> float:
    """The cost of a call: `input_tokens` includes `cached_input_tokens` (as both providers' usage reports it)."""
    cached = min(cached_input_tokens, input_tokens)
    cached_rate = price.input if price.cached_input is None else price.cached_input
    total = ((input_tokens - cached) * price.input + cached * cached_rate + output_tokens * price.output) / 1e6
    return total * (price_table().batch_factor if batch else 1.0)
