"""Where EmpathyBench keeps its caches."""

import os
from pathlib import Path


def cache_dir() -> Path:
    """The user cache directory; `EMPATHYBENCH_CACHE_DIR` overrides it."""
    override = os.environ.get("EMPATHYBENCH_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("empathybench", appauthor=False))


def check_writable_dir(directory: Path, what: str) -> None:
    """Fail now, with one line, if files cannot be written in `directory` (read-only, full, or not a directory).

    A directory that does not exist yet is checked at its nearest existing parent, and nothing is left behind.
    """
    from empathybench.errors import UserError

    if directory.exists() and not directory.is_dir():
        raise UserError(f"{what} {directory} is a file, not a directory; give a directory path")
    probe_dir = directory
    while not probe_dir.exists():
        if probe_dir.parent == probe_dir:
            break
        probe_dir = probe_dir.parent
    if not probe_dir.is_dir():
        raise UserError(f"{what} {directory} cannot be created: {probe_dir} is not a directory")
    import tempfile

    try:
        # A few kB flushed to disk: a full disk fails here, not after the first model calls.
        with tempfile.TemporaryFile(dir=probe_dir, prefix=".empathybench-write-check-") as handle:
            handle.write(b"\0" * 4096)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise UserError(f"{what} {directory} is not writable: {exc.strerror or exc}") from None
