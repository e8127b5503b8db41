"""Whether a run can stand beside a published leaderboard, worked out from what the run did (pure).

Generic: it names no instrument. An instrument gives the settings its published run sent each model (as request
body fields, e.g. upstream's `temperature` and `max_tokens`), and this module compares them with what every call of
the run actually sent (the `sent` block each call records) and counts how many of the published items were scored.
The label names every difference; "comparable" means there is none.

- `sent_settings` reads a request body (ours as recorded, or upstream's) as the settings that move a reply:
  temperature, top_p, the token budget, the reasoning effort and budget, and any other field. Two spellings of one
  setting read alike: `max_tokens` / `max_completion_tokens`; OpenRouter's `reasoning: {"effort": X}` and
  `reasoning_effort: X` (OpenRouter documents them as equivalent); Anthropic's `thinking.budget_tokens` and
  OpenRouter's `reasoning.max_tokens`. Routing and bookkeeping fields (`model`, `provider`, `seed`, `stream`, the
  seed only draws another sample of the same distribution) are not settings.
- `settings_findings` walks the calls of a run's records and returns one line per role and difference, with the
  number of calls it concerns, and apart the notes (what the published run did too, e.g. a reply cut at the
  published budget). A published setting with no value to compare (`Unstated`: never published, or one the model
  refuses) is named with its reason.
- `Coverage` counts the published items a run scored and says why the others were not.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from empathybench.models.capabilities import TRUNCATING_FINISH_REASONS

# Fields of a request body that are not settings of the reply: what is asked of whom, and routing.
NOT_SETTINGS = frozenset({"model", "messages", "system", "stream", "n", "provider", "seed"})
BUDGET_FIELDS = ("max_tokens", "max_completion_tokens")
ROLE_NAMES = {"model": "the model under test", "judge": "the judge", "simulator": "the simulator"}


def sent_settings(body: Mapping[str, Any]) -> dict[str, Any]:
    """A request body (besides its messages) as the settings that move a reply; a setting not sent is absent. A
    setting sent twice under two spellings with two values reads as both ("high and low (two fields)"): which one
    the server obeyed is unknown, so it matches no published value."""
    settings: dict[str, Any] = {}

    def put(setting: str, value: Any) -> None:
        if setting in settings and settings[setting] != value:
            value = f"{_shown(settings[setting])} and {_shown(value)} (two fields)"
        settings[setting] = value

    for key, value in body.items():
        if key in NOT_SETTINGS or value is None:
            continue
        if key in BUDGET_FIELDS:
            put("token budget", value)
        elif key == "reasoning" and isinstance(value, Mapping):
            for inner, inner_value in value.items():
                if inner == "effort":
                    put("reasoning effort", inner_value)
                elif inner == "max_tokens":
                    put("reasoning budget", inner_value)
                else:
                    put(f"reasoning.{inner}", inner_value)
        elif key == "reasoning_effort":
            put("reasoning effort", value)
        elif key == "thinking" and isinstance(value, Mapping):
            if value.get("type") == "enabled":
                put("reasoning budget", value.get("budget_tokens"))
        elif key in ("stop", "stop_sequences") and not value:
            continue
        else:
            put(key, value)
    return settings


def _shown(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)[:80]
    return f"{value:g}"


@dataclass(frozen=True)
class Unstated:
    """A published setting that has no value to compare with, and why (the phrase the label gives): upstream never
    stated it ("not published"), or the published code would send a value the model refuses. It never matches;
    `only_if_sent`: a run that sends no such setting matches (the setting picks which published row a run stands
    beside, e.g. a row named "-Think" whose thinking budget is not published, beside the same model's row without)."""

    reason: str = "not published"
    only_if_sent: bool = False

    def __str__(self) -> str:
        return self.reason


def compare(sent: Mapping[str, Any], published: Mapping[str, Any], *, budget: bool = True) -> list[str]:
    """What `sent` (sent_settings of a call) does otherwise than `published` (sent_settings of the published run's
    request), one phrase each; `budget=False` leaves the token budget out (a protocol that sent none). A published
    value that is `Unstated` is named with its reason, never as a value that differs."""
    phrases = []
    for key in sorted(set(sent) | set(published)):
        if key == "token budget" and not budget:
            continue
        ours, theirs = sent.get(key), published.get(key)
        if isinstance(theirs, Unstated):
            if key in sent or not theirs.only_if_sent:
                phrases.append(f"{key} {_shown(ours) if key in sent else 'not sent'} ({theirs.reason})")
            continue
        if ours == theirs:
            continue
        if key not in sent:
            phrases.append(f"{key} not sent (published {_shown(theirs)})")
        elif key not in published:
            phrases.append(f"{key} {_shown(ours)} (published: not sent)")
        else:
            phrases.append(f"{key} {_shown(ours)} (published {_shown(theirs)})")
    return phrases


# (role, the model's name as sent, the instrument's sampling of the call) -> the published request body for it
# (besides the messages), or None when the call has no published counterpart to compare with.
PublishedBody = Callable[[str, str, Mapping[str, Any]], "Mapping[str, Any] | None"]


def call_role(call: Mapping[str, Any]) -> str:
    return str(call.get("role") or "model")


@dataclass(frozen=True)
class Findings:
    """What the calls of a run did otherwise than the published run (`differences`), and what they did as it did
    but a reader should know (`notes`: e.g. replies cut at the published token budget, which upstream kept too);
    one line each per role, model and phrase, with the number of calls."""

    differences: list[str]
    notes: list[str]


def settings_findings(
    records: Iterable[Mapping[str, Any]],
    published_body: PublishedBody,
    *,
    budget: bool = True,
    provider_defaults: Mapping[str, Any] | None = None,
) -> Findings:
    """Every difference between what the calls of `records` sent and what the published run sent the same model,
    one line per role and difference: "the judge gpt-5-2025-08-07: reasoning effort not sent (published minimal),
    600 calls". A reply cut at the token budget is a note when the budget was the published one (the published run
    kept its cut replies too), else a difference. `provider_defaults`: settings whose value sent is the providers'
    default, read as not sent (for a published run that sent none)."""
    defaults = provider_defaults or {}
    found: Counter[tuple[str, str, str]] = Counter()
    noted: Counter[tuple[str, str, str]] = Counter()
    for record in records:
        roles = record.get("roles") if isinstance(record.get("roles"), Mapping) else {}
        for call in record.get("calls") or ():
            if not isinstance(call, Mapping):
                continue
            role = call_role(call)
            sampling = call.get("sampling") if isinstance(call.get("sampling"), Mapping) else {}
            # A backend that records nothing sent sends the instrument's sampling as it is (Backend.request_parameters)
            sent = call.get("sent") if isinstance(call.get("sent"), Mapping) else _as_sent(sampling)
            model = str(sent.get("model") or roles.get(role) or "")
            published = published_body(role, model, sampling)
            ours = {k: v for k, v in sent_settings(sent).items() if not (k in defaults and defaults[k] == v)}
            theirs = None if published is None else sent_settings(published)
            if str(call.get("finish_reason") or "") in TRUNCATING_FINISH_REASONS:
                if budget and theirs is not None and "token budget" in theirs and _same_budget(ours, theirs):
                    noted[
                        (role, model, "reply cut at the published token budget (kept, as upstream kept its own)")
                    ] += 1
                else:
                    found[(role, model, "reply cut at the token budget")] += 1
            if theirs is None:
                continue
            for phrase in compare(ours, theirs, budget=budget):
                found[(role, model, phrase)] += 1
    return Findings(_lines(found), _lines(noted))


def _same_budget(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> bool:
    return ours.get("token budget") == theirs.get("token budget")


def _lines(found: Counter[tuple[str, str, str]]) -> list[str]:
    lines = []
    for (role, model, phrase), count in sorted(found.items()):
        who = f"{ROLE_NAMES.get(role, role)} {model}".rstrip()
        lines.append(f"{who}: {phrase}, {count} {'call' if count == 1 else 'calls'}")
    return lines


def settings_differences(
    records: Iterable[Mapping[str, Any]],
    published_body: PublishedBody,
    *,
    budget: bool = True,
    provider_defaults: Mapping[str, Any] | None = None,
) -> list[str]:
    """`settings_findings` as one list, its notes after its differences (the earlier form, for a caller that labels
    every line alike)."""
    findings = settings_findings(records, published_body, budget=budget, provider_defaults=provider_defaults)
    return [*findings.differences, *findings.notes]


def _as_sent(sampling: Mapping[str, Any]) -> dict[str, Any]:
    """An instrument's recorded sampling as the body a backend that sends it as it is would send."""
    return {key: value for key, value in sampling.items() if value not in (None, [], ()) and key != "model_args"}


@dataclass(frozen=True)
class Coverage:
    """How many of the published protocol's items (people, openings) a run scored, and why the rest were not."""

    n_published: int
    n_scored: int
    unit: str  # "people", "openings"
    why_not: Mapping[str, int] = field(default_factory=dict)  # reason -> items

    @property
    def complete(self) -> bool:
        return self.n_scored >= self.n_published

    def line(self) -> str:
        """ "23 of 30 openings scored: 4 with a chunk the judge never rated, 3 not answered yet"."""
        text = f"{self.n_scored} of {self.n_published} {self.unit} scored"
        if self.why_not:
            text += ": " + ", ".join(f"{count} {reason}" for reason, count in self.why_not.items())
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "n_published": self.n_published,
            "n_scored": self.n_scored,
            "unit": self.unit,
            "why_not": dict(self.why_not),
        }


def coverage(n_published: int, unit: str, why_not: Sequence[str | None], *, n_in_run: int) -> Coverage:
    """A Coverage from a run's records: `why_not` one entry per recorded item, None for an item scored in full, else
    why it was not; the run's items without a record yet, and the published items the run does not ask (a cut,
    --limit), are counted with their reason."""
    reasons = dict(sorted(Counter(why for why in why_not if why is not None).items()))  # the run's own first
    if n_in_run > len(why_not):
        reasons["not answered yet"] = n_in_run - len(why_not)
    if n_published > n_in_run:
        reasons["not in this run (a cut)"] = n_published - n_in_run
    return Coverage(n_published, sum(1 for why in why_not if why is None), unit, reasons)


def failed_item(record: Mapping[str, Any]) -> str | None:
    """Why an item that failed (status "error") has no score, naming the role whose call failed; None when it did
    not fail."""
    if record.get("status", "ok") == "ok":
        return None
    role = str(record.get("error_role") or "")
    return f"failed (a call of {ROLE_NAMES.get(role, role)} failed)" if role else "failed"


def label(
    given: str,
    differences: Sequence[str],
    covered: Coverage | None = None,
    what: str = "the published leaderboard",
    notes: Sequence[str] = (),
) -> tuple[bool, str]:
    """(comparable, the one line that says so): comparable only when nothing differs and `covered` (if given) is
    complete; `given` names the models of the roles, and the coverage is said beside them or among the differences;
    `notes` (what the run did as the published run did, but a reader should know) are said beside them too."""
    differences = list(differences)
    if covered is not None:
        if covered.complete:
            given = f"{given}; {covered.line()}"
        else:
            differences.append(covered.line())
    if notes:
        given = "; ".join([given, *notes])
    if not differences:
        return True, f"comparable with {what} ({given})"
    return False, f"not comparable with {what} ({given}): " + "; ".join(differences)


def role_names(records: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """The model of each role, as the records name it: the instrument's own role fields or, for an item that
    failed before it recorded them, the roles the run gave it (`roles`, written with every failed item)."""
    names: dict[str, set[str]] = {}
    for record in records:
        roles = record.get("roles")
        if isinstance(roles, Mapping):
            for role, name in roles.items():
                if name:
                    names.setdefault(str(role), set()).add(str(name))
    return {role: ", ".join(sorted(values)) for role, values in names.items()}


def self_played(
    records: Sequence[Mapping[str, Any]], role: str, says_self: Callable[[Mapping[str, Any]], bool]
) -> bool:
    """Whether the model under test played `role` (judge, simulator): as the answered records say (`says_self`),
    or, when every item failed, as the roles the items were given show (a role missing there was played by it)."""
    answered = [r for r in records if r.get("status", "ok") == "ok"]
    if answered:
        return any(says_self(r) for r in answered)
    given = [r.get("roles") for r in records if isinstance(r.get("roles"), Mapping)]
    return bool(given) and not any(role in roles for roles in given)
