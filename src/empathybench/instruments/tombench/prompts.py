"""ToMBench's prompts, read from the pinned upstream prompts.py with `ast` (never executed, never copied here), and
one try of an item as run_api.py builds it: the options shuffled, the prompt filled, the shown letters mapped back.
"""

import ast
import random
from dataclasses import dataclass
from types import MappingProxyType

from empathybench.data.fetch import FetchedFile, fetch_pinned
from empathybench.errors import DataError
from empathybench.instruments.tombench.data import LETTERS, PROMPTS_KEY, Language, Presentation

# Which upstream variable run_api.py uses: the system prompt by language and chain of thought, the user prompt by
# language and number of options.
SYSTEM_NAMES: dict[tuple[Language, bool], str] = {
    ("zh", False): "SystemEvaluatePrompt_zh",
    ("zh", True): "SystemEvaluatePrompt_zh_cot",
    ("en", False): "SystemEvaluatePrompt_en",
    ("en", True): "SystemEvaluatePrompt_en_cot",
}
USER_NAMES: dict[tuple[Language, int], str] = {
    ("zh", 4): "UserEvaluatePrompt4Choices_zh",
    ("zh", 2): "UserEvaluatePrompt2Choices_zh",
    ("en", 4): "UserEvaluatePrompt4Choices_en",
    ("en", 2): "UserEvaluatePrompt2Choices_en",
}
_CHOICE_FIELDS = ("choice_a", "choice_b", "choice_c", "choice_d")


@dataclass(frozen=True)
class Prompts:
    templates: MappingProxyType[str, str]  # upstream variable name -> its string

    def system(self, language: Language, cot: bool) -> str:
        return self.templates[SYSTEM_NAMES[(language, cot)]]

    def user(self, language: Language, shown: Presentation) -> str:
        """run_api.py's `.format(story=, question=, choice_a=, ...)` of the template for this many options."""
        choices = dict(zip(_CHOICE_FIELDS, shown.options, strict=False))
        template = self.templates[USER_NAMES[(language, len(shown.options))]]
        return template.format(story=shown.story, question=shown.question, **choices)


def prompts_from_source(source: str) -> Prompts:
    """The module-level string assignments of prompts.py; every name run_api.py uses must be among them."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise DataError(f"ToMBench prompts.py does not parse: {exc.msg}") from None
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    missing = sorted({*SYSTEM_NAMES.values(), *USER_NAMES.values()} - set(found))
    if missing:
        raise DataError(f"ToMBench prompts.py lacks {', '.join(missing)}")
    return Prompts(MappingProxyType(found))


def load_prompts(*, allow_unverified: bool = False) -> tuple[Prompts, FetchedFile]:
    fetched = fetch_pinned(__package__, PROMPTS_KEY, allow_unverified=allow_unverified)
    return prompts_from_source(fetched.path.read_text("utf-8")), fetched


def try_rng(seed: int, question_id: str, try_index: int) -> random.Random:
    """The shuffle's generator of one try: from the run seed, the item and the try only, so an item's k-th try shows
    the same order in English and Chinese and with or without CoT (as run_api.py's one seeded stream does when
    its runs read the files in the same order)."""
    return random.Random(f"tombench|{seed}|{question_id}|{try_index}")


@dataclass(frozen=True)
class Shuffled:
    shown: Presentation  # the options in the order shown
    order: str  # the original letter of each shown position, e.g. "CADB"
    mapping: dict[str, str]  # shown letter -> original letter; "" for C and D of a 2-option item (run_api.py's map)


def shuffle_options(item: Presentation, rng: random.Random) -> Shuffled:
    """`random.shuffle(choices)`, then run_api.py's map: each shown letter -> the first original option whose text
    equals the shown text (two options with one text both map to the first)."""
    positions = list(range(len(item.options)))
    rng.shuffle(positions)  # the same permutation `shuffle` makes of the texts themselves
    texts = tuple(item.options[p] for p in positions)
    mapping = dict.fromkeys(LETTERS, "")
    for shown_letter, text in zip(LETTERS, texts, strict=False):
        mapping[shown_letter] = LETTERS[item.options.index(text)]
    shown = Presentation(item.story, item.question, texts)
    return Shuffled(shown, "".join(LETTERS[p] for p in positions), mapping)
