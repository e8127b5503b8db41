"""How reports write numbers and intervals (HTML, Markdown, terminal and the judge-validation tables)."""

from collections.abc import Sequence
from typing import Any


def number(value: Any, digits: int = 2, missing: str = "—") -> str:
    if value is None:
        return missing
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def interval(ci: Sequence[float | None] | None, digits: int = 2, missing: str = "") -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return missing
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"
