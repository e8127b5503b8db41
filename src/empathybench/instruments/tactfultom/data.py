"""TactfulToM's items: the pinned final_set (5 files, 100 conversations) fetched through the project's fetch code and
read into questions, each with the formats upstream asks it in (get_original_results.py `get_results` L207-216,
specs/tactfultom.md section 2). Item text is never committed.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from empathybench.data.fetch import FetchedFile, fetch_pinned
from empathybench.errors import DataError
from empathybench.instruments.tactfultom.parse import Format
from empathybench.instruments.tactfultom.score import CATEGORIES

SETS = ("0", "1", "2", "3", "4")  # 0 Pareto; 1-4 altruistic (childhood imagination, soothing, distress, harmony)
SET_NAMES = {
    "0": "Pareto",
    "1": "childhood imagination",
    "2": "emotional soothing",
    "3": "avoiding distress",
    "4": "social harmony",
}
# The formats each category is asked in, in upstream's order (freeform first). justificationQA is not sent (its
# evaluation is commented out upstream); lieabilityQAs gets a freeform request too, because upstream's test
# `cat == "lieability"` (L213) never matches its name (spec section 11, item 2).
FORMATS_OF: dict[str, tuple[Format, ...]] = {
    "comprehensionQA": ("freeform", "binary"),
    "fact_reasonQA": ("freeform", "mcq"),
    "fact_truthQA": ("freeform", "mcq"),
    "beliefQAs": ("freeform", "mcq"),
    "infoAccessibilityQA_list": ("list",),
    "infoAccessibilityQAs_binary": ("binary",),
    "answerabilityQA_list": ("list",),
    "answerabilityQAs_binary": ("binary",),
    "lieabilityQAs": ("freeform", "mcq"),
    "liedetectabilityQAs_list": ("list",),
    "liedetectabilityQAs_binary": ("binary",),
}
assert tuple(FORMATS_OF) == CATEGORIES


def final_set_key(set_id: str) -> str:
    return f"tactfultom/final_set/Tactful_conv_set_{set_id}.json"


def legacy_key(set_id: str) -> str:
    return f"tactfultom/legacy/Tactful_conv_set_{set_id}.json"


@dataclass(frozen=True)
class Question:
    """One question of one conversation, with what its prompts need."""

    set_id: str
    conversation: int  # index in its set file
    category: str
    index: int  # index in the conversation's list for the category
    context: str  # the conversation's full_context (the only context upstream prompted)
    fields: Mapping[str, Any]  # the question's own record (question, correct_answer, wrong_answer, information, ...)

    @property
    def question_id(self) -> str:
        """The dataset's q_id where it has one (unique), else the position."""
        q_id = self.fields.get("q_id")
        return str(q_id) if q_id else f"{self.set_id}-{self.conversation}-{self.category}-{self.index}"

    @property
    def formats(self) -> tuple[Format, ...]:
        return FORMATS_OF[self.category]

    @property
    def gold(self) -> Any:
        return self.fields["correct_answer"]


def parse_set(set_id: str, records: Any) -> list[Question]:
    """The questions of one set file, in file, category (upstream's order) and question order."""
    where = f"TactfulToM set {set_id}"
    if not isinstance(records, list):
        raise DataError(f"{where} is not a list of conversations")
    questions = []
    for number, record in enumerate(records):
        context = record.get("full_context") if isinstance(record, dict) else None
        if not isinstance(context, str):
            raise DataError(f"{where} conversation {number} has no full_context")
        for category in CATEGORIES:
            for index, fields in enumerate(record.get(category) or []):
                if not isinstance(fields, dict) or not isinstance(fields.get("question"), str):
                    raise DataError(f"{where} conversation {number} {category} {index} has no question")
                if "correct_answer" not in fields:
                    raise DataError(f"{where} conversation {number} {category} {index} has no correct_answer")
                questions.append(Question(set_id, number, category, index, context, fields))
    return questions


def dataset_label(questions: list[Question]) -> str:
    """The dataset a run asks, as its config records it, beside the published runs' (atlas.DATASET, the legacy one):
    "final: nii-cl/tactful-tom@0881b0d8 dataset/final_set/ (100 conversations, 4,154 questions)"."""
    from empathybench.data.registry import load_pins

    pinned = load_pins(__package__)[final_set_key(SETS[0])]
    conversations = len({(q.set_id, q.conversation) for q in questions})
    return (
        f"final: {pinned.repo}@{pinned.commit[:8]} dataset/final_set/ ({conversations} conversations, "
        f"{len(questions):,} questions)"
    )


def load_questions(*, allow_unverified: bool = False) -> tuple[list[Question], list[FetchedFile]]:
    """Every question of the 5 final_set files, and the files read."""
    import json

    questions: list[Question] = []
    files = []
    for set_id in SETS:
        fetched = fetch_pinned(__package__, final_set_key(set_id), allow_unverified=allow_unverified)
        files.append(fetched)
        try:
            records = json.loads(fetched.path.read_text("utf-8"))
        except ValueError as exc:
            raise DataError(f"TactfulToM set {set_id} is not JSON: {exc}") from None
        questions.extend(parse_set(set_id, records))
    return questions, files
