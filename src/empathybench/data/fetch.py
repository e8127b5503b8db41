"""Fetch pinned upstream files over https (or from a mirror), verify them and cache them.

`EMPATHYBENCH_MIRROR` replaces the `https://raw.githubusercontent.com` prefix. It may be a directory
laid out `<owner>/<repo>/<commit>/<path>` or an http(s) URL with the same layout.
"""

import hashlib
import os
import re
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from empathybench.data.registry import GITHUB_RAW_PREFIX, DataFile, pin
from empathybench.errors import DataError
from empathybench.paths import cache_dir

FETCH_TIMEOUT_S = 60.0
MAX_EXTRACT_SOURCE_BYTES = 32 * 1024 * 1024  # a site's .js file is well under 1 MB


@dataclass(frozen=True)
class FetchedFile:
    key: str
    path: Path
    sha256: str
    verified: bool  # False only when --allow-unverified accepted content that does not match the pin
    source: str

    def as_record(self) -> dict[str, Any]:
        """What run.json, a judge validation's report and an inspect log record of it (not the local path)."""
        return {"key": self.key, "sha256": self.sha256, "verified": self.verified, "source": self.source}


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_blob_sha1_of(data: bytes) -> str:
    """Git's object id of a file: sha1 over `blob <size>\\0` + content."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def source_url(entry: DataFile, mirror: str | None = None) -> str:
    """Where the file is read from: the mirror when one is set, else GitHub's raw-content host."""
    mirror = os.environ.get("EMPATHYBENCH_MIRROR") if mirror is None else mirror
    if not mirror:
        return entry.url
    if mirror.startswith(("http://", "https://")):
        return f"{mirror.rstrip('/')}/{entry.relative_url}"
    return str(Path(mirror).expanduser().resolve() / entry.repo / entry.commit / entry.path)


def extract_block(data: bytes, name: str, where: str) -> bytes:
    """The template literal assigned to `name` in a JavaScript file, stripped, with one final newline (the text an
    extract pin's sha256 is of); a file without it is a DataError."""
    if len(data) > MAX_EXTRACT_SOURCE_BYTES:
        raise DataError(f"{where} is larger than the file an extract is read from can be")
    text = data.decode("utf-8", errors="replace")
    found = re.search(rf"(?<![\w$]){re.escape(name)}\s*=\s*`([^`]*)`", text)
    if found is None:
        raise DataError(f"{where} has no block {name} = `...`")
    return (found.group(1).strip() + "\n").encode("utf-8")


def _read_pinned(entry: DataFile) -> tuple[str, bytes]:
    """(where it was read, the pinned bytes): the whole file, or for an extract pin its block, read from the file
    (GitHub, an http mirror, or a directory mirror holding the file) or as the directory mirror keeps it."""
    location = source_url(entry)
    if entry.extract is None:
        return location, _read_source(location)
    local = not location.startswith(("http://", "https://"))
    if local and not Path(location).is_file() and entry.mirror_copy:
        copy = Path(os.environ.get("EMPATHYBENCH_MIRROR", "")).expanduser().resolve() / entry.mirror_copy
        return str(copy), _read_source(str(copy))
    return location, extract_block(_read_source(location), entry.extract, location)


def _read_source(location: str) -> bytes:
    if not location.startswith(("http://", "https://")):
        try:
            return Path(location).read_bytes()
        except FileNotFoundError:
            raise DataError(f"data file not found in the mirror: {location}") from None
        except OSError as exc:
            raise DataError(f"cannot read {location}: {exc.strerror}") from None
    request = urllib.request.Request(location, headers={"User-Agent": "empathybench"})
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        raise DataError(f"cannot download {location}: HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DataError(
            f"cannot download {location} ({reason}); offline? set EMPATHYBENCH_MIRROR to a local mirror"
        ) from None


def _expected_hash(entry: DataFile) -> tuple[str, str]:
    if entry.sha256:
        return "sha256", entry.sha256
    if entry.git_blob_sha1:
        return "git blob sha1", entry.git_blob_sha1
    raise DataError(f"{entry.key}: the registry has no hash for this file")


def _actual_hash(kind: str, data: bytes) -> str:
    return sha256_of(data) if kind == "sha256" else git_blob_sha1_of(data)


def cached_path(entry: DataFile) -> Path:
    path = cache_dir() / "data" / entry.repo / entry.commit / entry.path
    return path if entry.extract is None else path.with_name(f"{path.name}.{entry.extract}.txt")


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _mismatch(entry: DataFile, where: str, kind: str, expected: str, actual: str) -> DataError:
    return DataError(
        f"checksum mismatch for {entry.key} ({where}): expected {kind} {expected}, got {actual}; "
        "refusing it (pass --allow-unverified to accept a deliberately changed copy)"
    )


def fetch_pinned(package: str, key: str, *, allow_unverified: bool = False) -> FetchedFile:
    """A verified local copy of the file `key` pinned in `package`'s pins.json (an instrument passes its
    `__package__`), fetched if needed."""
    return fetch_entry(pin(package, key), allow_unverified=allow_unverified)


def fetch_entry(entry: DataFile, *, allow_unverified: bool = False, refresh: bool = False) -> FetchedFile:
    """A verified local copy of the pinned file `entry`: the cached copy when it matches its pin, else read from
    the mirror or GitHub, checked and cached (a mismatch is a DataError unless `allow_unverified`)."""
    key = entry.key
    kind, expected = _expected_hash(entry)
    target = cached_path(entry)

    if target.exists() and not refresh:
        data = target.read_bytes()
        actual = _actual_hash(kind, data)
        if actual == expected or allow_unverified:
            return FetchedFile(key, target, _sha256(kind, actual, data), actual == expected, str(target))
        raise _mismatch(entry, f"cached copy {target}", kind, expected, actual)

    location, data = _read_pinned(entry)
    actual = _actual_hash(kind, data)
    verified = actual == expected
    if not verified and not allow_unverified:
        raise _mismatch(entry, location, kind, expected, actual)
    write_atomically(target, data)
    return FetchedFile(key, target, _sha256(kind, actual, data), verified, location)


def _sha256(kind: str, actual: str, data: bytes) -> str:
    """The SHA-256 of `data`: `actual` when that is what it is (a sha256 pin), so the bytes are hashed once."""
    return actual if kind == "sha256" else sha256_of(data)


def verify_cached(entry: DataFile) -> tuple[str, str | None]:
    """Check a cached file without fetching: returns (status, detail); status in ok|missing|mismatch."""
    kind, expected = _expected_hash(entry)
    target = cached_path(entry)
    if not target.exists():
        return "missing", None
    actual = _actual_hash(kind, target.read_bytes())
    if actual == expected:
        return "ok", None
    return "mismatch", f"expected {kind} {expected}, got {actual}"


def describe_source() -> str:
    mirror = os.environ.get("EMPATHYBENCH_MIRROR")
    return f"mirror {unquote(mirror)}" if mirror else GITHUB_RAW_PREFIX
