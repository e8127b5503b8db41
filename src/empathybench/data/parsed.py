"""Text a parser read from a fetched data file, kept in the cache by the file's SHA-256 and the parser's name.

Reading a file again is cheap; parsing it may not be (python-docx takes ~0.1 s to import and read SECEU's two .docx
files, most of a re-run of a finished run). The key is the content's hash, not its name, and the parser's name carries
its version, so a kept result is always the one the parser would give for these very bytes; every check on the text
still runs on it each time. A kept result that cannot be read, or a cache that cannot be written, only means parsing
again.
"""

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from empathybench.data.fetch import FetchedFile, write_atomically
from empathybench.paths import cache_dir

PARSED_DIR = "parsed"

Document = TypeVar("Document")


def parsed_path(fetched: FetchedFile, parser: str) -> Path:
    return cache_dir() / PARSED_DIR / f"{fetched.sha256}.{parser}.json"


def parsed_lines(fetched: FetchedFile, parser: str, parse: Callable[[Path], list[str]]) -> list[str]:
    """`parse(fetched.path)`, kept for the next call on the same bytes by `parser` (a name with its version)."""
    return parsed_document(fetched, parser, parse, _is_lines)


def _is_lines(kept: Any) -> bool:
    return isinstance(kept, list) and all(isinstance(line, str) for line in kept)


def parsed_document(
    fetched: FetchedFile, parser: str, parse: Callable[[Path], Document], accept: Callable[[Any], bool]
) -> Document:
    """`parse(fetched.path)` (any JSON-able document), kept for the next call on the same bytes by `parser` (a name
    with its version); a kept document is served only when `accept` finds it of the parser's shape."""
    path = parsed_path(fetched, parser)
    try:
        kept = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        kept = None
    if kept is not None and accept(kept):
        return kept  # type: ignore[no-any-return]
    document = parse(fetched.path)  # a file the parser refuses raises here, every time: nothing is kept for it
    # A read-only or full cache (or text JSON cannot hold) only means the next run parses again.
    with contextlib.suppress(OSError, ValueError):
        write_atomically(path, json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    return document


def assigned_literal(source: str, variable: str) -> object | None:
    """The value of a top-level `variable = <literal>` in Python source (a pinned upstream file), read with
    ast.literal_eval: the code is parsed, never run. None where the source has no such assignment or does not parse
    (a notebook cell with shell magics)."""
    import ast  # only the readers of upstream name maps need it

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == variable for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None
    return None


def string_map(value: object) -> dict[str, str]:
    """A literal read by `assigned_literal` as a name map: its str -> str pairs (anything else left out)."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
