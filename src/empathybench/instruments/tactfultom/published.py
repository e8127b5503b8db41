"""What a TactfulToM run can be set beside: upstream's published table (`cases/main_table.txt` at commit a5e8635 and
the paper's chart), and the one line that says how a run differs from it (the shared instruments/comparability.py).

A run is never comparable with the published figures, and the label says why: the published outputs were made on the
legacy dataset (84 conversations, commit a5e8635; sets 2 and 4 were rebuilt since), a run asks the final set (100,
commit 0881b0d); the headline (ours) averages the 11 categories upstream scores, the paper's chart draws 7; the
justification questions are not asked (upstream's evaluation leaves them out, the chart has them). Beside those,
what every call sent against upstream's sampling (get_original_results.py L23-38: temperature 0.2 and max_tokens
8192, the API's defaults for model names with "o1" or "o3"), replies cut at the budget, and how many of the final
set's questions were scored.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.instruments.comparability import coverage, failed_item, label, role_names, settings_differences
from empathybench.instruments.tactfultom.parse import prestep_for

PUBLISHED_SAMPLING = {"temperature": 0.2, "max_tokens": 8192}
DEFAULTS_FOR = ("o1", "o3")  # model names upstream sent the API's defaults (o1-2024-12-17, o3-mini-2025-01-31)
N_LEGACY_CONVERSATIONS = 84
N_FINAL_CONVERSATIONS = 100
ALWAYS = (
    f"the published outputs were made on the legacy set ({N_LEGACY_CONVERSATIONS} conversations; sets 2 and 4 rebuilt "
    f"since), a run asks the final set ({N_FINAL_CONVERSATIONS})",
    "the headline averages 11 categories, the paper's chart 7 (overall_macro_chart: the 6 of them asked)",
    "justification questions are not asked (upstream's evaluation leaves them out; the paper's chart has them)",
)
CLEANUPS = {
    "boxed": "the first \\boxed{...} kept, as upstream for Llama and DeepSeek-V3",
    "think": "the text after the last </think> kept, as upstream for QwQ and DeepSeek-R1",
}


def published_call_body(role: str, model: str, sampling: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """comparability.PublishedBody: what get_original_results.py sent the model under test."""
    if role != "model":
        return None
    name = model.rsplit("/", 1)[-1]
    return {} if any(part in name for part in DEFAULTS_FOR) else PUBLISHED_SAMPLING


def comparability(records: Sequence[Mapping[str, Any]], *, n_items: int, n_final_set: int) -> tuple[bool, str, Any]:
    """(comparable, the label, the coverage) of a run's records (failed questions too)."""
    model = role_names(records).get("model", "")
    covered = coverage(n_final_set, "questions of the final set", [failed_item(r) for r in records], n_in_run=n_items)
    differences = [*ALWAYS, *settings_differences(records, published_call_body)]
    given = f"model {model or 'unknown'}"
    cleanup = CLEANUPS.get(prestep_for(model.rsplit("/", 1)[-1]).name)
    if cleanup:
        given += f"; replies cleaned by name: {cleanup}"
    comparable, line = label(given, differences, covered, "the published table")
    return comparable, line, covered
