"""TactfulToM's scoring (pure): upstream's verdict on one cleaned answer (evaluate_non_freeform.py `_main_result`
L94-134), accuracy per question category pooled over entries (main_table.py @A L141-170: micro pooling per model
over its set files), and ours: the overall accuracy over every scored entry (micro) and the mean of the 11
categories (macro), labelled ours (specs/tactfultom.md section 7).
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The categories in upstream's order (evaluate_non_freeform.py L8): the names of its table's columns.
CATEGORIES = (
    "comprehensionQA",
    "fact_reasonQA",
    "fact_truthQA",
    "beliefQAs",
    "infoAccessibilityQA_list",
    "infoAccessibilityQAs_binary",
    "answerabilityQA_list",
    "answerabilityQAs_binary",
    "lieabilityQAs",
    "liedetectabilityQAs_list",
    "liedetectabilityQAs_binary",
)
# Short names for charts and tables (the paper's figure names the first four and lie detectability so).
SHORT_NAMES = {
    "comprehensionQA": "Comprehension",
    "fact_reasonQA": "Fact (reason)",
    "fact_truthQA": "Fact (truth)",
    "beliefQAs": "Belief",
    "infoAccessibilityQA_list": "Info access (list)",
    "infoAccessibilityQAs_binary": "Info access (yes/no)",
    "answerabilityQA_list": "Answerability (list)",
    "answerabilityQAs_binary": "Answerability (yes/no)",
    "lieabilityQAs": "Lie ability",
    "liedetectabilityQAs_list": "Lie detectability (list)",
    "liedetectabilityQAs_binary": "Lie detectability (yes/no)",
}
# The paper's chart (figures/main_result.pdf, spec section 9) draws 7 categories: these 6, whose bars match
# main_table's figures for them (Info Accessibility and Lie Ability over the legacy set less 2 and 4 set-2 items), and
# Justification, which upstream's evaluation leaves out (evaluate_non_freeform.py L183-184) and a run does not ask.
CHART_CATEGORIES = (
    "comprehensionQA",
    "beliefQAs",
    "infoAccessibilityQA_list",
    "answerabilityQA_list",
    "lieabilityQAs",
    "liedetectabilityQAs_list",
)
CHART_NOT_ASKED = "justificationQA"
SKIPPED_RESULTS = (None, "ERROR")  # filter_entry L11: not scored at all (only a freeform answer can be either)


def is_correct(question_format: str, cleaned: Any, gold: Any) -> bool:
    """Upstream's verdict: binary by lower-case equality, mcq when the mapped index is 0 (the gold option), list when
    the sets of names are equal (an empty gold list is never right)."""
    if question_format == "binary":
        return str(cleaned).lower() == str(gold).lower()
    if question_format == "mcq":
        try:
            return int(cleaned) == 0
        except (TypeError, ValueError):
            return False
    if question_format == "list":
        chosen, wanted = set(cleaned or ()), set(gold or ())
        return bool(wanted) and bool(chosen) and chosen == wanted
    raise ValueError(f"a {question_format} answer has no verdict")


def is_scored(question_format: str, cleaned: Any, context_type: str = "full_context") -> bool:
    """Whether upstream scores an entry: not freeform, not an API failure, the full context."""
    return question_format != "freeform" and context_type == "full_context" and cleaned not in SKIPPED_RESULTS


@dataclass(frozen=True)
class Verdict:
    category: str
    correct: bool


def category_counts(verdicts: Iterable[Verdict]) -> dict[str, tuple[int, int]]:
    """Per category (upstream's order; a category without entries is left out): (right, scored)."""
    right: dict[str, int] = {}
    scored: dict[str, int] = {}
    for verdict in verdicts:
        scored[verdict.category] = scored.get(verdict.category, 0) + 1
        right[verdict.category] = right.get(verdict.category, 0) + int(verdict.correct)
    return {category: (right[category], scored[category]) for category in CATEGORIES if category in scored}


def table_row(counts: Mapping[str, tuple[int, int]]) -> dict[str, Any]:
    """Upstream's row (percent per category; a category with no entry is 0, as main_table.py prints it) and ours:
    overall_micro (every scored entry) and overall_macro (the mean of the categories that have entries)."""
    per_category = {c: (100 * counts[c][0] / counts[c][1] if c in counts else 0.0) for c in CATEGORIES}
    right = sum(r for r, _ in counts.values())
    scored = sum(n for _, n in counts.values())
    present = [per_category[c] for c in CATEGORIES if c in counts]
    return {
        "overall_micro": 100 * right / scored if scored else None,
        "overall_macro": sum(present) / len(present) if present else None,
        **per_category,
        "n": {c: counts[c][1] if c in counts else 0 for c in CATEGORIES},
    }


def rounded(row: Mapping[str, Any], digits: int = 2) -> dict[str, Any]:
    """A row's figures rounded as upstream prints them ("{:.2f}")."""
    return {k: (round(v, digits) if isinstance(v, float) else v) for k, v in row.items()}


def pooled(parts: Sequence[Mapping[str, tuple[int, int]]]) -> dict[str, tuple[int, int]]:
    """Counts summed over several files (main_table.py concatenates the entries of a model's set files)."""
    total: dict[str, list[int]] = {}
    for counts in parts:
        for category, (right, scored) in counts.items():
            entry = total.setdefault(category, [0, 0])
            entry[0] += right
            entry[1] += scored
    return {c: (total[c][0], total[c][1]) for c in CATEGORIES if c in total}
