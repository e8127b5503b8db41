"""`--option NAME=VALUE` strings onto benchmark configs (benchmarks/base.apply_options)."""

from dataclasses import dataclass, replace

import pytest

from empathybench.errors import UserError
from empathybench.instruments.support import apply_options


@dataclass(frozen=True)
class Config:
    mode: str = "a"
    flag: bool = False
    count: int = 1
    ratio: float = 0.5
    note: str | None = "x"
    names: tuple[str, ...] = ()


KNOWN = {"mode": "", "flag": "", "count": "", "ratio": "", "note": "", "names": ""}


def test_values_are_read_as_their_field_types() -> None:
    config = apply_options(
        Config(),
        {"mode": "b", "flag": "yes", "count": "7", "ratio": "0.25", "note": "", "names": "p, q"},
        benchmark="demo",
        known=KNOWN,
        choices={"mode": ("a", "b")},
        custom={"names": lambda c, v: replace(c, names=tuple(s.strip() for s in v.split(",")))},
    )
    assert config == Config(mode="b", flag=True, count=7, ratio=0.25, note=None, names=("p", "q"))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "c"}, "demo.mode must be a or b, not 'c'"),
        ({"flag": "perhaps"}, "demo.flag must be true or false"),
        ({"count": "2.5"}, "demo.count must be an integer, not '2.5'"),
        ({"ratio": "half"}, "demo.ratio must be a number, not 'half'"),
        ({"colour": "red"}, "unknown demo option 'colour'; known: mode, flag"),
    ],
)
def test_mistakes_are_one_line_errors(options: dict[str, str], message: str) -> None:
    with pytest.raises(UserError) as raised:
        apply_options(Config(), options, benchmark="demo", known=KNOWN, choices={"mode": ("a", "b")})
    assert message in str(raised.value) and "\n" not in str(raised.value)
