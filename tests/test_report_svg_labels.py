"""Chart labels stay inside their chart: every chart kind drawn with long, CJK and mixed labels, and every <text>'s
estimated extent (svg.text_width at its font size, turned by its rotate()) lies inside the viewBox."""

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

from empathybench.report import svg
from empathybench.report.svg import ChartLine, ChartPoint

NS = "{http://www.w3.org/2000/svg}"
LONG = "a remarkably long label that names an emotion, its intensity and the situation it came from"
CJK = "情绪理解与情绪应用的长标签测试文本"
MIXED = "EmoBench 情绪理解 (emotional understanding) 长标签"
LABELS = [LONG, CJK, MIXED, "ok", "中"]


def _charts(label: str) -> dict[str, Callable[[], str]]:
    points = [ChartPoint(f"{label} {i}", 40.0 + 7 * i, 30.0 + 7 * i, 50.0 + 7 * i, i) for i in range(3)]
    refs = [ChartLine(45.0, label), ChartLine(52.0, f"{label} b", "dotted"), ChartLine(20.0, label, "solid")]
    return {
        "interval_strip": lambda: svg.interval_strip(
            points, domain=(0, 100), references=refs, unit=label[:14], title=label, width=360
        ),
        "interval_strip_wide": lambda: svg.interval_strip(points, domain=(0, 100), references=refs, title=label),
        "grouped_bars": lambda: svg.grouped_bars(
            [label, f"{label} 2"], {label: points[:2], f"{label} b": points[1:]}, unit=label[:10], title=label
        ),
        "grouped_bars_negative": lambda: svg.grouped_bars(
            [label], {label: [ChartPoint(label, -40.0, -55.0, -20.0)]}, title=label, width=360
        ),
        "stacked_bars": lambda: svg.stacked_bars(
            [(label, {label: 30.0, "b": 70.0}), (f"{label} 2", {label: 55.5, "b": 44.5})],
            segments=[label, "b"],
            title=label,
        ),
        "heatmap": lambda: svg.heatmap(
            [label, "r2"], [label, "c2", CJK], [[1.0, -2.0, None], [0.5, 3.25, 1.0]], title=label
        ),
        "normal_curve": lambda: svg.normal_curve(
            mean=100, sd=15, marker=131.0, marker_label=label, interval=(120, 140), references=refs, title=label
        ),
        "normal_curve_low": lambda: svg.normal_curve(
            mean=100, sd=15, marker=52.0, marker_label=label, references=refs, title=label, width=360
        ),
        "histogram": lambda: svg.histogram([1, 2, 2, 3, 9], bins=4, references=refs, unit=label[:12], title=label),
        "scatter": lambda: svg.scatter(
            [(1, 2, label), (2, 2.1, label), (3, 1, f"{label} c"), (3.05, 1.02, label)],
            x_label=label,
            y_label=label,
            title=label,
            legend=[label, "b"],
            series=[0, 1, 0, 1],
        ),
        "line_chart": lambda: svg.line_chart(
            [label, f"{label} 2", "c", label], {label: [1, 2, None, 4], "b": [2, 1, 3, 3]}, unit=label[:16], title=label
        ),
        "line_chart_crowded": lambda: svg.line_chart(
            [f"{label} {i}" for i in range(30)], {label: [float(i % 7) for i in range(30)]}, title=label
        ),
        "trajectories": lambda: svg.trajectories(
            [label, "2", "3"],
            [(label, [[40, 60, 100], [40, 5, None]], [40, 32.5, 52.5]), ("b", [[40]], None)],
            references=refs,
            unit=label[:16],
            title=label,
        ),
        "no_data": lambda: svg.interval_strip([], domain=(0, 1), title=label),
    }


def _extent(text: ET.Element, root: ET.Element) -> list[tuple[float, float]]:
    """The corners of a <text>'s estimated box (baseline from its anchor, ascent above it), after its rotate()."""
    content = (text.text or "") + "".join(child.tail or "" for child in text)  # without the hover <title>
    size = float(text.get("font-size") or root.get("font-size") or 11)
    bold = (text.get("font-weight") or "") in ("600", "700", "bold")
    width = svg.text_width(content, size, bold)
    x, y = float(text.get("x", 0)), float(text.get("y", 0))
    anchor = text.get("text-anchor", "start")
    x0 = x - (width if anchor == "end" else width / 2 if anchor == "middle" else 0)
    corners = [(x0, y - 0.8 * size), (x0 + width, y - 0.8 * size), (x0, y + 0.2 * size), (x0 + width, y + 0.2 * size)]
    turned = re.fullmatch(r"rotate\(([-\d.]+) ([-\d.]+) ([-\d.]+)\)", text.get("transform") or "")
    if turned:
        angle, cx, cy = (float(v) for v in turned.groups())
        c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        corners = [(cx + (px - cx) * c - (py - cy) * s, cy + (px - cx) * s + (py - cy) * c) for px, py in corners]
    return corners


@pytest.mark.parametrize("label", LABELS)
def test_every_text_of_every_chart_stays_inside_the_view_box(label: str) -> None:
    for kind, draw in _charts(label).items():
        root = ET.fromstring(draw())
        _, _, width, height = (float(v) for v in root.get("viewBox", "").split())
        texts = list(root.iter(f"{NS}text"))
        assert texts, kind
        for text in texts:
            for px, py in _extent(text, root):
                assert -0.5 <= px <= width + 0.5 and -0.5 <= py <= height + 0.5, (kind, text.text, px, py, width)


def test_cjk_and_bold_text_is_estimated_wider() -> None:
    assert svg.text_width("情绪", 11) >= 2 * 11 * 0.95  # a full-width character is about one em
    assert svg.text_width("ab", 11) < svg.text_width("情绪", 11)
    assert svg.text_width("ab", 12, bold=True) > svg.text_width("ab", 12) > svg.text_width("ab", 11)


def test_a_label_too_long_for_any_room_is_shortened_with_its_full_text_as_hover_title() -> None:
    chart = svg.interval_strip([ChartPoint(LONG * 3, 1.0)], domain=(0, 2), width=360)
    root = ET.fromstring(chart)
    label = next(t for t in root.iter(f"{NS}text") if t.get("class") == "label")
    assert (label.text or "").endswith("…") and label.find(f"{NS}title").text == LONG * 3
