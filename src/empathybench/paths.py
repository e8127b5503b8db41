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
