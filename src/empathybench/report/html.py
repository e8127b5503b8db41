"""A self-contained report.html per run (no network, no scripts from elsewhere)."""

import html
import json
from pathlib import Path
from typing import Any

from empathybench.engine.store import read_samples

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2rem auto;padding:0 1rem;
color:#1d2433;line-height:1.45}
h1{margin-bottom:.2rem}.muted{color:#5b6478}table{border-collapse:collapse;width:100%;margin:.8rem 0}
th,td{border-bottom:1px solid #e3e6ee;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f6fb}td.num{text-align:right;font-variant-numeric:tabular-nums}
.card{border:1px solid #e3e6ee;border-radius:8px;padding:1rem 1.2rem;margin:1rem 0}
.score{font-size:2rem;font-weight:600}.bad{color:#b42318}.ok{color:#067647}
details{margin:.6rem 0}summary{cursor:pointer;font-weight:600}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f8fb;padding:.4rem;border-radius:4px;margin:0;
font-size:.85rem;max-height:16rem;overflow:auto}
@media print{details{display:block}details>*{display:block}}
"""


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, (dict, list)):
        return html.escape(json.dumps(value, ensure_ascii=False)[:400])
    return html.escape("" if value is None else str(value))


def _benchmark_section(name: str, result: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    if result.get("status") == "skipped":
        return (
            f'<div class="card"><h2>{html.escape(name)}</h2>'
            f'<p class="bad">skipped: {html.escape(str(result.get("error")))}</p></div>'
        )
    headline = result.get("score")
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{_fmt(v)}</td></tr>"
        for k, v in result.items()
        if not isinstance(v, (dict, list)) or k in ("warnings",)
    )
    sample_rows = []
    for record in samples:
        reply = record["calls"][-1]["reply"] if record.get("calls") else ""
        sample_rows.append(
            "<tr>"
            f"<td>{html.escape(str(record.get('item_id')))}</td>"
            f"<td>{_fmt(record.get('parsed'))}</td>"
            f'<td class="num">{_fmt(record.get("score"))}</td>'
            f"<td>{_fmt(record.get('parse_error') or record.get('error'))}</td>"
            f"<td><pre>{html.escape(reply)}</pre></td>"
            "</tr>"
        )
    return (
        f'<div class="card"><h2>{html.escape(name)}</h2>'
        f'<div class="score">{_fmt(headline)}</div>'
        f"<table>{rows}</table>"
        f"<details><summary>{len(samples)} items with raw replies</summary>"
        "<table><tr><th>item</th><th>parsed</th><th>score</th><th>parse error</th><th>last reply</th></tr>"
        + "".join(sample_rows)
        + "</table></details></div>"
    )


def render_html_report(summary: dict[str, Any], run_info: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    sections = []
    for name, result in summary.get("benchmarks", {}).items():
        bench_samples = [s for s in samples if s.get("benchmark") == name]
        sections.append(_benchmark_section(name, result, bench_samples))
    usage = summary.get("usage", {})
    model = run_info.get("model", {})
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>EmpathyBench: {html.escape(str(summary.get('model')))}</title><style>{_STYLE}</style></head><body>"
        f"<h1>EmpathyBench report</h1><p class='muted'>model <b>{html.escape(str(summary.get('model')))}</b>"
        f" · preset {html.escape(str(summary.get('preset')))} · EmpathyBench "
        f"{html.escape(str(run_info.get('empathybench_version')))} · {html.escape(str(run_info.get('created')))}</p>"
        + (
            "<p class='muted'>The embedded model (SmolLM2-135M) shows the pipeline working end to end; "
            "it is far too small to measure emotional intelligence.</p>"
            if str(summary.get("model")) == "local"
            else ""
        )
        + "".join(sections)
        + "<div class='card'><h2>Run</h2><table>"
        + "".join(f"<tr><th>{html.escape(k)}</th><td>{_fmt(v)}</td></tr>" for k, v in usage.items())
        + f"<tr><th>model</th><td>{_fmt(model)}</td></tr>"
        + "</table></div></body></html>"
    )


def write_html_report(directory: Path, summary: dict[str, Any], run_info: dict[str, Any]) -> Path:
    path = directory / "report.html"
    path.write_text(render_html_report(summary, run_info, read_samples(directory)), encoding="utf-8")
    return path
