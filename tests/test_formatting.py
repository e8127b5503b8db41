"""One number formatter: empathybench.formatting writes every figure; no other
module formats a number with a precision of its own."""

import ast
from pathlib import Path

import pytest

import empathybench
from empathybench.formatting import compact, compact_interval, fixed, interval, number, significant

PACKAGE = Path(empathybench.__file__).resolve().parent
# svg._c writes SVG coordinates (positions, not figures a reader sees).
COORDINATES = {("report/svg.py", "_c")}


def _precision_formats(path: Path) -> list[str]:
    """f-strings in `path` that format a value with a precision (`:.2f`, `:+.1f`, `:.2%`), with their function."""
    found: list[str] = []
    where = str(path.relative_to(PACKAGE))

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            spec = "".join(v.value for v in node.format_spec.values if isinstance(v, ast.Constant))
            if "." in spec and (where, function) not in COORDINATES:
                found.append(f"{where}:{node.lineno} in {function}: {{:{spec}}}")
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(path.read_text("utf-8")), "<module>")
    return found


def test_no_module_but_the_formatter_formats_numbers_itself() -> None:
    offenders = sorted(
        {
            hit
            for path in PACKAGE.rglob("*.py")
            if path.name != "formatting.py" and "__pycache__" not in path.parts
            for hit in _precision_formats(path)
        }
    )
    assert not offenders, "format these through empathybench.formatting:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [(1.23456, 2, "1.23"), (2, 2, "2"), (None, 2, "—"), (True, 2, "yes"), (-0.5, 1, "-0.5"), ("n=3", 2, "n=3")],
)
def test_number(value: object, digits: int, expected: str) -> None:
    assert number(value, digits) == expected


def test_signed_significant_interval_and_fixed() -> None:
    assert (
        number(1.5, signed=True) == "+1.50" and number(-1.5, signed=True) == "-1.50" and number(3, signed=True) == "+3"
    )
    assert significant(0.000123) == "0.00012" and significant(0.23456) == "0.23"
    assert interval([1, 2.345]) == "[1.00, 2.35]" and interval([None, 1]) == "" and interval(None, missing="—") == "—"
    assert fixed(2.25, 1) in ("2.2", "2.3") and fixed(None) == "" and fixed(float("nan")) == ""


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (1234.5, "", "1234"),
        (45.25, "%", "45.2%"),
        (3.14159, "", "3.14"),
        (0.0123, "", "0.0123"),
        (0, "", "0"),
        (-0.0001, "", "-0.0001"),
        (12, "ms", "12 ms"),
        (None, "", "n/a"),
        (float("inf"), "", "n/a"),
    ],
)
def test_compact_chart_numbers(value: object, unit: str, expected: str) -> None:
    assert compact(value, unit) == expected


def test_compact_interval_orders_its_ends() -> None:
    assert compact_interval(5, 7.5, 2.25) == "5 [2.25, 7.5]" and compact_interval(5, None, 1) == "5"
