"""Dependency-free chart primitives returning inline SVG strings for the self-contained HTML report.

Every chart is one ``<svg class="chart" data-chart="<function name>">`` without scripts, ids or external fonts,
sized from its content, with a ``<title>``/``<desc>`` for screen readers and a ``<title>`` on every data mark (hover
text). Data marks carry class names (``bar``, ``dot``, ``whisker``, ``cell``, ``marker``, ``line``; reference lines
``ref``) and a ``data-value``, so tests can find them. Bad data (None, NaN, empty input, zero-width domains) never
raises: it is drawn as "n/a" or as a small "no data" chart.
"""

import math
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from html import escape

from markupsafe import Markup

from empathybench.formatting import compact, compact_interval, finite, fixed
from empathybench.instruments.protocol import ChartLine, ChartPoint

PALETTE: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")

FONT = "system-ui, sans-serif"
_INK, _MUTED, _GRID, _AXIS, _BAND, _NA = "#1d2433", "#5b6478", "#e3e6ee", "#8a93a6", "#f5f6f9", "#f4f5f7"
_EM = 6.4 / 11  # estimated advance of a Latin character in em (6.4 px at font-size 11): no font metrics here
_ELLIPSIS = "…"
_DASH = {"dashed": "5 3", "dotted": "1.5 2.5", "solid": None}
_TITLE_H = 24  # room for a visible title
_LANE = 14  # height of one lane of labels above a plot

Scale = Callable[[float], float]
Placed = list[tuple[float, str, str, int]]  # (x, text, text-anchor, lane)
Box = tuple[float, float, float, float]  # x0, y0, x1, y1


# ---------------------------------------------------------------------------------------------------- numbers


def _tick(value: float, unit: str) -> str:
    return compact(value, unit if len(unit) <= 2 else "")  # short units ("%") on every tick, longer ones as a caption


def _item(items: object, i: int) -> object:
    """items[i], or None when items is not indexable or too short."""
    try:
        return items[i]  # type: ignore[index]
    except (TypeError, IndexError, KeyError):
        return None


def _fix_domain(low: object, high: object) -> tuple[float, float]:
    """A finite, ordered, non-empty domain (zero-width domains are padded)."""
    lo, hi = finite(low), finite(high)
    lo, hi = (hi if lo is None else lo), (lo if hi is None else hi)
    if lo is None or hi is None:
        return 0.0, 1.0
    lo, hi = min(lo, hi), max(lo, hi)
    if hi - lo <= 1e-9 * max(1.0, abs(lo), abs(hi)):
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    return lo, hi


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Ticks at multiples of a 1-2-5 step covering [low, high]: the first <= low, the last >= high."""
    lo, hi = _fix_domain(low, high)
    raw = (hi - lo) / max(1, min(int(count), 50))
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * (1 - 1e-9))
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    digits = max(0, -math.floor(math.log10(step)))
    return [round(i * step, digits) + 0.0 for i in range(first, last + 1)]


def _axis(
    domain: object, values: Iterable[object] = (), zero: bool = False, pad: float = 0.0, count: int = 5
) -> tuple[float, float, list[float]]:
    """Domain and ticks of an axis: a given domain with the nice ticks inside it, or (domain None) the data range
    (with 0 if asked) padded by a fraction of its span and extended to nice ticks."""
    if domain is not None:
        d0, d1 = _fix_domain(_item(domain, 0), _item(domain, 1))
        eps = (d1 - d0) * 1e-9
        return d0, d1, [t for t in nice_ticks(d0, d1, count) if d0 - eps <= t <= d1 + eps]
    vals = [v for v in map(finite, values) if v is not None] + ([0.0] if zero else [])
    lo, hi = _fix_domain(min(vals, default=0.0), max(vals, default=1.0))
    span = hi - lo
    ticks = nice_ticks(lo - (0 if lo == 0 else pad * span), hi + (0 if hi == 0 else pad * span), count)
    return ticks[0], ticks[-1], ticks


def _scale(d0: float, d1: float, r0: float, r1: float) -> Scale:
    k = (r1 - r0) / (d1 - d0)
    return lambda v: r0 + (v - d0) * k


def _clamp(v: float, d0: float, d1: float) -> float:
    return min(max(v, d0), d1)


# ---------------------------------------------------------------------------------------------------- elements


def _esc(text: object) -> str:
    return escape(str(text), quote=True)


def _c(v: float) -> str:
    return f"{v:.1f}"


def _tip(s: str) -> str:
    return f"<title>{_esc(s)}</title>"


def _attrs(attrs: Mapping[str, object]) -> str:
    """Attributes: floats rounded to 0.1, None left out, `class_` -> class, other `_` -> `-`."""
    return "".join(
        f' {k.rstrip("_").replace("_", "-")}="{_c(v) if isinstance(v, float) else _esc(v)}"'
        for k, v in attrs.items()
        if v is not None
    )


def _el(tag: str, tip: str = "", **attrs: object) -> str:
    return f"<{tag}{_attrs(attrs)}>{_tip(tip)}</{tag}>" if tip else f"<{tag}{_attrs(attrs)}/>"


def _text(x: float, y: float, s: object, anchor: str = "start", tip: str = "", **attrs: object) -> str:
    inner = _esc(s) + (_tip(tip) if tip else "")
    return f'<text x="{_c(x)}" y="{_c(y)}" text-anchor="{anchor}"{_attrs(attrs)}>{inner}</text>'


_WIDE = frozenset("%@mwMW")  # about 0.9 em in sans-serif fonts (Chromium draws "100%" 31 px wide at 11 px)


def _char_em(ch: str) -> float:
    """A character's estimated advance in em: full-width (CJK, most emoji) one em, combining marks none, the widest
    Latin letters and % 0.9, capitals 0.68, the rest 0.58 (an upper bound for digits and lower-case text)."""
    if unicodedata.combining(ch):
        return 0.0
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 1.0
    return 0.9 if ch in _WIDE else 0.68 if ch.isupper() else _EM


def text_width(text: str, size: float = 11, bold: bool = False) -> float:
    """The estimated width in px of `text` at font-size `size` (bold about 8% wider): what every chart measures
    before it places a label, so that none runs out of its viewBox."""
    return sum(_char_em(ch) for ch in text) * size * (1.08 if bold else 1.0)


def _tw(text: str) -> float:
    return text_width(text)


def _fit(text: object, max_px: float, size: float = 11, bold: bool = False) -> str:
    """Text shortened with an ellipsis to fit max_px (the callers put the full text into a <title>)."""
    text = str(text)
    if text_width(text, size, bold) <= max_px:
        return text
    room, used, end = max_px - text_width(_ELLIPSIS, size, bold), 0.0, 0
    scale = size * (1.08 if bold else 1.0)
    for end, ch in enumerate(text):  # noqa: B007 - `end` is the cut after the loop
        used += _char_em(ch) * scale
        if used > room:
            break
    return text[: max(1, end)] + _ELLIPSIS


def _label(x: float, y: float, s: object, max_px: float, anchor: str = "end", **attrs: object) -> str:
    """A label shortened to max_px, with the full text as hover title when it had to be cut."""
    short = _fit(s, max_px)
    return _text(x, y, short, anchor, str(s) if short != str(s) else "", **{"class_": "label", **attrs})


def _color(index: object, colors: Sequence[str] | None = None) -> str:
    i = index if isinstance(index, int) else 0
    return str(colors[i]) if colors and 0 <= i < len(colors) else PALETTE[i % len(PALETTE)]


def _on(color: str) -> str:
    """Text colour readable on a fill colour."""
    try:
        r, g, b = (int(color.lstrip("#")[k : k + 2], 16) / 255 for k in (0, 2, 4))
    except ValueError:
        return _INK
    return _INK if 0.299 * r + 0.587 * g + 0.114 * b > 0.6 else "#fff"


def _svg(kind: str, width: float, height: float, title: str, desc: str, body: list[str]) -> str:
    w, h = round(width), math.ceil(height)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{kind}" role="img" '
        f'viewBox="0 0 {w} {h}" width="100%" style="max-width:{w}px" font-family="{FONT}" font-size="11" '
        f'fill="{_INK}">'
    )
    parts = [head, _tip(title or desc), f"<desc>{_esc(desc)}</desc>"]
    if title:
        short = _fit(title, w - 8, 12, bold=True)
        tip = title if short != title else ""
        parts.append(_text(4, 15, short, tip=tip, class_="chart-title", font_size=12, font_weight=600))
    # Every label and attribute above went through _esc: the chart is safe markup for the page templates.
    return Markup("\n".join([*parts, *body, "</svg>"]))


def _no_data(kind: str, title: str, width: int) -> str:
    top = _TITLE_H if title else 4
    box = _el("rect", class_="no-data", x=4, y=top, width=width - 8, height=40, rx=4, fill="none", stroke=_GRID)
    note = _text(width / 2, top + 24, "no data", "middle", fill=_MUTED)
    return _svg(kind, width, top + 44, title, "no data", [box, note])


def _legend(items: Sequence[tuple[str, str]], x0: float, y0: float, x1: float) -> tuple[list[str], float]:
    """Colour swatches with names flowing from (x0, y0) and wrapping at x1; returns the parts and the height."""
    parts: list[str] = []
    x, y = x0, y0
    for name, color in items:
        label = _fit(name, x1 - x0 - 20)
        w = 14 + _tw(label) + 16
        if x > x0 and x + w > x1:
            x, y = x0, y + 16
        swatch = _el("rect", x=x, y=y + 1.0, width=10, height=10, rx=2, fill=color)
        parts.append(f'<g class="legend-item">{swatch}{_text(x + 14, y + 10, label, tip=name)}</g>')
        x += w
    return parts, (y - y0 + 20 if items else 0)


def _lanes(items: Sequence[tuple[float, str]], left: float, right: float, avoid: float | None = None) -> Placed:
    """Place short labels above x positions in lanes so that none overlap (and none crosses x = avoid)."""
    lanes: list[list[tuple[float, float]]] = []
    out: Placed = []
    for x, label in sorted(items, key=lambda item: item[0]):
        text = _fit(label, right - left)
        w, h = _tw(text), _tw(text) / 2
        spans = {"middle": (x - h, x + h, x), "start": (x - 3, x + w - 3, x - 3), "end": (x - w + 3, x + 3, x + 3)}
        anchor = "start" if x - h < left else "end" if x + h > right else "middle"
        if avoid is not None and spans[anchor][0] - 4 < avoid < spans[anchor][1] + 4:
            anchor = "end" if x <= avoid else "start"
        a, b, x = spans[anchor]
        shift = left - a if a < left else right - b if b > right else 0.0  # never out of the chart
        a, b, x = a + shift, b + shift, x + shift
        lane = next((i for i, taken in enumerate(lanes) if all(b + 6 < s or a - 6 > e for s, e in taken)), len(lanes))
        lanes += [[]] if lane == len(lanes) else []
        lanes[lane].append((a, b))
        out.append((x, text, anchor, lane))
    return out


def _lane_count(placed: Placed) -> int:
    return max((lane + 1 for *_, lane in placed), default=0)


def _lane_texts(placed: Placed, y0: float) -> list[str]:
    return [_text(x, y0 + 11 + _LANE * lane, s, a, class_="ref-label", fill=_MUTED) for x, s, a, lane in placed]


def _ref_line(x: float, y0: float, y1: float, ref: ChartLine, unit: str = "") -> str:
    """A reference line over a white halo, so that it stays visible over bars."""
    tip, dash = f"{ref.label}: {compact(ref.value, unit)}", _DASH.get(ref.style, _DASH["dashed"])
    halo = _el("line", x1=x, x2=x, y1=y0, y2=y1, stroke="#fff", stroke_width=3, stroke_opacity=0.8)
    return halo + _el("line", tip, class_="ref", x1=x, x2=x, y1=y0, y2=y1, stroke=_INK, stroke_dasharray=dash)


def _x_axis(sx: Scale, ticks: list[float], top: float, y: float, unit: str, x0: float, x1: float) -> list[str]:
    """A horizontal axis at y with grid lines up to top, tick labels below and a long unit as a caption."""
    parts = [_el("line", class_="axis", x1=x0, x2=x1, y1=y, y2=y, stroke=_AXIS)]
    for t in ticks:
        parts.append(_el("line", x1=sx(t), x2=sx(t), y1=top, y2=y + 3.0, stroke=_GRID))
        parts.append(_text(sx(t), y + 14, _tick(t, unit), "middle", class_="tick", fill=_MUTED))
    if len(unit) > 2:
        parts.append(_text(x1, y + 28, _fit(unit, x1 - 4), "end", class_="unit", fill=_MUTED))
    return parts


def _y_axis(sy: Scale, ticks: list[float], x0: float, x1: float, unit: str) -> list[str]:
    parts = []
    for t in ticks:
        parts.append(_el("line", x1=x0 - 3, x2=x1, y1=sy(t), y2=sy(t), stroke=_GRID))
        parts.append(_text(x0 - 6, sy(t) + 4, _tick(t, unit), "end", class_="tick", fill=_MUTED))
    return parts


def _axis_height(unit: str) -> int:
    return 38 if len(unit) > 2 else 24


def _inside_ticks(left: float, right: float, width: float, ticks: Sequence[float], unit: str) -> tuple[float, float]:
    """The plot's ends moved in so that the centred first and last tick labels stay inside the chart."""
    if not ticks:
        return left, right
    first, last = _tw(_tick(ticks[0], unit)) / 2 + 2, _tw(_tick(ticks[-1], unit)) / 2 + 2
    return max(left, first), min(right, width - last)


def _arrow(x: float, y: float, right: bool, color: str, cls: str, tip: str, value: float) -> str:
    """A triangle pointing out of the plot at the domain edge, for a value outside the domain."""
    d = f"M{_c(x)},{_c(y)} l{-8 if right else 8},-5 v10 z"
    return _el("path", tip + " (outside the axis)", class_=f"{cls} clamped", data_value=repr(value), d=d, fill=color)


def _band(i: int, y: float, width: float, height: float) -> list[str]:
    return [_el("rect", x=0, y=y, width=width, height=height, fill=_BAND)] if i % 2 else []


def _hatch(x: float, y: float, w: float, h: float) -> str:
    """Diagonal hatching inside a rectangle (no <pattern>: ids would clash between inline charts)."""
    d = "".join(
        f"M{_c(x + min(k, w))},{_c(y + k - min(k, w))}L{_c(x + k - min(k, h))},{_c(y + min(k, h))}"
        for k in range(5, int(w + h), 5)
    )
    return _el("path", d=d, stroke="#b8bdc8", fill="none")


# ---------------------------------------------------------------------------------------------------- charts


def interval_strip(
    points: Sequence[ChartPoint],
    *,
    domain: tuple[float, float],
    references: Sequence[ChartLine] = (),
    unit: str = "",
    title: str = "",
    width: int = 560,
) -> str:
    """One row per ChartPoint on a shared horizontal axis: label at left, dot at the value, whisker low..high, value
    text at right; references as labelled vertical lines; values outside the domain are clamped with an arrow."""
    kind = "interval_strip"
    points = [p for p in points or () if isinstance(p, ChartPoint)]
    if not points:
        return _no_data(kind, title, width)
    d0, d1, ticks = _axis(domain)
    texts = [compact_interval(p.value, p.low, p.high, unit) for p in points]
    label_w = min(max(_tw(str(p.label)) for p in points) + 14, width * 0.3)
    value_w = max(_tw(t) for t in texts) + 20
    width = max(width, math.ceil(label_w + value_w + width * 0.4))  # wider rather than cut a value off
    left, right = _inside_ticks(label_w, width - value_w, width, ticks, unit)
    sx = _scale(d0, d1, left, right)
    refs = [(r, v) for r in references if (v := finite(r.value)) is not None and d0 <= v <= d1]
    y0 = _TITLE_H if title else 4
    placed = _lanes([(sx(v), r.label) for r, v in refs], 4, width - 4)
    lanes, row_h = _lane_count(placed), 22
    top = y0 + _LANE * lanes + (6 if lanes else 0)
    bottom = top + row_h * len(points)
    body = _lane_texts(placed, y0)
    for i, (p, text) in enumerate(zip(points, texts, strict=True)):
        body += _band(i, top + row_h * i, width, row_h)
        body.append(_label(left - 10, top + row_h * i + 15, p.label, label_w - 14))
        muted = _MUTED if text == "n/a" else None
        body.append(_text(right + 10, top + row_h * i + 15, text, class_="value", fill=muted))
    body += _x_axis(sx, ticks, top, bottom, unit, left, right)
    body += [_ref_line(sx(v), y0 + _LANE * lanes - 2, bottom, r, unit) for r, v in refs]
    for i, (p, text) in enumerate(zip(points, texts, strict=True)):
        yc, color, tip = top + row_h * i + row_h / 2, _color(p.series), f"{p.label}: {text}"
        v, lo, hi = finite(p.value), finite(p.low), finite(p.high)
        if v is None:
            continue
        if lo is not None and hi is not None and max(lo, hi) >= d0 and min(lo, hi) <= d1:
            lo, hi = min(lo, hi), max(lo, hi)
            caps = "".join(f" M{_c(sx(e))},{_c(yc - 4)} v8" for e in (lo, hi) if d0 <= e <= d1)
            d = f"M{_c(sx(max(lo, d0)))},{_c(yc)} H{_c(sx(min(hi, d1)))}{caps}"
            body.append(_el("path", tip, class_="whisker", d=d, stroke=color, stroke_width=1.6, fill="none"))
        if d0 <= v <= d1:
            dot = {"cx": sx(v), "cy": yc, "r": 4.5, "fill": color, "stroke": "#fff"}
            body.append(_el("circle", tip, class_="dot", data_value=repr(v), **dot))
        else:
            body.append(_arrow(sx(d1 if v > d1 else d0), yc, v > d1, color, "dot", tip, v))
    desc = "Estimates with 95% intervals: " + "; ".join(f"{p.label} {t}" for p, t in zip(points, texts, strict=True))
    return _svg(kind, width, bottom + _axis_height(unit), title, desc, body)


def grouped_bars(
    categories: Sequence[str],
    series: Mapping[str, Sequence[ChartPoint]],
    *,
    unit: str = "",
    domain: tuple[float, float] | None = None,
    title: str = "",
    width: int = 720,
    zero_line: bool = True,
    colors: Sequence[str] | None = None,
) -> str:
    """Horizontal grouped bars: one group per category, one bar per series (legend), bars start at 0 (negative
    values go left), whiskers for low/high. series[name][i] belongs to categories[i] (a ChartPoint or a number);
    `colors` overrides PALETTE per series. domain None = from the data incl. whiskers and 0."""
    kind = "grouped_bars"
    names = list(series or {})
    if not categories or not names:
        return _no_data(kind, title, width)
    cells = [[_item(series[n], i) for n in names] for i in range(len(categories))]
    grid = [[c if isinstance(c, ChartPoint) else ChartPoint("", finite(c)) for c in row] for row in cells]
    d0, d1, ticks = _axis(domain, [x for row in grid for p in row for x in (p.value, p.low, p.high)], zero=True)
    label_w = min(max(_tw(str(c)) for c in categories) + 14, width * 0.3)
    left, right = _inside_ticks(label_w + (44 if d0 < 0 else 6), width - 48, width, ticks, unit)
    sx = _scale(d0, d1, left, right)
    base = sx(_clamp(0.0, d0, d1))
    y0 = _TITLE_H if title else 4
    body, legend_h = _legend([(str(n), _color(k, colors)) for k, n in enumerate(names)], left, y0, width - 4)
    top, bar_h = y0 + legend_h + 2, (16 if len(names) == 1 else 13)
    group_h = bar_h * len(names) + 12
    bottom = top + group_h * len(categories)
    for ci, cat in enumerate(categories):
        body += _band(ci, top + group_h * ci, width, group_h)
        body.append(_label(label_w - 8, top + group_h * ci + group_h / 2 + 4, cat, label_w - 12))
    body += _x_axis(sx, ticks, top, bottom, unit, left, right)
    if zero_line and d0 <= 0 <= d1:
        body.append(_el("line", class_="zero", x1=sx(0), x2=sx(0), y1=top, y2=bottom, stroke=_INK))
    lines = []
    for ci, cat in enumerate(categories):
        for k, name in enumerate(names):
            p, color, y = grid[ci][k], _color(k, colors), top + group_h * ci + 6 + bar_h * k
            v, lo, hi, yc = finite(p.value), finite(p.low), finite(p.high), y + bar_h / 2
            text = compact_interval(v, lo, hi, unit)
            lines.append(f"{cat} {name} {text}")
            if v is None:
                body.append(_text(base + 4, yc + 4, "n/a", class_="na", fill=_MUTED))
                continue
            tip, end = f"{cat}, {name}: {text}", sx(_clamp(v, d0, d1))
            bar = {"x": min(base, end), "y": y + 1, "width": abs(end - base), "height": bar_h - 2.0, "fill": color}
            body.append(_el("rect", tip, class_="bar", data_value=repr(v), **bar))
            if not d0 <= v <= d1:
                body.append(_arrow(end + (3 if v > d1 else -3), yc, v > d1, _INK, "marker", tip, v))
            outer = end
            if lo is not None and hi is not None:
                a, b = sx(_clamp(min(lo, hi), d0, d1)), sx(_clamp(max(lo, hi), d0, d1))
                d = f"M{_c(a)},{_c(yc)} H{_c(b)} M{_c(a)},{_c(yc - 3.5)} v7 M{_c(b)},{_c(yc - 3.5)} v7"
                body.append(_el("path", tip, class_="whisker", d=d, stroke=_INK, stroke_width=1.2, fill="none"))
                outer = b if v >= 0 else a
            label = compact(v, unit)
            if v >= 0 and outer + 4 + _tw(label) <= width - 2:
                body.append(_text(outer + 4, yc + 4, label, class_="value"))
            elif v < 0 and outer - 4 - _tw(label) >= label_w:
                body.append(_text(outer - 4, yc + 4, label, "end", class_="value"))
            elif abs(end - base) >= _tw(label) + 8:
                x, anchor = (end - 4, "end") if v >= 0 else (end + 4, "start")
                body.append(_text(x, yc + 4, label, anchor, class_="value", fill=_on(color)))
    return _svg(kind, width, bottom + _axis_height(unit), title, "Grouped bars: " + "; ".join(lines), body)


def stacked_bars(
    rows: Sequence[tuple[str, Mapping[str, float]]],
    *,
    segments: Sequence[str],
    colors: Sequence[str] | None = None,
    title: str = "",
    width: int = 720,
    unit: str = "%",
) -> str:
    """100%-stacked horizontal bars (shares in percent per row, drawn as given), labels inside wide segments."""
    kind = "stacked_bars"
    if not rows or not segments:
        return _no_data(kind, title, width)
    data: list[tuple[str, list[float | None]]] = []
    for row in rows:
        values = _item(row, 1)
        values = values if isinstance(values, Mapping) else {}
        data.append((str(_item(row, 0)), [finite(values.get(s)) for s in segments]))
    total = max([100.0] + [sum(v for v in vals if v and v > 0) for _, vals in data])
    label_w = min(max(_tw(label) for label, _ in data) + 14, width * 0.3)
    left, right, row_h = label_w, width - 14, 28
    left, right = _inside_ticks(left, right, width, _axis((0, total))[2], unit)
    sx = _scale(0, total, left, right)
    y0 = _TITLE_H if title else 4
    body, legend_h = _legend([(str(s), _color(k, colors)) for k, s in enumerate(segments)], left, y0, width - 4)
    top = y0 + legend_h + 2
    bottom = top + row_h * len(data)
    body += [_label(left - 8, top + row_h * i + 18, label, label_w - 12) for i, (label, _) in enumerate(data)]
    body += _x_axis(sx, _axis((0, total))[2], top, bottom, unit, left, right)
    lines = []
    for i, (label, vals) in enumerate(data):
        y, x = top + row_h * i + 4, left
        if not any(v is not None and v > 0 for v in vals):
            body.append(_text(left + 4, y + 14, "n/a", class_="na", fill=_MUTED))
        for k, (seg, v) in enumerate(zip(segments, vals, strict=True)):
            if v is None or v <= 0:
                continue
            w, color, text = sx(v) - sx(0), _color(k, colors), compact(v, unit)
            rect, tip = {"x": x, "y": y, "width": w, "height": row_h - 8, "fill": color}, f"{label}, {seg}: {text}"
            body.append(_el("rect", tip, class_="bar", data_value=repr(v), data_segment=seg, stroke="#fff", **rect))
            if w >= _tw(text) + 8:
                body.append(_text(x + w / 2, y + 14, text, "middle", class_="value", fill=_on(color)))
            x += w
        lines.append(f"{label}: " + ", ".join(f"{s} {compact(v, unit)}" for s, v in zip(segments, vals, strict=True)))
    return _svg(kind, width, bottom + _axis_height(unit), title, "Stacked shares: " + "; ".join(lines), body)


def _diverging(t: float) -> str:
    """White at 0, blue towards -1, red towards +1 (the ends of ColorBrewer RdBu)."""
    end, a = ((33, 102, 172) if t < 0 else (178, 24, 43)), min(1.0, abs(t))
    r, g, b = (round(255 + (e - 255) * a) for e in end)
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    center: float = 0.0,
    unit: str = "",
    title: str = "",
    cell: int = 28,
) -> str:
    """Diverging colours centred on `center` (blue below, red above, white at the centre, symmetric range), the
    value printed in each cell (1 decimal), hatched grey for None, column labels at 45° and a colour legend."""
    kind = "heatmap"
    if not row_labels or not col_labels:
        return _no_data(kind, title, 320)
    grid = [[finite(_item(_item(values, i), j)) for j in range(len(col_labels))] for i in range(len(row_labels))]
    mid = finite(center) or 0.0
    span = max([abs(v - mid) for row in grid for v in row if v is not None], default=0.0)
    texts = [[fixed(v, 1) for v in row] for row in grid]
    cw, ch = max(int(cell), max(_tw(t) for row in texts for t in row) + 8), max(int(cell), 20)
    row_w = min(max(_tw(str(r)) for r in row_labels) + 14, 240)
    rise = max(_tw(_fit(c, 180)) for c in col_labels) * 0.71
    top = (_TITLE_H if title else 4) + rise + 10
    width = max(row_w + cw * len(col_labels) + max(0.0, rise - cw / 2) + 8, row_w + 240)
    body = [_label(row_w - 8, top + ch * i + ch / 2 + 4, r, row_w - 12) for i, r in enumerate(row_labels)]
    for j, col in enumerate(col_labels):
        x, y = row_w + cw * j + cw / 2, top - 6
        body.append(_label(x, y, col, 180, "start", class_="col-label", transform=f"rotate(-45 {_c(x)} {_c(y)})"))
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            x, y, t = row_w + cw * j, top + ch * i, 0.0 if v is None or not span else (v - mid) / span
            tip = f"{row_labels[i]} / {col_labels[j]}: {compact(v, unit)}"
            box = {"x": x, "y": y, "width": cw, "height": ch}
            if v is None:
                body.append(_el("rect", tip, class_="cell na", fill=_NA, stroke="#fff", **box))
                body.append(_hatch(x + 1, y + 1, cw - 2, ch - 2))
                continue
            body.append(_el("rect", tip, class_="cell", data_value=repr(v), fill=_diverging(t), stroke="#fff", **box))
            ink = "#fff" if abs(t) >= 0.55 else _INK
            body.append(_text(x + cw / 2, y + ch / 2 + 4, texts[i][j], "middle", fill=ink))
    ly = top + ch * len(row_labels) + 12
    for k in range(9):
        body.append(_el("rect", x=row_w + 18.0 * k, y=ly, width=18, height=10, fill=_diverging(k / 4 - 1)))
    for k, v in ((0, mid - span), (4, mid), (8, mid + span)):
        body.append(_text(row_w + 18 * k + 9, ly + 23, compact(v, unit), "middle", fill=_MUTED))
    if any(v is None for row in grid for v in row):
        na = _el("rect", x=row_w + 176.0, y=ly, width=18, height=10, fill=_NA)
        body += [na, _hatch(row_w + 176, ly, 18, 10), _text(row_w + 198, ly + 9, "n/a", fill=_MUTED)]
    desc = f"Heatmap, colours centred on {compact(mid)}: " + "; ".join(
        f"{r}: " + ", ".join(f"{c} {compact(v, unit)}" for c, v in zip(col_labels, grid[i], strict=True))
        for i, r in enumerate(row_labels)
    )
    return _svg(kind, width, ly + 30, title, desc, body)


def _ordinal(pct: float) -> str:
    if pct < 1 or pct > 99:
        return "<1st" if pct < 1 else ">99th"
    n = round(pct)
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def normal_curve(
    *,
    mean: float,
    sd: float,
    marker: float | None,
    marker_label: str,
    references: Sequence[ChartLine] = (),
    interval: tuple[float, float] | None = None,
    domain: tuple[float, float] | None = None,
    title: str = "",
    width: int = 560,
    unit: str = "",
    percentile: bool = True,
) -> str:
    """A normal density with the area below the marker shaded, the marker as a line labelled with its percentile
    (unless percentile=False), its interval as a band and reference lines. domain defaults to mean±4sd, widened
    to show every mark."""
    kind = "normal_curve"
    m, s = finite(mean), finite(sd)
    if m is None or s is None or s <= 0:
        return _no_data(kind, title, width)
    mk, lo, hi = finite(marker), finite(_item(interval, 0)), finite(_item(interval, 1))
    iv = (min(lo, hi), max(lo, hi)) if lo is not None and hi is not None else None
    refs = [(r, v) for r in references if (v := finite(r.value)) is not None]
    if domain is None:
        extra = [v for _, v in refs] + list(iv or ()) + ([mk] if mk is not None else [])
        pad = 0.03 * (max([m + 4 * s, *extra]) - min([m - 4 * s, *extra]))
        domain = (min([m - 4 * s, *(e - pad for e in extra)]), max([m + 4 * s, *(e + pad for e in extra)]))
    d0, d1, ticks = _axis(domain, count=8)
    left, right = _inside_ticks(16, width - 16, width, ticks, unit)
    sx = _scale(d0, d1, left, right)
    pct = 50 * (1 + math.erf((mk - m) / (s * math.sqrt(2)))) if mk is not None else None
    mark_text = f"{marker_label} {compact(mk, unit)}"
    mark_text += f" ({_ordinal(pct)} percentile)" if pct is not None and percentile else ""
    mark_shown = _fit(mark_text, width - 8, bold=True)
    mark_x = sx(_clamp(mk, d0, d1)) if mk is not None else left
    y0 = _TITLE_H if title else 4
    placed = _lanes([(sx(v), r.label) for r, v in refs if d0 <= v <= d1], 4, width - 4, avoid=mark_x)
    top = y0 + _LANE * (_lane_count(placed) + 1) + 8
    base = top + 130
    sy = _scale(0, 1, base, top)
    xs = [d0 + (d1 - d0) * k / 200 for k in range(201)]

    def at(x: float) -> str:
        z = min(abs(x - m) / s, 40.0)
        return f"L{_c(sx(x))},{_c(sy(math.exp(-0.5 * z * z)))}"

    half = text_width(mark_shown, bold=True) / 2
    mark_at = min(max(mark_x, 4 + half), width - 4 - half)  # centred over the marker, as far as the chart allows
    body = _lane_texts(placed, y0 + _LANE)
    tip = mark_text if mark_shown != mark_text else ""
    marker_text = {"class_": "marker-label", "font_weight": 600, "fill": PALETTE[0]}
    body.append(_text(mark_at, y0 + 11, mark_shown, "middle", tip=tip, **marker_text))
    body += _x_axis(sx, ticks, top, base, unit, left, right)
    curve = " ".join(at(x) for x in xs)
    area = f"M{_c(left)},{_c(base)} {curve} L{_c(right)},{_c(base)} Z"
    body.append(_el("path", class_="density", d=area, fill="#eef1f6"))
    if mk is not None and mk > d0:
        inner = [x for x in xs if x < mk] + [min(mk, d1)]
        d = f"M{_c(left)},{_c(base)} {' '.join(at(x) for x in inner)} L{_c(sx(inner[-1]))},{_c(base)} Z"
        body.append(_el("path", class_="area", d=d, fill=PALETTE[0], fill_opacity=0.3))
    if iv and iv[1] >= d0 and iv[0] <= d1:
        a, b, tip = sx(max(iv[0], d0)), sx(min(iv[1], d1)), f"95% interval {compact(iv[0])} to {compact(iv[1])}"
        band = {"x": a, "y": top, "width": b - a, "height": base - top, "fill": PALETTE[0], "fill_opacity": 0.15}
        body.append(_el("rect", tip, class_="interval", **band))
    body.append(_el("path", class_="curve", d="M" + curve[1:], fill="none", stroke=_MUTED, stroke_width=1.5))
    ref_top = y0 + _LANE * (_lane_count(placed) + 1) - 2
    body += [_ref_line(sx(v), ref_top, base, r, unit) for r, v in refs if d0 <= v <= d1]
    if mk is not None:
        tip = mark_text + (f", 95% interval {compact(iv[0])} to {compact(iv[1])}" if iv else "")
        if d0 <= mk <= d1:
            line = {"x1": sx(mk), "x2": sx(mk), "y1": y0 + 14.0, "y2": base, "stroke": PALETTE[0], "stroke_width": 2.5}
            body.append(_el("line", tip, class_="marker", data_value=repr(mk), **line))
        else:
            body.append(_arrow(sx(d1 if mk > d1 else d0), base - 8, mk > d1, PALETTE[0], "marker", tip, mk))
    note = f"norm: mean {compact(m)}, SD {compact(s)}"
    body.append(_text(left, base + _axis_height(unit) + 4, note, class_="note", fill=_MUTED))
    desc = f"Normal curve, {note}; {mark_text}" + "".join(f"; {r.label} {compact(v)}" for r, v in refs)
    return _svg(kind, width, base + _axis_height(unit) + 10, title, desc, body)


def histogram(
    values: Sequence[float],
    *,
    bins: int | Sequence[float] = 10,
    domain: tuple[float, float] | None = None,
    unit: str = "",
    title: str = "",
    width: int = 560,
    references: Sequence[ChartLine] = (),
) -> str:
    """Counts per bin (`bins` equal bins over the domain, or explicit bin edges); values outside the bins are left
    out and counted in a note; references as labelled vertical lines."""
    kind = "histogram"
    vals = [v for v in map(finite, values or ()) if v is not None]
    if not vals:
        return _no_data(kind, title, width)
    edges = sorted({e for e in map(finite, bins) if e is not None}) if isinstance(bins, Sequence) else []
    if len(edges) < 2:
        lo, hi = _fix_domain(min(vals), max(vals)) if domain is None else _axis(domain)[:2]
        n = max(1, min(bins if isinstance(bins, int) else 10, 200))
        edges = [lo + (hi - lo) * k / n for k in range(n + 1)]
    d0, d1, ticks = _axis(domain if domain is not None else (edges[0], edges[-1]), count=6)
    counts = [0] * (len(edges) - 1)
    for v in vals:
        if edges[0] <= v <= edges[-1]:
            counts[min(bisect_right(edges, v) - 1, len(counts) - 1)] += 1
    yticks = [t for t in nice_ticks(0, max(max(counts), 1), 4) if t == int(t)]
    left, right = _inside_ticks(14 + max(_tw(compact(t)) for t in yticks), width - 14, width, ticks, unit)
    sx = _scale(d0, d1, left, right)
    refs = [(r, v) for r in references if (v := finite(r.value)) is not None and d0 <= v <= d1]
    y0 = _TITLE_H if title else 4
    placed = _lanes([(sx(v), r.label) for r, v in refs], 4, width - 4)
    top = y0 + _LANE * _lane_count(placed) + 22
    base = top + 150
    sy = _scale(0, yticks[-1], base, top)
    body = [*_lane_texts(placed, y0), _text(4, top - 9, "count", class_="unit", fill=_MUTED)]
    body += _y_axis(sy, yticks, left, right, "") + _x_axis(sx, ticks, base, base, unit, left, right)
    for k, count in enumerate(counts):
        a, b = sx(_clamp(edges[k], d0, d1)), sx(_clamp(edges[k + 1], d0, d1))
        bar = {"x": a + 0.5, "y": sy(count), "width": max(b - a - 1, 0.0), "height": base - sy(count)}
        tip = f"{compact(edges[k])} to {compact(edges[k + 1], unit)}: {count}"
        body.append(_el("rect", tip, class_="bar", data_value=count, fill=PALETTE[0], **bar))
    body += [_ref_line(sx(v), y0 + _LANE * _lane_count(placed) - 2, base, r, unit) for r, v in refs]
    if outside := len(vals) - sum(counts):
        body.append(_text(right, top - 9, f"{outside} outside the axis, not shown", "end", class_="note", fill=_MUTED))
    desc = f"Histogram of {len(vals)} values: " + ", ".join(
        f"{compact(edges[k])} to {compact(edges[k + 1])}: {c}" for k, c in enumerate(counts)
    )
    return _svg(kind, width, base + _axis_height(unit), title, desc, body)


def _place_label(cx: float, cy: float, w: float, taken: list[Box], box: Box) -> tuple[float, float, str]:
    """The first of right/left/above/below a dot where a label of width w fits inside box without overlaps."""
    options = [(cx + 7, cy + 4, "start"), (cx - 7, cy + 4, "end"), (cx, cy - 8, "middle"), (cx, cy + 17, "middle")]
    boxes = []
    for x, y, anchor in options:
        x0 = x - (w if anchor == "end" else w / 2 if anchor == "middle" else 0)
        boxes.append((x0, y - 10, x0 + w, y + 2))
    inside = [box[0] <= r[0] and r[2] <= box[2] and box[1] <= r[1] and r[3] <= box[3] for r in boxes]
    free = [all(r[2] < t[0] or r[0] > t[2] or r[3] < t[1] or r[1] > t[3] for t in taken) for r in boxes]
    # Free and inside; else inside (overlapping another label); else beside the dot, moved into the box.
    chosen = next((k for k in range(4) if inside[k] and free[k]), next((k for k in range(4) if inside[k]), None))
    if chosen is None:
        x, y, _ = options[0]
        x = min(max(x, box[0]), box[2] - w)
        taken.append((x, y - 10, x + w, y + 2))
        return x, y, "start"
    taken.append(boxes[chosen])
    return options[chosen]


def scatter(
    points: Sequence[tuple[float, float, str]],
    *,
    x_label: str,
    y_label: str,
    title: str = "",
    width: int = 420,
    diagonal: bool = False,
    zero_lines: bool = True,
    series: Sequence[int] | None = None,
    legend: Sequence[str] | None = None,
) -> str:
    """x, y with a short label each (hover title; visible when there are at most 12 points), optional y=x
    diagonal (then x and y share one scale and the plot is square), axes with ticks. `series` gives each point's
    colour index into PALETTE and `legend` the names of those series."""
    kind = "scatter"
    pts: list[tuple[float, float, str, int]] = []
    for i, item in enumerate(points or ()):
        x, y, label, s = finite(_item(item, 0)), finite(_item(item, 1)), _item(item, 2), _item(series, i)
        if x is not None and y is not None:
            pts.append((x, y, "" if label is None else str(label), s if isinstance(s, int) else 0))
    if not pts:
        return _no_data(kind, title, width)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    dx0, dx1, xticks = _axis(None, xs + ys if diagonal else xs, pad=0.05)
    dy0, dy1, yticks = (dx0, dx1, xticks) if diagonal else _axis(None, ys, pad=0.05)
    left, right = _inside_ticks(30 + max(_tw(compact(t)) for t in yticks), width - 12, width, xticks, "")
    y0 = _TITLE_H if title else 4
    body, legend_h = _legend([(str(n), _color(k)) for k, n in enumerate(legend or ())], left, y0, right)
    top = y0 + legend_h + 8
    bottom = top + (right - left) * (1.0 if diagonal else 0.75)
    sx, sy = _scale(dx0, dx1, left, right), _scale(dy0, dy1, bottom, top)
    body += _y_axis(sy, yticks, left, right, "") + _x_axis(sx, xticks, top, bottom, "", left, right)
    body.append(_el("line", class_="axis", x1=left, x2=left, y1=top, y2=bottom, stroke=_AXIS))
    body.append(_label((left + right) / 2, bottom + 32, x_label, right - left, "middle", class_="axis-label"))
    ym, turn = (top + bottom) / 2, f"rotate(-90 12 {_c((top + bottom) / 2)})"
    body.append(_label(12, ym, y_label, bottom - top, "middle", class_="axis-label", transform=turn))
    if zero_lines and dx0 < 0 < dx1:
        body.append(_el("line", class_="zero", x1=sx(0), x2=sx(0), y1=top, y2=bottom, stroke=_AXIS))
    if zero_lines and dy0 < 0 < dy1:
        body.append(_el("line", class_="zero", x1=left, x2=right, y1=sy(0), y2=sy(0), stroke=_AXIS))
    if diagonal:
        line = {"x1": left, "y1": bottom, "x2": right, "y2": top, "stroke": _MUTED, "stroke_dasharray": "5 3"}
        body.append(_el("line", "y = x", class_="diagonal", **line))
    taken = [(sx(x) - 5, sy(y) - 5, sx(x) + 5, sy(y) + 5) for x, y, _, _ in pts]
    for x, y, label, s in pts:
        tip = f"{label}: {x_label} {compact(x)}, {y_label} {compact(y)}"
        dot = {"cx": sx(x), "cy": sy(y), "r": 4.5, "fill": _color(s), "fill_opacity": 0.85, "stroke": "#fff"}
        body.append(_el("circle", tip, class_="dot", data_value=f"{x!r},{y!r}", **dot))
    for x, y, label, _ in pts if len(pts) <= 12 else ():
        text = _fit(label, 120)
        lx, ly, anchor = _place_label(sx(x), sy(y), _tw(text), taken, (2, top - 8, width - 2, bottom + 2))
        body.append(_text(lx, ly, text, anchor, tip=label if text != label else "", class_="point-label"))
    desc = f"Scatter of {y_label} against {x_label}: " + "; ".join(
        f"{p[2]} ({compact(p[0])}, {compact(p[1])})" for p in pts
    )
    return _svg(kind, width, bottom + 42, title, desc, body)


def _x_at(left: float, right: float, n: int) -> Callable[[int], float]:
    """Where point i of `n` sits between `left` and `right` (10 in from each; a single point in the middle)."""
    return lambda i: (left + right) / 2 if n == 1 else left + 10 + (right - left - 20) * i / (n - 1)


def _path_d(
    vals: Sequence[float | None], sx: Callable[[int], float], sy: Callable[[float], float], d0: float, d1: float
) -> str:
    """A path through the values (clamped to d0..d1), the pen lifted over each missing one."""
    parts, pen = [], "M"
    for i, v in enumerate(vals):
        if v is not None:
            parts.append(f"{pen}{_c(sx(i))},{_c(sy(_clamp(v, d0, d1)))}")
        pen = "M" if v is None else "L"
    return " ".join(parts)


def line_chart(
    x_labels: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    unit: str = "",
    title: str = "",
    width: int = 720,
    domain: tuple[float, float] | None = None,
    colors: Sequence[str] | None = None,
) -> str:
    """Lines with dot markers per series (gaps at None), legend, x labels thinned when crowded."""
    kind = "line_chart"
    n, names = len(x_labels or ()), list(series or {})
    data = {name: [finite(_item(series[name], i)) for i in range(n)] for name in names}
    found = [v for vals in data.values() for v in vals if v is not None]
    if not n or not found:
        return _no_data(kind, title, width)
    d0, d1, yticks = _axis(domain, found, pad=0.05)
    left, right = 12 + max(_tw(_tick(t, unit)) for t in yticks), width - 14
    y0 = _TITLE_H if title else 4
    body, legend_h = _legend([(str(k), _color(i, colors)) for i, k in enumerate(names)], left, y0, width - 4)
    top = y0 + legend_h + (16 if len(unit) > 2 else 6)
    bottom = top + 200
    sy = _scale(d0, d1, bottom, top)
    widest = max(_tw(_fit(s, 110)) for s in x_labels)
    left, right = max(left, widest / 2 - 8), min(right, width - widest / 2 + 8)  # centred x labels stay inside
    sx = _x_at(left, right, n)
    step = math.ceil(n / max(1, int((right - left) / (widest + 12))))
    body += _y_axis(sy, yticks, left, right, unit)
    body.append(_el("line", class_="axis", x1=left, x2=right, y1=bottom, y2=bottom, stroke=_AXIS))
    for i in range(n):
        if n <= 60 or i % step == 0:
            body.append(_el("line", x1=sx(i), x2=sx(i), y1=bottom, y2=bottom + 4.0, stroke=_AXIS))
        if i % step == 0:
            body.append(_label(sx(i), bottom + 16, x_labels[i], 110, "middle", class_="tick", fill=_MUTED))
    if len(unit) > 2:
        body.append(_text(4, top - 8, _fit(unit, width - 8), "start", class_="unit", fill=_MUTED))
    for k, name in enumerate(names):
        color, vals = _color(k, colors), data[name]
        path = _path_d(vals, sx, sy, d0, d1)
        body.append(_el("path", class_="line", d=path, fill="none", stroke=color, stroke_width=2))
        for i, v in enumerate(vals):
            if v is not None:
                cls, tip = ("dot" if d0 <= v <= d1 else "dot clamped"), f"{name}, {x_labels[i]}: {compact(v, unit)}"
                dot = {"cx": sx(i), "cy": sy(_clamp(v, d0, d1)), "r": 3, "fill": color}
                body.append(_el("circle", tip, class_=cls, data_value=repr(v), **dot))
    desc = "Lines: " + "; ".join(
        f"{name}: " + ", ".join(f"{x} {compact(v, unit)}" for x, v in zip(x_labels, data[name], strict=True))
        for name in names
    )
    return _svg(kind, width, bottom + 26, title, desc, body)


def trajectories(
    x_labels: Sequence[str],
    groups: Sequence[tuple[str, Sequence[Sequence[float | None]], Sequence[float | None] | None]],
    *,
    references: Sequence[ChartLine] = (),
    domain: tuple[float, float] | None = None,
    unit: str = "",
    title: str = "",
    width: int = 720,
) -> str:
    """Many thin paths per group (one colour each, no legend entry per path) with each group's summary path bold and
    named in the legend, and labelled horizontal reference lines (e.g. thresholds)."""
    kind = "trajectories"
    n = len(x_labels or ())
    paths = [
        (k, [finite(_item(path, i)) for i in range(n)]) for k, (_, group, _) in enumerate(groups) for path in group
    ]
    summaries = [(k, [finite(_item(s, i)) for i in range(n)]) for k, (_, _, s) in enumerate(groups) if s is not None]
    found = [v for _, vals in paths + summaries for v in vals if v is not None]
    if not n or not found:
        return _no_data(kind, title, width)
    d0, d1, yticks = _axis(domain, found + [r.value for r in references], pad=0.05)
    ref_w = max((_tw(_fit(r.label, 90)) for r in references), default=0.0)
    left, right = 12 + max(_tw(_tick(t, unit)) for t in yticks), width - 14 - (ref_w + 6 if references else 0)
    y0 = _TITLE_H if title else 4
    legend = [
        (f"{name} ({len(group)})" if summary is None else f"{name}: mean of {len(group)}", _color(k))
        for k, (name, group, summary) in enumerate(groups)
    ]
    body, legend_h = _legend(legend, left, y0, width - 4)
    top = y0 + legend_h + (16 if len(unit) > 2 else 6)
    bottom = top + 220
    sy = _scale(d0, d1, bottom, top)
    sx = _x_at(left, right, n)
    body += _y_axis(sy, yticks, left, right, unit)
    body.append(_el("line", class_="axis", x1=left, x2=right, y1=bottom, y2=bottom, stroke=_AXIS))
    step = math.ceil(n / max(1, int((right - left) / (max(_tw(_fit(s, 60)) for s in x_labels) + 12))))
    for i in range(0, n, step):
        body.append(_label(sx(i), bottom + 16, x_labels[i], 60, "middle", class_="tick", fill=_MUTED))
    if len(unit) > 2:
        body.append(_text(4, top - 8, _fit(unit, width - 8), "start", class_="unit", fill=_MUTED))
    for ref in references:
        if d0 <= ref.value <= d1:
            y, dash = sy(ref.value), _DASH.get(ref.style, _DASH["dashed"])
            tip = f"{ref.label}: {compact(ref.value, unit)}"
            body.append(
                _el("line", tip, class_="ref", x1=left, x2=right, y1=y, y2=y, stroke=_AXIS, stroke_dasharray=dash)
            )
            body.append(_label(right + 4, y + 4, ref.label, 90, "start", class_="ref-label", fill=_MUTED))

    for k, vals in paths:
        ends = [(i, v) for i, v in enumerate(vals) if v is not None]
        if len(ends) == 1:  # a path of one point is a dot
            i, v = ends[0]
            body.append(_el("circle", class_="path-dot", cx=sx(i), cy=sy(_clamp(v, d0, d1)), r=1.5, fill=_color(k)))
            continue
        path = _path_d(vals, sx, sy, d0, d1)
        body.append(
            _el("path", class_="path", d=path, fill="none", stroke=_color(k), stroke_width=1, stroke_opacity=0.3)
        )
    for k, vals in summaries:
        name = groups[k][0]
        path = _path_d(vals, sx, sy, d0, d1)
        body.append(_el("path", class_="line", d=path, fill="none", stroke=_color(k), stroke_width=3))
        for i, v in enumerate(vals):
            if v is not None:
                tip = f"{name}, {x_labels[i]}: {compact(v, unit)}"
                body.append(
                    _el(
                        "circle",
                        tip,
                        class_="dot",
                        data_value=repr(v),
                        cx=sx(i),
                        cy=sy(_clamp(v, d0, d1)),
                        r=3,
                        fill=_color(k),
                    )
                )
    desc = f"Paths over {', '.join(map(str, x_labels))}: " + "; ".join(
        f"{name}: {len(group)} paths"
        + (
            ", mean " + ", ".join(compact(finite(v), unit) if finite(v) is not None else "n/a" for v in summary)
            if summary is not None
            else ""
        )
        for name, group, summary in groups
    )
    return _svg(kind, width, bottom + 26, title, desc, body)
