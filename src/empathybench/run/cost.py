"""What a run costs: `run --dry-run` (requests, tokens and cost before any call), the `--max-cost` budget and the
actual tokens and cost recorded in run.json.

Dry run: every instrument's real item code runs against an in-process backend that answers with the scripted
canned answers (`scripted/plausible`) and never touches the network, the response cache or a run directory.
Its calls are the run's calls: first attempts per role (model, judge), plus the re-asks the canned answers caused.

Token estimate (no tokenizer ships with the package):
- text: one token per CJK character (Han, kana, Hangul), the other characters one token per 4 (OpenAI's rule of
  thumb for English: https://help.openai.com/en/articles/4936856-what-are-tokens-and-how-to-count-them);
- a request adds 3 tokens per message and 3 for the reply's priming (OpenAI cookbook, "How to count tokens with
  tiktoken", chat models);
- output: the canned reply's length by the same rule, or what the instrument expects a real answer to be
  (its optional `expected_output_tokens` hook: EQ-Bench 3's word targets) ("expected"), and the request's max tokens
  ("at most"): a free-text answer (a dialogue reply) is often longer than the canned one, so both are shown.
  Reasoning models also bill their thinking as output tokens, which neither figure includes.
"""

import asyncio
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from empathybench.engine.engine import BudgetExhaustedError, Engine
from empathybench.errors import BudgetStopError
from empathybench.formatting import usd
from empathybench.models.base import Backend, ChatRequest, ChatResponse
from empathybench.models.plausible import PlausibleResponder
from empathybench.models.prices import PRICE_HELP, Price, cost_usd, price_table
from empathybench.models.registry import ModelSpec

MESSAGE_OVERHEAD_TOKENS = 3
REPLY_PRIMING_TOKENS = 3
# The model roles whose calls are counted apart: the model under test, the judge, the simulated person. A role not
# given on the command line is played by the model under test: its calls are counted under the role, at the model's
# price.
ROLES = ("model", "judge", "simulator")
# The roles every estimate and cost record shows, used or not (the others appear when they make calls).
SHOWN_ROLES = ("model", "judge")
# Han ideographs, Hiragana, Katakana, Hangul syllables, CJK punctuation and full-width forms: about 1 token each.
_CJK = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def estimate_text_tokens(text: str) -> int:
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


def estimate_input_tokens(messages: Any) -> int:
    """Input tokens of a request's messages (Message objects or {"role", "content"[, "content_chars"]} dicts)."""
    total = REPLY_PRIMING_TOKENS
    for message in messages:
        content = message["content"] if isinstance(message, Mapping) else message.content
        tokens = estimate_text_tokens(content)
        full = message.get("content_chars") if isinstance(message, Mapping) else None
        if isinstance(full, int) and full > len(content) > 0:  # a stored record keeps the head of a long message
            tokens = round(tokens * full / len(content))
        total += MESSAGE_OVERHEAD_TOKENS + tokens
    return total


def role_of(request: ChatRequest) -> str:
    """The role a request is asked in: its tag's suffix (":judge", ":simulator", see ItemContext), else "model"."""
    suffix = request.tag.rpartition(":")[2] if ":" in request.tag else ""
    return suffix if suffix in ROLES else "model"


def _roles_of(*groups: Any) -> list[str]:
    """SHOWN_ROLES, then the other roles any of `groups` (mappings keyed by role) holds, in ROLES order."""
    present = {role for group in groups for role in group}
    return [role for role in ROLES if role in SHOWN_ROLES or role in present]


# --- prices of a run ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunPrices:
    """Each model role's spec and price (None: unknown), and whether the batch discount applies. A role without a
    spec of its own is played by the model under test, at its price."""

    specs: Mapping[str, ModelSpec]  # "model" always
    prices: Mapping[str, Price | None]
    batch: bool = False

    @property
    def model_spec(self) -> ModelSpec:
        return self.specs["model"]

    def for_label(self, label: str) -> Price | None:
        return self.prices[label] if label in self.specs else self.prices["model"]

    def describe(self, role: str) -> Any:
        """The role's price as records state it ("as the model" for a role the model plays)."""
        if role != "model" and role not in self.specs:
            return "as the model"
        price = self.prices[role]
        return price.as_dict() if price else None

    def unknown(self) -> list[str]:
        """One line per model without a price, saying how to give one."""
        return [no_price_line(role, spec) for role, spec in self.specs.items() if self.prices[role] is None]


def no_price_line(role: str, spec: ModelSpec) -> str:
    """What to do about a role's model without a price, in one line."""
    if role == "model":
        return f"no price known for {spec}: give one with {PRICE_HELP}"
    return f"no price known for the {role} {spec}: give one with --{role}-price input=X,output=Y"


def run_prices(plan: Any) -> RunPrices:
    """The prices of a run's roles (run/plan.py RunPlan)."""
    return RunPrices(
        {name: role.spec for name, role in plan.roles.items()},
        {name: role.price for name, role in plan.roles.items()},
        batch=plan.options.batch,
    )


def _cost(price: Price | None, batch: bool, **tokens: float) -> float | None:
    return None if price is None else cost_usd(price, batch=batch, **tokens)  # type: ignore[arg-type]


# --- dry run ---------------------------------------------------------------------------------------------------------


class DryRunBackend(Backend):
    """Answers every request in process with the instruments' canned answers; counts nothing itself."""

    provider = "dry-run"
    default_concurrency = 64
    interruptible = True

    def __init__(
        self, identity: dict[str, Any], canned: Mapping[str, Any], expected: Mapping[str, Any] | None = None
    ) -> None:
        self.model = str(identity.get("model", ""))
        self._identity = identity  # the real model's, so identity-dependent request details come out the same
        self._answer = PlausibleResponder(1, canned)
        self._expected = dict(expected or {})  # instrument name -> its expected_output_tokens hook

    def identity(self) -> dict[str, Any]:
        return dict(self._identity)

    def set_request_timeout(self, seconds: float) -> None:
        """Nothing to bound: answers come from the canned answers in process."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        text = self._answer(request)
        hook = self._expected.get(request.tag.split(":", 1)[0])
        expected = hook(request) if hook is not None else None
        if expected is not None:
            # Lengthened to the expected size at its end, so a conversation's later turns carry a realistic history.
            missing = min(expected, request.sampling.max_tokens) - estimate_text_tokens(text)
            if missing > 1:
                text += "\n" + ("and so on " * missing)[: 4 * (missing - 1)].rstrip()
        return ChatResponse(
            text=text,
            finish_reason="stop",
            prompt_tokens=estimate_input_tokens(request.messages),
            completion_tokens=estimate_text_tokens(text),  # what the tally counts as the expected output
        )

    async def aclose(self) -> None:
        return None


@dataclass
class RoleTally:
    requests: int = 0  # first attempts (attempt 0)
    reasks: int = 0  # later attempts the canned answers caused (a real model may cause more or fewer)
    input_tokens: int = 0
    output_tokens: int = 0  # expected: the canned replies' length
    output_tokens_max: int = 0  # at most: the requests' max tokens

    def add(self, call: Mapping[str, Any]) -> None:
        if call.get("attempt", 0) == 0:
            self.requests += 1
        else:
            self.reasks += 1
        self.input_tokens += estimate_input_tokens(call.get("messages") or [])
        self.output_tokens += int(call.get("completion_tokens") or 0)  # DryRunBackend's expected output
        self.output_tokens_max += int((call.get("sampling") or {}).get("max_tokens") or 0)

    def merge(self, other: "RoleTally") -> None:
        for name in ("requests", "reasks", "input_tokens", "output_tokens", "output_tokens_max"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self, price: Price | None, batch: bool) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "reasks": self.reasks,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "output_tokens_max": self.output_tokens_max,
            "cost_usd": _cost(price, batch, input_tokens=self.input_tokens, output_tokens=self.output_tokens),
            "cost_usd_max": _cost(price, batch, input_tokens=self.input_tokens, output_tokens=self.output_tokens_max),
        }


@dataclass
class InstrumentTally:
    name: str
    n_items: int
    roles: dict[str, RoleTally] = field(default_factory=lambda: {role: RoleTally() for role in SHOWN_ROLES})
    failed_items: int = 0


def tally_calls(calls: list[Mapping[str, Any]], tally: InstrumentTally) -> None:
    for call in calls:
        role = call.get("role") if call.get("role") in ROLES else "model"
        tally.roles.setdefault(str(role), RoleTally()).add(call)


async def dry_run_items(prepared: list[Any], engines: Mapping[str, Engine], seed: int) -> list[Any]:
    """Every item of every prepared instrument through its real code against the engines' canned answers; the calls
    of each instrument, by role."""
    from empathybench.run.items import item_context

    tallies = [InstrumentTally(bench.name, len(bench.items)) for bench in prepared]
    slots = asyncio.Semaphore(64)

    async def one(bench: Any, item: Any, tally: InstrumentTally) -> None:
        async with slots:
            ctx = item_context(bench.name, item.id, seed, engines)
            try:
                await bench.run_item(item, ctx)
            except Exception:  # canned answers an item cannot take: its calls so far still count
                tally.failed_items += 1
            tally_calls(ctx.calls, tally)

    await asyncio.gather(
        *(one(bench, item, tally) for bench, tally in zip(prepared, tallies, strict=True) for item in bench.items)
    )
    return tallies


def _requests(tally: Mapping[str, Any]) -> int:
    return int(tally["requests"]) + int(tally["reasks"])


def estimate_record(tallies: list[InstrumentTally], prices: RunPrices, skipped: Mapping[str, str]) -> dict[str, Any]:
    roles = _roles_of(prices.specs, *(tally.roles for tally in tallies))
    total = {role: RoleTally() for role in roles}
    instruments = []
    for tally in tallies:
        entry: dict[str, Any] = {"name": tally.name, "n_items": tally.n_items}
        for role in roles:
            own = tally.roles.get(role, RoleTally())
            total[role].merge(own)
            entry[role] = own.as_dict(prices.for_label(role), prices.batch)
        if tally.failed_items:
            entry["failed_items"] = tally.failed_items
        instruments.append(entry)
    totals = {role: total[role].as_dict(prices.for_label(role), prices.batch) for role in roles}
    used = [role for role in roles if _requests(totals[role])]
    costs = [totals[role]["cost_usd"] for role in used]
    maxima = [totals[role]["cost_usd_max"] for role in used]
    table = price_table()
    return {
        "model": str(prices.model_spec),
        **{role: str(prices.specs[role]) if role in prices.specs else "self" for role in roles if role != "model"},
        "batch": prices.batch,
        "instruments": instruments,
        "total": {
            **totals,
            "cost_usd": None if None in costs else round(sum(costs), 10),  # type: ignore[arg-type]
            "cost_usd_max": None if None in maxima else round(sum(maxima), 10),  # type: ignore[arg-type]
        },
        "prices": {
            **{role: prices.describe(role) for role in roles},
            "table_as_of": table.as_of,
            **(
                {"batch_factor": table.batch_factor, "batch_sources": list(table.batch_sources)} if prices.batch else {}
            ),
        },
        "skipped": dict(skipped),
        "notes": [
            *prices.unknown(),
            "tokens are estimated (characters/4, 1 per CJK character, +3 per message); output 'exp' is the length "
            "of scripted answers (or the instrument's expected answer length), 'max' the requests' max tokens; "
            "reasoning models bill their thinking as output on top",
        ],
    }


def _sum_of(entry: Mapping[str, Any], roles: list[str], key: str) -> int:
    return sum(int(entry[role][key]) for role in roles)


def _entry_cost(entry: Mapping[str, Any], roles: list[str], key: str) -> float | None:
    """An instrument's cost over its roles (a role that made no call adds nothing, even at an unknown price)."""
    if entry["name"] == "total":
        return entry.get(key)
    parts = [entry[role][key] for role in roles if role == "model" or _requests(entry[role])]
    return None if None in parts else sum(parts)  # type: ignore[arg-type]


def _requests_cell(tally: Mapping[str, Any], label: str = " re-asks") -> str:
    return f"{tally['requests']:,}" + (f" (+{tally['reasks']:,}{label})" if tally["reasks"] else "")


def render_estimate(console: Console, estimate: Mapping[str, Any]) -> None:
    """The dry run as a table on `console` (every value printed literally): a requests column per role that asks."""
    roles = [role for role in ROLES if isinstance(estimate["total"].get(role), Mapping)]
    asking = [role for role in roles if role != "model" and _requests(estimate["total"][role])]
    batch = " (batch: 50% off)" if estimate.get("batch") else ""
    others = "".join(f", {role} {estimate.get(role, 'self')}" for role in roles if role != "model")
    title = f"dry run: {estimate['model']}{others}{batch}; no model was called"
    # exp: the canned answers' length; max: the requests' max tokens (see the note below the table)
    table = Table(title=Text(title), title_justify="left")
    for header in ("instrument", "items", "requests", *asking):
        table.add_column(header, justify="left" if header == "instrument" else "right")
    for header in ("input tokens", "output tokens exp / max", "cost exp / max"):
        table.add_column(header, justify="right")
    for entry in [*estimate["instruments"], {"name": "total", "n_items": None, **estimate["total"]}]:
        cells = [
            Text(str(entry["name"])),
            "" if entry["n_items"] is None else f"{entry['n_items']:,}",
            _requests_cell(entry["model"]),
            *(_requests_cell(entry[role], "") for role in asking),
            f"{_sum_of(entry, roles, 'input_tokens'):,}",
            f"{_sum_of(entry, roles, 'output_tokens'):,} / {_sum_of(entry, roles, 'output_tokens_max'):,}",
            f"{usd(_entry_cost(entry, roles, 'cost_usd'))} / {usd(_entry_cost(entry, roles, 'cost_usd_max'))}",
        ]
        table.add_row(*cells)
    console.print(table)
    prices = estimate["prices"]
    for role in roles:
        price = prices.get(role)
        if isinstance(price, Mapping):
            read = f", read {price['read']}" if price.get("read") else ""
            console.print(
                Text(
                    f"{role} price: ${price['input_per_mtok']:g} in / ${price['output_per_mtok']:g} out per million "
                    f"tokens ({price['source']}{read})"
                )
            )
    for name, reason in estimate.get("skipped", {}).items():
        console.print(Text(f"skipped {name}: {reason}"))
    for note in estimate["notes"]:
        console.print(Text(note))


# --- the budget and the actual cost of a run --------------------------------------------------------------------------


@dataclass
class RoleSpend:
    calls: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 10),
        }


@dataclass
class _Reservation:
    label: str
    role: str
    estimate: float
    batch: bool = False  # billed at the batch price


class CostMeter:
    """The engines' call meter: records what every answered call cost and keeps the run within `--max-cost`.

    Before a request is sent, `reserve` checks that the money spent (earlier sessions included), the estimates of
    the requests in flight and this request's estimate (its input, and its max tokens as output) stay within the
    budget; when they would not, the meter stops the run for good: this and every later request raise
    BudgetExhaustedError, while those in flight finish and are kept.
    """

    def __init__(self, prices: RunPrices, *, budget_usd: float | None = None, spent_before_usd: float = 0.0) -> None:
        self.prices = prices
        self.budget_usd = budget_usd
        self.spent_before_usd = spent_before_usd
        self.roles = {role: RoleSpend() for role in SHOWN_ROLES}
        self.reserved_usd = 0.0
        self.stopped = False

    @property
    def spent_usd(self) -> float:
        """Spent so far over every session of the run (unknown prices count as 0)."""
        return self.spent_before_usd + sum(spend.cost_usd or 0.0 for spend in self.roles.values())

    def reserve(self, label: str, request: ChatRequest, *, live: bool = False) -> _Reservation:
        price = self.prices.for_label(label)
        batch = self.prices.batch and not live  # a batched run's request asked live pays the full price
        estimate = 0.0
        if price is not None and self.budget_usd is not None:  # only a budget needs the estimate (a hot path)
            estimate = cost_usd(
                price,
                input_tokens=estimate_input_tokens(request.messages),
                output_tokens=request.sampling.max_tokens,
                batch=batch,
            )
        if self.budget_usd is not None and (
            self.stopped or self.spent_usd + self.reserved_usd + estimate > self.budget_usd
        ):
            self.stopped = True
            raise BudgetExhaustedError(f"the next request would exceed --max-cost {self.budget_usd:g}")
        self.reserved_usd += estimate
        return _Reservation(label, role_of(request), estimate, batch)

    def settle(self, reservation: _Reservation, response: ChatResponse | None) -> None:
        self.reserved_usd -= reservation.estimate
        if response is None:  # not answered: not billed
            return
        spend = self.roles.setdefault(reservation.role, RoleSpend())
        cached = response.cached_input_tokens
        spend.calls += 1
        spend.input_tokens += response.prompt_tokens
        spend.cached_input_tokens += cached
        spend.output_tokens += response.completion_tokens
        price = self.prices.for_label(reservation.label)
        if price is None or spend.cost_usd is None:
            spend.cost_usd = None
            return
        spend.cost_usd += cost_usd(
            price,
            input_tokens=response.prompt_tokens,
            output_tokens=response.completion_tokens,
            cached_input_tokens=cached,
            batch=reservation.batch,
        )

    def session_record(self) -> dict[str, Any]:
        """This session's tokens and cost per role, with the prices used (run.json `sessions[-1].cost`)."""
        roles = _roles_of(self.prices.specs, self.roles)
        spends = {role: self.roles.get(role, RoleSpend()) for role in roles}
        return {
            **{role: spend.as_dict() for role, spend in spends.items()},
            "cost_usd": _sum_or_none([spend.cost_usd for spend in spends.values() if spend.calls]),
            "prices": {role: self.prices.describe(role) for role in roles},
            "batch": self.prices.batch,
            **({"budget_usd": self.budget_usd} if self.budget_usd is not None else {}),
        }


def _sum_or_none(values: list[float | None]) -> float | None:
    return None if None in values else round(sum(v for v in values if v is not None), 10)


def spent_in_sessions(sessions: list[Any], price: Price | None = None, batch: bool = False) -> float:
    """USD spent by the earlier sessions of a run, as their run.json entries record it.

    A session that recorded no cost (killed: its usage was rebuilt from samples.jsonl, a lower bound) is priced
    from its token counts at `price` (the model's; its judge calls too).
    """
    total = 0.0
    for session in sessions:
        if not isinstance(session, dict):
            continue
        cost, usage = session.get("cost"), session.get("usage")
        value: Any = cost.get("cost_usd") if isinstance(cost, dict) else None
        if not isinstance(cost, dict) and isinstance(usage, dict) and price is not None:
            counts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
            if all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
                value = cost_usd(price, input_tokens=counts[0], output_tokens=counts[1], batch=batch)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
            total += float(value)
    return total


def cost_totals(sessions: list[Any]) -> dict[str, Any]:
    """run.json `cost`: tokens and USD per role over every session that recorded them."""
    totals: dict[str, Any] = {role: RoleSpend() for role in SHOWN_ROLES}
    unknown = False
    for session in sessions:
        cost = session.get("cost") if isinstance(session, dict) else None
        if not isinstance(cost, dict):
            continue
        for role in ROLES:
            part = cost.get(role)
            if not isinstance(part, dict):
                continue
            spend = totals.setdefault(role, RoleSpend())
            for name in ("calls", "input_tokens", "cached_input_tokens", "output_tokens"):
                value = part.get(name)
                setattr(spend, name, getattr(spend, name) + (value if isinstance(value, int) else 0))
            value = part.get("cost_usd")
            if value is None and part.get("calls"):
                unknown = True
            elif isinstance(value, int | float) and spend.cost_usd is not None:
                spend.cost_usd += value
    record = {role: spend.as_dict() for role, spend in totals.items()}
    record["cost_usd"] = None if unknown else round(sum(spend.cost_usd or 0.0 for spend in totals.values()), 10)
    last = next(
        (s.get("cost") for s in reversed(sessions) if isinstance(s, dict) and isinstance(s.get("cost"), dict)), {}
    )
    record["prices"] = last.get("prices")
    return record


def budget_stop(meter: CostMeter, items_left: int, directory: Any) -> BudgetStopError:
    return BudgetStopError(
        f"stopped at the cost budget: spent {usd(meter.spent_usd)} of --max-cost {meter.budget_usd:g} "
        f"({items_left} items left, finished ones kept in {directory}); run the same command with a larger --max-cost "
        "to continue"
    )
