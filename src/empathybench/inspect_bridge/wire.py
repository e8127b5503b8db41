"""What went over the wire for each call the bridge made through inspect, beside what the instrument asked for.

inspect's providers build the request body themselves and may change it: its `openai` provider takes a model name
it does not know for its newest reasoning model, drops `temperature`, sends the token cap as
`max_completion_tokens` (which llama.cpp's server ignores) and the system prompt with role `developer` (issue 27).
inspect records the body each provider built with the call (`ModelEvent.call.request`); the bridge keeps it with
every call and compares it with the instrument's request. A difference in what is part of the measurement (the
sampling, the token cap, the messages and their roles: the same fields `empathybench run` never lets a model
argument change) is a request change: it marks the call, its item, and the instrument's result, which is then
not comparable (report/validity.py).

Pure functions on plain dicts; the bridge's backend hands them inspect's recorded request.
"""

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from empathybench.engine.engine import stored_value

# The request bodies the comparison reads: OpenAI chat completions (every OpenAI-compatible provider), OpenAI's
# Responses API, and Anthropic's Messages API. Another provider's body is recorded, not compared.
CHAT = "chat.completions"
RESPONSES = "responses"
ANTHROPIC = "anthropic messages"

# Fields of inspect's recorded request that are not part of the JSON body: the SDK sends them as headers or query,
# or reads them itself.
_NOT_IN_BODY = frozenset({"extra_headers", "extra_query", "timeout"})
# The instrument's sampling fields by what each API calls them; a field an API has no place for is in
# _CANNOT_CARRY (`empathybench run` leaves it out there too: models/anthropic_backend.py `sampling_fields`).
_FIELD_NAMES: dict[str, dict[str, str]] = {
    CHAT: {"stop": "stop"},
    RESPONSES: {"stop": "stop"},
    ANTHROPIC: {"stop": "stop_sequences"},
}
_CANNOT_CARRY: dict[str, frozenset[str]] = {
    CHAT: frozenset(),
    RESPONSES: frozenset({"seed"}),  # the Responses API has no seed
    ANTHROPIC: frozenset({"seed", "min_p", "repeat_penalty"}),
}
# A value the API takes as its default, so leaving the field out sends the same request (Anthropic's top_p).
_API_DEFAULTS: dict[str, dict[str, Any]] = {ANTHROPIC: {"top_p": 1.0}}
# The token cap each API honours, and other names a provider may put it under (a server may ignore those).
_CAP_FIELD = {CHAT: "max_tokens", RESPONSES: "max_output_tokens", ANTHROPIC: "max_tokens"}
_OTHER_CAP_FIELDS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "min_p", "repeat_penalty", "stop", "seed")
# Sampling fields the instrument never sets that change the reply when a provider or the user's config adds them.
_ADDED_SAMPLING_FIELDS = ("frequency_penalty", "presence_penalty", "logit_bias", "n", "typical_p", "tfs_z")
_VALUE_CHARS = 60  # a value quoted in a change is cut to this many characters


def wire_body(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body the SDK sends for inspect's recorded request: `extra_body` merged in at the top level (as the
    OpenAI SDK merges it), header and query fields left out, and fields left unset (recorded as null) left out."""
    body = {k: v for k, v in recorded.items() if k not in _NOT_IN_BODY and k != "extra_body" and v is not None}
    extra = recorded.get("extra_body")
    if isinstance(extra, Mapping):
        body.update(extra)
    return body


def api_of(provider: str, body: Mapping[str, Any]) -> str | None:
    """Which request shape `body` has (None: one the comparison does not read)."""
    if provider == "anthropic" and isinstance(body.get("messages"), list):
        return ANTHROPIC
    if isinstance(body.get("messages"), list):
        return CHAT
    if isinstance(body.get("input"), list | str):
        return RESPONSES
    return None


def message_key(api: str) -> str:
    return "input" if api == RESPONSES else "messages"


def _text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a list of parts joined (None: not text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text") for part in content if isinstance(part, Mapping)]
        if all(isinstance(part, str) for part in parts):
            return "".join(parts)  # type: ignore[arg-type]
    return None


def sent_messages(api: str, body: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """(role, text) of each message the body sends, in order, the API's system field as a system message."""
    messages: list[tuple[str, str | None]] = []
    system = body.get("system") if api == ANTHROPIC else body.get("instructions") if api == RESPONSES else None
    if system is not None:
        messages.append(("system", _text(system)))
    listed = body.get(message_key(api))
    if isinstance(listed, str):  # the Responses API takes a bare string as one user message
        return [*messages, ("user", listed)]
    for message in listed or ():
        if isinstance(message, Mapping):
            messages.append((str(message.get("role", "")), _text(message.get("content"))))
    return messages


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"


def _same(asked: Any, sent: Any) -> bool:
    if isinstance(asked, list | tuple) and isinstance(sent, str):
        sent = [sent]  # one stop sequence may be sent as a string
    if isinstance(asked, list | tuple) and isinstance(sent, list | tuple):
        return list(asked) == list(sent)
    if isinstance(asked, int | float) and isinstance(sent, int | float) and not isinstance(sent, bool):
        return float(asked) == float(sent)
    return bool(asked == sent)


def _message_changes(asked: Sequence[Mapping[str, str]], sent: list[tuple[str, str | None]]) -> list[str]:
    changes: list[str] = []
    if len(sent) != len(asked):
        changes.append(f"{len(asked)} messages sent as {len(sent)}")
    roles_changed: dict[tuple[str, str], None] = {}  # in order, each change once
    texts_changed = 0
    for (role, text), want in zip(sent, asked, strict=False):
        if role != want["role"]:
            roles_changed[(want["role"], role)] = None
        if text != want["content"]:
            texts_changed += 1
    changes += [f"{asked_role} message sent as {role}" for asked_role, role in roles_changed]
    if texts_changed:
        changes.append(f"the text of {texts_changed} message{'s' if texts_changed > 1 else ''} changed")
    return changes


def _cap_changes(api: str, asked_cap: int, body: Mapping[str, Any]) -> list[str]:
    honoured = _CAP_FIELD[api]
    if honoured in body:
        if _same(asked_cap, body[honoured]):
            return []
        return [f"max_tokens sent as {_shown(body[honoured])} (asked {asked_cap})"]
    for name in _OTHER_CAP_FIELDS:
        if name in body:  # a name the server may not read: then no cap at all
            value = "" if _same(asked_cap, body[name]) else f" = {_shown(body[name])} (asked {asked_cap})"
            return [f"max_tokens sent as {name}{value}"]
    return ["max_tokens dropped"]


def request_changes(
    api: str,
    asked_messages: Sequence[Mapping[str, str]],
    asked_sampling: Mapping[str, Any],
    body: Mapping[str, Any],
) -> list[str]:
    """What the body changed of the instrument's request, in what is part of the measurement: each sampling field
    dropped, changed or added, the token cap renamed or changed, a message's role or text changed, messages added
    or dropped. Empty when the body sends what the instrument asked for.

    `asked_sampling`: the instrument's Sampling as a dict (None: not sent). A field the API has no place for is
    not a change (`empathybench run` cannot send it either), nor is leaving out a value the API takes as its
    default.
    """
    names = _FIELD_NAMES[api]
    cannot = _CANNOT_CARRY[api]
    defaults = _API_DEFAULTS.get(api, {})
    changes: list[str] = []
    for field in SAMPLING_FIELDS:
        asked = asked_sampling.get(field)
        if field == "stop" and not asked:
            asked = None
        name = names.get(field, field)
        if asked is None:
            if name in body and body[name] is not None:
                changes.append(f"{field} added ({_shown(body[name])})")
            continue
        if field in cannot:
            continue
        if name not in body:
            if field in defaults and _same(asked, defaults[field]):
                continue
            changes.append(f"{field} dropped")
        elif not _same(asked, body[name]):
            changes.append(f"{field} sent as {_shown(body[name])} (asked {_shown(asked)})")
    changes += _cap_changes(api, int(asked_sampling["max_tokens"]), body)
    changes += [f"{name} added ({_shown(body[name])})" for name in _ADDED_SAMPLING_FIELDS if body.get(name) is not None]
    changes += _message_changes(asked_messages, sent_messages(api, body))
    return changes


def call_details(
    provider: str,
    asked: Mapping[str, Any],
    asked_messages: Sequence[Mapping[str, str]],
    asked_sampling: Mapping[str, Any],
    recorded: Mapping[str, Any] | None,
    served_model: str | None,
    unrecorded_reason: str = "inspect recorded no request for this call",
) -> dict[str, Any]:
    """One call's record beside the engine's (`messages`, `sampling`): `asked` (what the bridge asked inspect for),
    `sent` (the body inspect's provider built, besides the messages, as the SDK sends it), `sent_api`,
    `sent_messages` (only where they differ from the instrument's), `served_model`, and `request_changes` (empty:
    the instrument's request went over the wire), or `request_unchecked` saying why nothing could be compared."""
    details: dict[str, Any] = {"asked": dict(asked)}
    if served_model:
        details["served_model"] = served_model[:200]
    if recorded is None:
        details["sent"] = None
        details["request_unchecked"] = unrecorded_reason
        return details
    body = wire_body(recorded)
    api = api_of(provider, body)
    key = message_key(api) if api is not None else "messages"
    details["sent"] = stored_value({k: v for k, v in body.items() if k != key})
    if api is None:
        details["sent_messages"] = stored_value(body.get(key))
        details["request_unchecked"] = f"inspect's {provider} provider sends a request this check does not read"
        return details
    details["sent_api"] = api
    if body.get(key) != list(asked_messages):
        details["sent_messages"] = stored_value(body.get(key))
    details["request_changes"] = request_changes(api, asked_messages, asked_sampling, body)
    return details


def item_changes(calls: Iterable[Mapping[str, Any]]) -> list[str]:
    """The request changes of an item's calls, each once in first-seen order (another role's prefixed with it, e.g.
    "judge: ")."""
    seen: dict[str, None] = {}
    for call in calls:
        prefix = f"{call['role']}: " if call.get("role") else ""
        for change in call.get("request_changes") or ():
            seen[prefix + str(change)] = None
    return list(seen)


def changes_text(changes: Sequence[str], limit: int = 6) -> str:
    """The changes in one line: the first `limit`, then how many more."""
    shown = ", ".join(changes[:limit])
    return shown + (f" and {len(changes) - limit} more" if len(changes) > limit else "")


def mark_request_changes(result: dict[str, Any], records: Sequence[Mapping[str, Any]]) -> None:
    """Set `request_changed` on an instrument's summary entry when a provider changed any call's request (read by
    report/validity.py: the result is then not comparable): how many calls were changed of those checked, and the
    changes. Items that failed count their changes too (a server may refuse the changed request)."""
    calls = [call for record in records for call in record.get("calls") or ()]
    checked = [call for call in calls if "request_changes" in call]
    changed = [call for call in checked if call.get("request_changes")]
    failed_changes = [record for record in records if record.get("status") != "ok" and record.get("request_changes")]
    if not changed and not failed_changes:
        return
    changes = item_changes(calls)
    for record in failed_changes:
        for change in record.get("request_changes") or ():
            if change not in changes:
                changes.append(str(change))
    where = [f"{len(changed)} of {len(checked)} answered calls"] if changed else []
    if failed_changes:
        where.append(f"{len(failed_changes)} failed item{'s' if len(failed_changes) > 1 else ''}")
    reason = f"inspect's provider changed the instrument's request in {' and '.join(where)}"
    result["request_changed"] = {
        "n_calls_changed": len(changed),
        "n_calls_checked": len(checked),
        "n_failed_items": len(failed_changes),
        "changes": changes,
        "reason": f"{reason}: {changes_text(changes)}",
    }
