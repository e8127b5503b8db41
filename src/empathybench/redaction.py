"""Secrets never reach a file, a report or the terminal: one place knows them and blanks them out of any text.

Known secrets are the API keys in the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN), every
key a backend was given, and credentials inside a base URL (user:password@ and `?key=`/`api_key=`-like query
values). Each is replaced in the forms a server or a serialiser may echo it: verbatim, JSON-escaped,
percent-encoded, and, for URL credentials, as the base64 of an HTTP Basic `user:password` header.

Redaction is applied where text enters (backend error messages, reply text) and again wherever text leaves
(samples.jsonl, run.json, summary.json, the response cache, reports, `judge validate --out`, printed lines).
"""

import base64
import html
import json
import os
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlencode, urlsplit, urlunsplit

import markupsafe

REDACTED = "***redacted***"
SECRET_ENV_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
URL_ENV_VARS = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")
# Shorter values are not treated as secrets: blanking every "abc" out of a report would garble it, and a
# 5-character key protects nothing. Placeholders the backends send to servers that need no key are not secrets.
MIN_SECRET_LENGTH = 6
NOT_SECRETS = frozenset({"no-key"})
# Query parameters whose values are credentials (matched on the lower-cased name, as a substring).
_SECRET_QUERY_WORDS = ("key", "token", "secret", "password", "passwd", "auth", "sig", "credential")

_lock = threading.Lock()
_registered: set[str] = set()
_registered_version = 0  # bumped whenever _registered changes, so memoised secrets are rebuilt


def is_secret_query_name(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_QUERY_WORDS)


def url_secrets(url: str | None) -> list[str]:
    """The credentials inside a URL: user, password, `user:password` and its Basic-auth forms, key-like query values."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return []
    found: list[str] = []
    if username or password:
        user, secret = unquote(username or ""), unquote(password or "")
        pair = f"{user}:{secret}"
        found += [user, secret, pair, base64.b64encode(pair.encode()).decode()]
        # The userinfo as written in the URL, in case it was percent-encoded there.
        found.append(parts.netloc.rsplit("@", 1)[0])
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if is_secret_query_name(name):
            found.append(value)
    return [s for s in found if s]


def register_secret(value: str | None) -> None:
    """Remember a secret (an API key a backend was given) for the rest of the process."""
    global _registered_version
    if value and len(value) >= MIN_SECRET_LENGTH and value not in NOT_SECRETS:
        with _lock:
            if value not in _registered:
                _registered.add(value)
                _registered_version += 1


def register_url(url: str | None) -> None:
    """Remember every credential inside a base URL."""
    for secret in url_secrets(url):
        register_secret(secret)


# The last answer of known_secrets and what it was computed from (the environment's values, the registrations):
# it runs for every record and reply written, and the secrets rarely change during a run.
_known_memo: tuple[Any, list[str]] = (None, [])


def known_secrets() -> list[str]:
    """Every secret known now, longest first (so a key is blanked before any shorter secret inside it)."""
    global _known_memo
    source = (tuple(os.environ.get(name) for name in (*SECRET_ENV_VARS, *URL_ENV_VARS)), _registered_version)
    memo = _known_memo
    if memo[0] == source:
        return list(memo[1])
    found = _compute_known_secrets()
    _known_memo = (source, found)
    return list(found)


def _compute_known_secrets() -> list[str]:
    secrets = set()
    for name in SECRET_ENV_VARS:
        value = os.environ.get(name)
        if value and len(value) >= MIN_SECRET_LENGTH and value not in NOT_SECRETS:
            secrets.add(value)
    for name in URL_ENV_VARS:
        secrets.update(s for s in url_secrets(os.environ.get(name)) if len(s) >= MIN_SECRET_LENGTH)
    with _lock:
        secrets.update(_registered)
    return sorted(secrets, key=len, reverse=True)


def _forms(secret: str) -> Iterable[str]:
    """The ways a secret can appear in text: as is, JSON-escaped (both ASCII modes), percent-encoded, in HTML."""
    yield secret
    yield json.dumps(secret)[1:-1]
    yield json.dumps(secret, ensure_ascii=False)[1:-1]
    yield quote(secret, safe="")
    yield quote_plus(secret, safe="")
    yield html.escape(secret)
    yield str(markupsafe.escape(secret))  # the report templates escape quotes as &#34; and &#39;


# The forms of the last set of secrets seen, and those forms as they appear inside JSON text: rebuilt only when
# the secrets change (a key registered, the environment edited), not for every record written.
_forms_memo: tuple[tuple[str, ...], list[str], tuple[str, ...]] = ((), [], ())


def _secret_forms_and_json() -> tuple[list[str], tuple[str, ...]]:
    global _forms_memo
    secrets = tuple(known_secrets())
    memo = _forms_memo
    if memo[0] != secrets:
        forms: dict[str, None] = {}
        for secret in secrets:
            forms.update(dict.fromkeys(form for form in _forms(secret) if form))
        # JSON escapes characters one by one, so a form inside a string value appears in json.dumps's output
        # as the JSON escape of the form (ensure_ascii=False, as dumps_redacted writes).
        in_json = tuple(dict.fromkeys(json.dumps(form, ensure_ascii=False)[1:-1] for form in forms))
        memo = _forms_memo = (secrets, list(forms), in_json)
    return memo[1], memo[2]


def _secret_forms() -> list[str]:
    return _secret_forms_and_json()[0]


def _redact_with(text: str, forms: list[str]) -> str:
    for form in forms:
        if form in text:
            text = text.replace(form, REDACTED)
    return text


def redact(text: str) -> str:
    """`text` with every known secret replaced by REDACTED."""
    if not text:
        return text
    return _redact_with(text, _secret_forms())


def redact_data(data: Any) -> Any:
    """A copy of JSON-like data with every string (keys too) redacted; tuples become lists."""
    forms = _secret_forms()
    if not forms:
        return data

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return _redact_with(value, forms)
        if isinstance(value, dict):
            return {walk(k) if isinstance(k, str) else k: walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v) for v in value]
        return value

    return walk(data)


def dumps_redacted(data: Any, *, indent: int | None = None) -> str:
    """JSON of `data` with every secret redacted. Strings are redacted before serialising, so the JSON stays valid
    whatever characters a secret holds; values JSON cannot hold are written as their (redacted) str()."""
    forms, in_json = _secret_forms_and_json()
    if forms:
        # Fast path: most records hold no secret at all. Serialise as is and keep the text when no form of any
        # secret appears in it (redacting would have changed no string, so the text is the same); else redact
        # every string first, as below.
        text = json.dumps(data, indent=indent, ensure_ascii=False, default=str)
        if not any(form in text for form in in_json):
            return text
    return json.dumps(redact_data(data), indent=indent, ensure_ascii=False, default=lambda value: redact(str(value)))


def strip_url_credentials(url: str) -> str:
    """The URL without user:password@ and with key-like query values replaced: safe to record and show."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if is_secret_query_name(k) and v else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def split_url_query(url: str) -> tuple[str, dict[str, str]]:
    """A base URL without its query string, and the query as a dict (SDKs append paths after the base URL, so a
    query left in it would swallow the path; they take it separately as default query parameters)."""
    parts = urlsplit(url)
    if not parts.query:
        return url, {}
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", parts.fragment)), query


class RedactingStream:
    """A text stream that redacts everything written to it, then writes it to the current sys.stdout/sys.stderr
    (looked up at each write, so test runners that swap the streams still capture the output)."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def _target(self) -> Any:
        import sys

        stream = getattr(sys, self._name)
        # While a rich Live display runs, sys.stdout/stderr are its proxies, which print through a console
        # writing here: write to the stream underneath instead (as rich's own Console.file does).
        return getattr(stream, "rich_proxied_file", stream)

    def write(self, text: str) -> int:
        self._target.write(redact(text))
        return len(text)

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "rich_proxied_file":
            raise AttributeError(attribute)  # rich must keep writing through this stream
        return getattr(self._target, attribute)


def _forget_registered_for_tests() -> None:
    global _registered_version
    with _lock:
        _registered.clear()
        _registered_version += 1


__all__ = [
    "REDACTED",
    "RedactingStream",
    "dumps_redacted",
    "known_secrets",
    "redact",
    "redact_data",
    "register_secret",
    "register_url",
    "split_url_query",
    "strip_url_credentials",
    "url_secrets",
]
