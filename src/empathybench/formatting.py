"""The one place numbers become text: report.html (tables and the SVG charts), report.md, the terminal, the
instruments' section texts and sample lines and the judge-validation tables all write their numbers through these
functions, so a figure reads the same everywhere."""

import math
from collections.abc import Sequence
from typing import Any


def finite(value: object) -> float | None:
    """A finite float, or None for None, NaN, infinities and anything that is not a number."""
    try:
        converted = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return converted if math.isfinite(converted) else None


def number(value: Any, digits: int = 2, missing: str = "—", signed: bool = False) -> str:
    """A table figure: floats to `digits` decimals (with a + on positive ones when `signed`), ints and text as they
    are, booleans as yes/no, None as `missing`."""
    if value is None:
        return missing
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    if signed and isinstance(value, int):
        return f"{value:+d}"
    return str(value)


def usd(value: Any) -> str:
    """A cost: "$0", "$0.0123" below a dollar, "$1,234.56" above; "unknown" when there is no number."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return "unknown"
    if value == 0:
        return "$0"
    return f"${value:,.4f}" if abs(value) < 1 else f"${value:,.2f}"


def percent_of(part: float, whole: float, digits: int = 1) -> str:
    """`part` as a percentage of `whole` ("4.0%"); "" when `whole` is not positive."""
    return f"{number(100 * part / whole, digits)}%" if whole > 0 else ""


def significant(value: float, digits: int = 2) -> str:
    """A p-value and the like: `digits` significant digits (0.00012 -> 0.00012, 0.2345 -> 0.23)."""
    return f"{value:.{digits}g}"


def interval(ci: Sequence[float | None] | None, digits: int = 2, missing: str = "") -> str:
    """A 95% interval as "[low, high]" to `digits` decimals, or `missing` without both ends."""
    if not ci or ci[0] is None or ci[1] is None:
        return missing
    return f"[{number(float(ci[0]), digits)}, {number(float(ci[1]), digits)}]"


def compact(value: object, unit: str = "") -> str:
    """A chart label: 1234, 45.2, 3.14, 0.62, 0.0123 (the digits a chart has room for); "n/a" when missing; the
    unit appended ("45%", "12 ms")."""
    x = finite(value)
    if x is None:
        return "n/a"
    a = abs(x)
    if a >= 1000 or a == 0:
        text = f"{x:.0f}"
    else:
        digits = 1 if a >= 10 else 2 if a >= 1 else min(6, 2 - math.floor(math.log10(a)))
        text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    text = "0" if float(text) == 0 else text
    return text + (" " if unit[:1].isalnum() else "") + unit if unit else text


def compact_interval(value: object, low: object, high: object, unit: str = "") -> str:
    """ "45.2 [40.1, 50.3]" in chart digits, or the value alone without a complete interval."""
    lo, hi = finite(low), finite(high)
    if finite(value) is None or lo is None or hi is None:
        return compact(value, unit)
    return f"{compact(value, unit)} [{compact(min(lo, hi))}, {compact(max(lo, hi))}]"


def fixed(value: object, digits: int = 1) -> str:
    """A chart cell value to a fixed number of decimals ("" when missing): heatmap cells line up this way."""
    x = finite(value)
    return "" if x is None else f"{x:.{digits}f}"


def cut_text(text: object, limit: int) -> str:
    """`text` as a string (None and "" as ""), cut to `limit` characters with a note of how long it was."""
    text = str(text or "")
    return text if len(text) <= limit else text[:limit] + f" … [cut at {limit} of {len(text)} characters]"


# Characters that steer a terminal rather than show: C0 and C1 controls (ESC starts colour, cursor and title
# sequences; CSI U+009B alone does in some terminals; a newline would start a line the file wrote), DEL, and the
# bidirectional overrides and isolates that reorder what follows them.
_STEERING = {
    code: "\ufffd" for code in (*range(0x00, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}


def printable(text: object, limit: int = 200) -> str:
    """Text from a file or a server, safe to print in a terminal on one line: every control character as U+FFFD,
    cut to `limit` characters with a note of how long it was (`cut_text`)."""
    return cut_text(str(text).translate(_STEERING), limit)
