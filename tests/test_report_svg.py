"""SVG chart primitives: well-formed XML, one mark per value, positions monotonic in value, escaping, bad data."""

import itertools
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

from empathybench.report.svg import (
    PALETTE,
    ChartLine,
    ChartPoint,
    grouped_bars,
    heatmap,
    histogram,
    interval_strip,
    line_chart,
    nice_ticks,
    normal_curve,
    scatter,
    stacked_bars,
    trajectories,
)

NS = "{http://www.w3.org/2000/svg}"
NASTY = "a <b> & \"c\" 'd'"


def parse(svg: str, kind: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    assert root.get("data-chart") == kind
    assert root.get("class") == "chart" and root.get("role") == "img" and root.get("width") == "100%"
    w, h = (float(v) for v in root.get("viewBox", "").split()[2:])
    assert w > 0 and h > 0 and root.get("style") == f"max-width:{round(w)}px"
    assert root.get("font-family") == "system-ui, sans-serif"
    assert root[0].tag == f"{NS}title" and root[0].text and root[1].tag == f"{NS}desc"
    assert "<script" not in svg and "http" not in svg.replace("http://www.w3.org/2000/svg", "")
    return root


def marks(root: ET.Element, cls: str) -> list[ET.Element]:
    return [el for el in root.iter() if cls in (el.get("class") or "").split()]


def texts(root: ET.Element) -> list[str]:
    return [el.text or "" for el in root.iter(f"{NS}text")]


def tip(el: ET.Element) -> str:
    title = el.find(f"{NS}title")
    assert title is not None, f"{el.tag} has no hover title"
    return title.text or ""


def rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


# ---------------------------------------------------------------------------------------------------- nice_ticks


@pytest.mark.parametrize(
    ("low", "high", "count"),
    [(0, 100, 5), (0, 1, 5), (-13.2, 7.9, 5), (40, 160, 8), (0.001, 0.0042, 4), (99.5, 100.4, 5), (-1e6, 3e6, 6)],
)
def test_nice_ticks_cover_the_range_in_1_2_5_steps(low: float, high: float, count: int) -> None:
    ticks = nice_ticks(low, high, count)
    assert ticks[0] <= low and ticks[-1] >= high
    steps = [b - a for a, b in itertools.pairwise(ticks)]
    step = steps[0]
    assert all(math.isclose(s, step, rel_tol=1e-6) for s in steps)
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 5))
    assert 2 <= len(ticks) <= count + 3
    assert all(math.isclose(t / step, round(t / step), abs_tol=1e-6) for t in ticks)  # multiples of the step


def test_nice_ticks_on_degenerate_input() -> None:
    assert nice_ticks(0, 100) == [0, 20, 40, 60, 80, 100]
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]  # rounded, no 0.6000000000000001
    assert nice_ticks(100, 0) == nice_ticks(0, 100)
    for low, high in [(5, 5), (0, 0), (math.nan, 3), (math.inf, -math.inf)]:
        ticks = nice_ticks(low, high)
        assert len(ticks) >= 2 and all(math.isfinite(t) for t in ticks)
    assert nice_ticks(5, 5)[0] <= 5 <= nice_ticks(5, 5)[-1]


# ---------------------------------------------------------------------------------------------------- every chart


def one_of_each() -> dict[str, Callable[[], str]]:
    points = [ChartPoint("a", 10.0, 5.0, 15.0), ChartPoint("b", None), ChartPoint("c", 50.0, 45.0, 60.0, series=1)]
    return {
        "interval_strip": lambda: interval_strip(points, domain=(0, 100), references=[ChartLine(30, "ref")]),
        "grouped_bars": lambda: grouped_bars(["x", "y"], {"m": [ChartPoint("", 1.0), ChartPoint("", -2.0)]}),
        "stacked_bars": lambda: stacked_bars([("r", {"Good": 50.0, "Bad": 50.0})], segments=["Good", "Bad"]),
        "heatmap": lambda: heatmap(["r"], ["c1", "c2"], [[1.0, -1.0]]),
        "normal_curve": lambda: normal_curve(mean=100, sd=15, marker=110, marker_label="m"),
        "histogram": lambda: histogram([1.0, 2.0, 2.5, 3.0]),
        "scatter": lambda: scatter([(1.0, 2.0, "p")], x_label="x", y_label="y"),
        "line_chart": lambda: line_chart(["a", "b"], {"s": [1.0, 2.0]}),
        "trajectories": lambda: trajectories(["1", "2"], [("run", [[40.0, 50.0]], [40.0, 50.0])]),
    }


@pytest.mark.parametrize("kind", list(one_of_each()))
def test_every_chart_is_a_well_formed_svg_with_hover_titles(kind: str) -> None:
    root = parse(one_of_each()[kind](), kind)
    data_marks = [el for cls in ("bar", "dot", "cell", "marker", "whisker") for el in marks(root, cls)]
    assert data_marks, "no data marks"
    assert all(tip(el) for el in data_marks)


def test_no_data_charts_are_still_valid() -> None:
    cases = {
        "interval_strip": interval_strip([], domain=(0, 1), title="T"),
        "grouped_bars": grouped_bars([], {}),
        "stacked_bars": stacked_bars([], segments=["a"]),
        "heatmap": heatmap([], [], []),
        "normal_curve": normal_curve(mean=100, sd=0, marker=1, marker_label="m"),
        "histogram": histogram([math.nan, None]),  # type: ignore[list-item]
        "scatter": scatter([(math.nan, 1.0, "x")], x_label="x", y_label="y"),
        "line_chart": line_chart(["a", "b"], {"s": [None, math.nan]}),
        "trajectories": trajectories(["a", "b"], [("s", [[None, math.nan]], None)]),
    }
    for kind, svg in cases.items():
        root = parse(svg, kind)
        assert "no data" in texts(root), kind
        assert root[1].text == "no data"
    assert "T" in texts(parse(cases["interval_strip"], "interval_strip"))


def test_labels_are_escaped_everywhere() -> None:
    p = [ChartPoint(NASTY, 1.0, 0.5, 1.5)]
    svgs = {
        "interval_strip": interval_strip(p, domain=(0, 2), references=[ChartLine(1, NASTY)], title=NASTY, unit=NASTY),
        "grouped_bars": grouped_bars([NASTY], {NASTY: p}, title=NASTY),
        "stacked_bars": stacked_bars([(NASTY, {NASTY: 100.0})], segments=[NASTY]),
        "heatmap": heatmap([NASTY], [NASTY], [[1.0]], title=NASTY),
        "normal_curve": normal_curve(mean=0, sd=1, marker=0, marker_label=NASTY, references=[ChartLine(1, NASTY)]),
        "histogram": histogram([1.0], references=[ChartLine(1, NASTY)], title=NASTY),
        "scatter": scatter([(1.0, 1.0, NASTY)], x_label=NASTY, y_label=NASTY),
        "line_chart": line_chart([NASTY], {NASTY: [1.0]}),
        "trajectories": trajectories([NASTY], [(NASTY, [[1.0]], [1.0])], references=[ChartLine(1, NASTY)]),
    }
    for kind, svg in svgs.items():
        root = parse(svg, kind)
        found = [t for el in root.iter() for t in (el.text or "", *el.attrib.values())]
        assert any(NASTY in t for t in found), kind
        assert "<b>" not in svg


# ---------------------------------------------------------------------------------------------------- interval_strip


def test_interval_strip_dots_whiskers_and_references() -> None:
    points = [
        ChartPoint("low", 20.0, 15.0, 25.0),
        ChartPoint("none", None),
        ChartPoint("high", 80.0, 70.0, 90.0, series=2),
    ]
    refs = [ChartLine(50, "people 50"), ChartLine(52, "gate 52", "dotted"), ChartLine(500, "off the axis")]
    root = parse(interval_strip(points, domain=(0, 100), references=refs, unit="%"), "interval_strip")
    dots = marks(root, "dot")
    assert len(dots) == 2 and len(marks(root, "whisker")) == 2
    xs = [float(d.get("cx", "")) for d in dots]
    assert xs[0] < xs[1]
    assert dots[1].get("fill") == PALETTE[2]
    assert tip(dots[0]) == "low: 20% [15, 25]"
    assert "n/a" in texts(root) and "20% [15, 25]" in texts(root)
    ref_lines = marks(root, "ref")
    assert len(ref_lines) == 2  # the one outside the domain is left out
    assert float(ref_lines[0].get("x1", "")) < float(ref_lines[1].get("x1", ""))
    assert ref_lines[1].get("stroke-dasharray") == "1.5 2.5"
    assert {"people 50", "gate 52"} <= set(texts(root))
    labels = [el for el in root.iter(f"{NS}text") if el.text in ("people 50", "gate 52")]
    assert labels[0].get("y") != labels[1].get("y")  # close references are stacked, not overlapping


def test_interval_strip_clamps_values_outside_the_domain() -> None:
    points = [ChartPoint("inside", 50.0), ChartPoint("over", 150.0, 120.0, 180.0), ChartPoint("under", -5.0)]
    root = parse(interval_strip(points, domain=(0, 100)), "interval_strip")
    clamped = marks(root, "clamped")
    assert len(clamped) == 2 and all("dot" in (el.get("class") or "") for el in clamped)
    assert "outside the axis" in tip(clamped[0])
    assert len(marks(root, "whisker")) == 0  # the interval lies wholly outside
    assert "150 [120, 180]" in texts(root)


def test_interval_strip_robust_inputs() -> None:
    root = parse(interval_strip([ChartPoint("x", math.nan), ChartPoint("y", None)], domain=(5, 5)), "interval_strip")
    assert not marks(root, "dot") and texts(root).count("n/a") == 2
    root = parse(interval_strip([ChartPoint("one", 3.0)], domain=(3, 3)), "interval_strip")  # zero-width domain padded
    assert len(marks(root, "dot")) == 1
    root = parse(interval_strip([ChartPoint("bad", 1.0, math.inf, 2.0)], domain=(math.nan, 4)), "interval_strip")
    assert len(marks(root, "dot")) == 1 and not marks(root, "whisker")


# ---------------------------------------------------------------------------------------------------- grouped_bars


def test_grouped_bars_lengths_follow_values_and_negatives_go_left() -> None:
    cats = ["PA", "NA", "Anger"]
    series = {
        "model": [ChartPoint("", -5.0, -7.0, -3.0), ChartPoint("", 12.0, 10.0, 14.0), ChartPoint("", None)],
        "people": [ChartPoint("", -10.0), ChartPoint("", 6.0), ChartPoint("", 3.0)],
    }
    root = parse(grouped_bars(cats, series, title="Mood shift"), "grouped_bars")
    bars = marks(root, "bar")
    assert len(bars) == 5 and len(marks(root, "whisker")) == 2
    values = [float(b.get("data-value", "")) for b in bars]
    assert values == [-5.0, -10.0, 12.0, 6.0, 3.0]
    zero = marks(root, "zero")[0]
    x0 = float(zero.get("x1", ""))
    for b, v in zip(bars, values, strict=True):
        x, w = float(b.get("x", "")), float(b.get("width", ""))
        if v < 0:
            assert math.isclose(x + w, x0, abs_tol=0.2)
        else:
            assert math.isclose(x, x0, abs_tol=0.2)
    widths = {v: float(b.get("width", "")) for b, v in zip(bars, values, strict=True)}
    assert widths[3.0] < widths[-5.0] < widths[6.0] < widths[-10.0] < widths[12.0]
    assert math.isclose(widths[12.0] / widths[6.0], 2, rel_tol=0.02)
    assert "n/a" in texts(root)
    assert [el.find(f"{NS}text").text for el in marks(root, "legend-item")] == ["model", "people"]  # type: ignore[union-attr]
    assert "PA, model: -5 [-7, -3]" in [tip(b) for b in bars]


def test_grouped_bars_domain_and_clamping() -> None:
    series = {"s": [ChartPoint("", 50.0), ChartPoint("", 150.0), ChartPoint("", math.nan)]}
    root = parse(grouped_bars(["a", "b", "c"], series, domain=(0, 100), colors=["#123456"]), "grouped_bars")
    bars = marks(root, "bar")
    assert len(bars) == 2 and bars[0].get("fill") == "#123456"
    assert len(marks(root, "clamped")) == 1
    assert float(bars[1].get("width", "")) == pytest.approx(2 * float(bars[0].get("width", "")), abs=0.2)
    root = parse(grouped_bars(["only"], {"s": [ChartPoint("", 0.0)]}), "grouped_bars")  # all zero: padded domain
    assert len(marks(root, "bar")) == 1
    root = parse(grouped_bars(["short series"], {"s": []}), "grouped_bars")
    assert not marks(root, "bar") and "n/a" in texts(root)


# ---------------------------------------------------------------------------------------------------- stacked_bars


def test_stacked_bars_segments_are_proportional_and_labelled_when_wide() -> None:
    rows = [("model", {"Good": 60.0, "Okay": 37.0, "Bad": 3.0}), ("people", {"Good": 48.0, "Okay": 36.0}), ("none", {})]
    root = parse(stacked_bars(rows, segments=["Good", "Okay", "Bad"], title="Ratings"), "stacked_bars")
    bars = marks(root, "bar")
    assert len(bars) == 5
    first = [b for b in bars if "model" in tip(b)]
    w = [float(b.get("width", "")) for b in first]
    assert w[0] / w[1] == pytest.approx(60 / 37, rel=0.01)
    assert float(first[1].get("x", "")) == pytest.approx(float(first[0].get("x", "")) + w[0], abs=0.2)
    assert [b.get("fill") for b in first] == list(PALETTE[:3])
    assert [b.get("data-segment") for b in first] == ["Good", "Okay", "Bad"]
    assert "60%" in texts(root) and "3%" not in texts(root)  # too narrow for its label (hover title only)
    assert tip(first[2]) == "model, Bad: 3%"
    assert "n/a" in texts(root)


# ---------------------------------------------------------------------------------------------------- heatmap


def test_heatmap_colours_are_diverging_around_the_centre() -> None:
    values = [[10.0, 0.0, -10.0], [None, math.nan, 5.0]]
    root = parse(heatmap(["r1", "r2"], ["up", "centre", "down"], values, unit=" pp"), "heatmap")
    cells = marks(root, "cell")
    assert len(cells) == 6 and len(marks(root, "na")) == 2
    fills = {c.get("data-value"): c.get("fill") for c in cells if c.get("data-value")}
    r, _, b = rgb(fills["10.0"])
    assert r > 150 and r > b + 60  # red above the centre
    r, _, b = rgb(fills["-10.0"])
    assert b > 150 and b > r + 60  # blue below
    assert fills["0.0"] == "#ffffff"
    r5 = rgb(fills["5.0"])
    assert r5[0] > r5[2] and r5[1] > rgb(fills["10.0"])[1]  # half as far: lighter red
    assert {"10.0", "0.0", "-10.0", "5.0"} <= set(texts(root))
    assert "r1 / up: 10 pp" in [tip(c) for c in cells]
    assert any("rotate(-45" in (el.get("transform") or "") for el in marks(root, "col-label"))


def test_heatmap_centre_and_long_labels() -> None:
    long = "a very long column label that needs to be shortened somewhere"
    root = parse(heatmap(["r"], [long, "b"], [[100.0, 115.0]], center=100), "heatmap")
    fills = [c.get("fill") for c in marks(root, "cell")]
    assert fills[0] == "#ffffff" and rgb(fills[1] or "")[0] > rgb(fills[1] or "")[2]
    col = marks(root, "col-label")[0]
    assert col.text != long and tip(col) == long
    root = parse(heatmap(["r"], ["c"], [[None]]), "heatmap")  # all missing
    assert len(marks(root, "cell")) == 1 and marks(root, "na")
    root = parse(heatmap(["r", "ragged"], ["c1", "c2"], [[1.0]]), "heatmap")  # short rows are missing values
    assert len(marks(root, "cell")) == 4 and len(marks(root, "na")) == 3


# ---------------------------------------------------------------------------------------------------- normal_curve


def test_normal_curve_marker_percentile_interval_and_references() -> None:
    svg = normal_curve(
        mean=100,
        sd=15,
        marker=115,
        marker_label="model EQ",
        interval=(108, 122),
        references=[ChartLine(81.5, "uniform")],
    )
    root = parse(svg, "normal_curve")
    marker = marks(root, "marker")[0]
    assert "model EQ 115 (84th percentile)" in texts(root)
    assert "84th percentile" in tip(marker) and "108 to 122" in tip(marker)
    band, ref = marks(root, "interval")[0], marks(root, "ref")[0]
    x, w, mx = float(band.get("x", "")), float(band.get("width", "")), float(marker.get("x1", ""))
    assert x < mx < x + w and float(ref.get("x1", "")) < x
    assert marks(root, "area") and "uniform" in texts(root)
    at_mean = parse(normal_curve(mean=0, sd=1, marker=0, marker_label="m"), "normal_curve")
    assert "m 0 (50th percentile)" in texts(at_mean)


def test_normal_curve_edge_cases() -> None:
    root = parse(normal_curve(mean=100, sd=15, marker=None, marker_label="model"), "normal_curve")
    assert not marks(root, "marker") and "model n/a" in texts(root)
    root = parse(normal_curve(mean=100, sd=15, marker=300, marker_label="m", domain=(40, 160)), "normal_curve")
    assert marks(root, "clamped") and "m 300 (>99th percentile)" in texts(root)
    root = parse(normal_curve(mean=100, sd=15, marker=20, marker_label="m"), "normal_curve")  # domain widened
    assert marks(root, "marker") and "m 20 (<1st percentile)" in texts(root)
    root = parse(normal_curve(mean=0, sd=1, marker=1, marker_label="m", interval=(math.nan, 2)), "normal_curve")
    assert not marks(root, "interval")


# ---------------------------------------------------------------------------------------------------- histogram


def test_histogram_counts_and_bar_heights() -> None:
    values = [0.5] * 1 + [1.5] * 3 + [2.5] * 6 + [9.0, math.nan]
    root = parse(histogram(values, bins=[0, 1, 2, 3], references=[ChartLine(1.5, "median")]), "histogram")
    bars = marks(root, "bar")
    assert [b.get("data-value") for b in bars] == ["1", "3", "6"]
    heights = [float(b.get("height", "")) for b in bars]
    assert heights[0] < heights[1] < heights[2] and heights[2] / heights[1] == pytest.approx(2, rel=0.01)
    xs = [float(b.get("x", "")) for b in bars]
    assert xs == sorted(xs)
    assert "1 outside the axis, not shown" in texts(root) and len(marks(root, "ref")) == 1
    root = parse(histogram([1.0, 2.0, 3.0, 4.0], bins=4), "histogram")
    assert [b.get("data-value") for b in marks(root, "bar")] == ["1", "1", "1", "1"]  # the maximum is in the last bin
    root = parse(histogram([7.0, 7.0], bins=5), "histogram")  # zero-width range
    assert sum(int(b.get("data-value", "")) for b in marks(root, "bar")) == 2
    root = parse(histogram([1.0, 5.0], bins=2, domain=(0, 4)), "histogram")
    assert [b.get("data-value") for b in marks(root, "bar")] == ["1", "0"]


# ---------------------------------------------------------------------------------------------------- scatter


def test_scatter_positions_labels_and_diagonal() -> None:
    pts = [(1.0, 1.0, "a"), (2.0, 4.0, "b"), (3.0, 9.0, "c"), (math.nan, 1.0, "bad")]
    root = parse(scatter(pts, x_label="people", y_label="model", diagonal=True, series=[0, 1, 2, 3]), "scatter")
    dots = marks(root, "dot")
    assert len(dots) == 3 and [d.get("fill") for d in dots] == list(PALETTE[:3])
    cx = [float(d.get("cx", "")) for d in dots]
    cy = [float(d.get("cy", "")) for d in dots]
    assert cx == sorted(cx) and cy == sorted(cy, reverse=True)  # SVG y grows downwards
    diag = marks(root, "diagonal")[0]
    w = float(diag.get("x2", "")) - float(diag.get("x1", ""))
    h = float(diag.get("y1", "")) - float(diag.get("y2", ""))
    assert w == pytest.approx(h)  # same scale on both axes
    assert {"a", "b", "c"} <= set(texts(root)) and "people" in texts(root)
    assert tip(dots[1]) == "b: people 2, model 4"


def test_scatter_hides_labels_when_crowded_and_draws_zero_lines() -> None:
    many = [(float(i), float(i % 5) - 2, f"p{i}") for i in range(-5, 15)]
    root = parse(scatter(many, x_label="x", y_label="y", legend=["models"]), "scatter")
    assert len(marks(root, "dot")) == 20 and not marks(root, "point-label")
    assert len(marks(root, "zero")) == 2 and not marks(root, "diagonal")
    assert len(marks(root, "legend-item")) == 1
    root = parse(scatter([(2.0, 2.0, "one")], x_label="x", y_label="y", zero_lines=False), "scatter")
    assert len(marks(root, "dot")) == 1 and not marks(root, "zero")


# ---------------------------------------------------------------------------------------------------- line_chart


def test_line_chart_gaps_dots_and_thinned_labels() -> None:
    labels = [f"emotion_{i:02d}" for i in range(40)]
    a = [float(i) if i != 7 else None for i in range(40)]
    root = parse(line_chart(labels, {"a": a, "b": [math.nan] + [50.0] * 39}, unit="%"), "line_chart")
    lines = marks(root, "line")
    assert len(lines) == 2 and (lines[0].get("d") or "").count("M") == 2  # a gap at the None
    dots = marks(root, "dot")
    assert len(dots) == 39 + 39
    ys = [float(d.get("cy", "")) for d in dots[:39]]
    assert ys == sorted(ys, reverse=True)  # rising values go up
    shown = [t for t in texts(root) if t.startswith("emotion_")]
    assert 2 <= len(shown) < 20 and shown[0] == "emotion_00"


def test_line_chart_single_point_and_domain_clamping() -> None:
    root = parse(line_chart(["only"], {"s": [3.0]}), "line_chart")
    assert len(marks(root, "dot")) == 1
    root = parse(line_chart(["a", "b"], {"s": [50.0, 500.0]}, domain=(0, 100)), "line_chart")
    assert len(marks(root, "clamped")) == 1
