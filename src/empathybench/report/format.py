"""How reports write numbers: report.html (tables and SVG charts), report.md and the terminal import their formatter
from here. The functions live in empathybench.formatting, below every layer, so that instruments write the numbers
in their own section texts, sample lines and judge-validation tables with the very same functions."""

from empathybench.formatting import compact, compact_interval, finite, fixed, interval, number, significant

__all__ = ["compact", "compact_interval", "finite", "fixed", "interval", "number", "significant"]
