"""ToMBench's taxonomy: the 6 ATOMS ability categories with their 31 abilities, and its 8 theory-of-mind tasks.

Facts from the upstream README (zhchen18/ToMBench at the pinned commit, sections "Theory-of-Mind Tasks" and
"Theory-of-Mind Abilities"; tests/test_tombench_data.py checks every name against the README through the fetch
code). The items' ABILITY field names the category and ability in its own spelling ("Belief: Location false
beliefs", some with two abilities, some categories lower-case); `abilities_of` reads it onto these names.
"""

import re

# category -> its abilities, in the README's order and spelling
ATOMS: dict[str, tuple[str, ...]] = {
    "Emotion": (
        "Typical Emotional Reactions",
        "Atypical Emotional Reactions",
        "Discrepant Emotions",
        "Mixed Emotions",
        "Hidden Emotions",
        "Moral Emotions",
        "Emotion Regulation",
    ),
    "Desire": (
        "Discrepant Desires",
        "Multiple Desires",
        "Desires Influence on Emotions and Actions",
        "Desire-Action Contradiction",
    ),
    "Intention": (
        "Completion of Failed Actions",
        "Discrepant Intentions",
        "Prediction of Actions",
        "Intentions Explanations",
    ),
    "Knowledge": (
        "Knowledge-Pretend Play Links",
        "Percepts-Knowledge Links",
        "Information-Knowledge Links",
        "Knowledge-Attention Links",
    ),
    "Belief": (
        "Content False Beliefs",
        "Location False Beliefs",
        "Identity False Beliefs",
        "Second-Order Beliefs",
        "Beliefs-Based Action/Emotions",
        "Sequence False Beliefs",
    ),
    "Non-Literal Communication": (
        "Irony/Sarcasm",
        "Egocentric Lies",
        "White Lies",
        "Involuntary Lies",
        "Humor",
        "Faux Pas",
    ),
}
CATEGORY_OF: dict[str, str] = {ability: category for category, abilities in ATOMS.items() for ability in abilities}

# The README's 8 tasks: the data file that holds each -> the README's name of it (two differ). The other 12 files
# hold items written for one ability each (their names are the abilities').
TASKS: dict[str, str] = {
    "Unexpected Outcome Test": "Unexpected Outcome Test",
    "Scalar Implicature Test": "Scalar Implicature Task",
    "Persuasion Story Task": "Persuasion Story Task",
    "False Belief Task": "False Belief Task",
    "Ambiguous Story Task": "Ambiguous Story Task",
    "Hinting Task Test": "Hinting Test",
    "Strange Story Task": "Strange Story Task",
    "Faux-pas Recognition Test": "Faux-pas Recognition Test",
}

# The data's two Desire labels for the README's one "Desires Influence on Emotions and Actions" (Persuasion Story
# Task: 76 items "...on actions", 24 "...on emotions (beliefs)").
_ALIASES = {
    ("desire", "desires influence on actions"): "Desires Influence on Emotions and Actions",
    ("desire", "desires influence on emotions (beliefs)"): "Desires Influence on Emotions and Actions",
}
# "Belief: Content false beliefs Belief: Second-order beliefs": a label may name several "<category>: <ability>"
_CATEGORY_PREFIX = re.compile("(" + "|".join(re.escape(c) for c in ATOMS) + r")\s*:", re.IGNORECASE)


def _folded(text: str) -> str:
    return " ".join(text.replace("-", " ").lower().split())


_BY_FOLDED = {(_folded(category), _folded(ability)): ability for ability, category in CATEGORY_OF.items()}


def abilities_of(label: str) -> tuple[str, ...]:
    """The README abilities an item's ABILITY label names (one, or two for the second-order false-belief items);
    a label naming none is a ValueError (the pinned data has none)."""
    starts = list(_CATEGORY_PREFIX.finditer(label))
    found: list[str] = []
    for number, start in enumerate(starts):
        end = starts[number + 1].start() if number + 1 < len(starts) else len(label)
        category, ability = _folded(start.group(1)), _folded(label[start.end() : end])
        name = _BY_FOLDED.get((category, ability)) or _ALIASES.get((category, ability))
        if name is None:
            raise ValueError(f"ability label {label!r} names no ATOMS ability")
        found.append(name)
    if not found:
        raise ValueError(f"ability label {label!r} names no ATOMS category")
    return tuple(dict.fromkeys(found))
