"""The one place numbers become text: report.html (tables and the SVG charts), report.md, the terminal, the
instruments' section texts and sample lines and the judge-validation tables all write their numbers through these
functions, so a figure reads the same everywhere."""

import math
from collections.abc import Iterable, Mapping, Sequence
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


def fit_columns(table: Any, console: Any, whole: Mapping[int, Iterable[str]] | None = None) -> bool:
    """Set the widths of a rich `table` so that it prints within `console.width` with no word cut: each column at
    least as wide as its longest word (and as the longest text in `whole[column]`, such as a model name that holds
    a space), the room left shared in proportion to what each column still wants, so long texts wrap first.
    False when its words alone do not fit: then the `whole` and no-wrap columns keep their width and the others
    share what is left, folded rather than cut (the caller may lay the table out another way instead).

    Rich's own layout narrows the widest wrapping column and then every column alike, cutting model names and
    numbers ("gpt-4-1106-…") while a header or a note could have wrapped."""
    from rich.cells import cell_len
    from rich.measure import Measurement

    columns = table.columns
    if not columns:
        return True
    options = console.options
    least: list[int] = []
    most: list[int] = []
    for index, column in enumerate(columns):
        sizes = [Measurement.get(console, options, cell) for cell in (column.header, *column.cells)]
        kept = max((cell_len(text) for text in (whole or {}).get(index, ())), default=0)
        widest = max(size.maximum for size in sizes)
        least.append(widest if column.no_wrap else max(kept, *(size.minimum for size in sizes)))
        most.append(max(least[-1], widest))
    _, right, _, left = table.padding
    padding = (left + right) * len(columns) - (0 if table.pad_edge else left + right)
    borders = ((2 if table.show_edge else 0) + len(columns) - 1) if table.box else 0
    room = console.width - padding - borders
    if sum(least) > room:
        kept = [index for index, column in enumerate(columns) if index in (whole or {}) or column.no_wrap]
        others = [index for index in range(len(columns)) if index not in kept]
        left_over = room - sum(least[index] for index in kept)
        if others and left_over >= len(others):
            for index in kept:
                columns[index].width = least[index]
            for share, index in zip(_shares(left_over, [least[i] for i in others]), others, strict=True):
                columns[index].width = share
                columns[index].overflow = "fold"
        return False
    if sum(most) <= room:
        return True  # rich's layout keeps every column at its widest
    wants = [high - low for low, high in zip(least, most, strict=True)]
    extra = _shares(room - sum(least), wants)
    for column, low, more in zip(columns, least, extra, strict=True):
        column.width = low + more
    return True


def _shares(total: int, weights: Sequence[int]) -> list[int]:
    """`total` split in proportion to `weights` (all alike when they are all 0), the rounding's remainder to the
    largest weights first; the shares add up to `total`."""
    weights = [weight if any(weights) else 1 for weight in weights]
    shares = [total * weight // sum(weights) for weight in weights]
    for index in sorted(range(len(weights)), key=lambda i: weights[i], reverse=True)[: total - sum(shares)]:
        shares[index] += 1
    return shares
