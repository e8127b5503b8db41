"""The SECEU prompts: the paper's direct prompt and the four Prompts.docx variants, with their settings.

specs/seceu.md §3. The four variants are rebuilt at run time from the fetched Prompts.docx, which shows each one
filled in with item 1: the item-1 story and options are replaced by placeholders, so that rendering any template
with item 1 gives back the docx text exactly.
"""

from dataclasses import dataclass

from empathybench.errors import DataError

DIRECT = "direct"
ZERO_SHOT = "zero_shot"
ZERO_SHOT_STEP = "zero_shot_step_by_step"
TWO_SHOT_COT = "two_shot_cot"
TWO_SHOT_COT_STEP = "two_shot_cot_step_by_step"
VARIANTS = (DIRECT, ZERO_SHOT, ZERO_SHOT_STEP, TWO_SHOT_COT, TWO_SHOT_COT_STEP)

# The section headings of Prompts.docx, one paragraph each.
DOCX_HEADINGS = {
    "Zero-Shot": ZERO_SHOT,
    "Zero-Shot + Step-by-step": ZERO_SHOT_STEP,
    "Two shot COT": TWO_SHOT_COT,
    "Two shot COT + Step-by-step": TWO_SHOT_COT_STEP,
}

# The direct prompt as printed in the paper's Methods (example for item 34); not in any upstream file.
DIRECT_TEMPLATE = (
    "Story: {story} Options: (1) {o1}; (2) {o2}; (3) {o3}; (4) {o4}. "
    "Assign a score to each option based on the story, sum up to 10"
)
_ITEM_SLOT = "{story} Options: (1) {o1}; (2) {o2}; (3) {o3}; (4) {o4}"


@dataclass(frozen=True)
class VariantSettings:
    label: str
    temperature: float
    top_p: float
    max_tokens: int
    source: str


# §3: direct prompt T 0.1, top_p 1, 512 tokens (Table S1); prompt engineering T 0, top_p 0.9, 2048 tokens (Table S2).
_PROMPT_ENGINEERING = {"temperature": 0.0, "top_p": 0.9, "max_tokens": 2048}
SETTINGS: dict[str, VariantSettings] = {
    DIRECT: VariantSettings("Direct prompt", 0.1, 1.0, 512, "paper, Methods (Table S1)"),
    ZERO_SHOT: VariantSettings("Zero-Shot", **_PROMPT_ENGINEERING, source="Prompts.docx (Table S2)"),
    ZERO_SHOT_STEP: VariantSettings(
        "Zero-Shot + Step-by-step", **_PROMPT_ENGINEERING, source="Prompts.docx (Table S2)"
    ),
    TWO_SHOT_COT: VariantSettings("Two shot COT", **_PROMPT_ENGINEERING, source="Prompts.docx (Table S2)"),
    TWO_SHOT_COT_STEP: VariantSettings(
        "Two shot COT + Step-by-step", **_PROMPT_ENGINEERING, source="Prompts.docx (Table S2)"
    ),
}


def render(template: str, story: str, options: tuple[str, ...]) -> str:
    """Fill a template by plain replacement: the two-shot demonstrations hold literal JSON braces."""
    text = template.replace("{story}", story)
    for index, option in enumerate(options, start=1):
        text = text.replace(f"{{o{index}}}", option)
    return text


def item_slot(story: str, options: tuple[str, ...]) -> str:
    return render(_ITEM_SLOT, story, options)


def templates_from_prompts_docx(
    paragraphs: list[str], example_story: str, example_options: tuple[str, ...]
) -> dict[str, str]:
    """The four Prompts.docx variants as templates; `example_*` is item 1, the item the docx is filled with.

    Each paragraph is one line (§3: "each paragraph is one line"); trailing empty paragraphs are dropped and
    trailing spaces inside a paragraph are kept, as published.
    """
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for paragraph in paragraphs:
        heading = DOCX_HEADINGS.get(paragraph.strip())
        if heading is not None:
            current = heading
            sections[current] = []
        elif current is not None:
            sections[current].append(paragraph)
    missing = [name for name in DOCX_HEADINGS.values() if name not in sections]
    if missing:
        raise DataError(f"Prompts.docx has no section for {', '.join(missing)}")
    example = item_slot(example_story, example_options)
    templates: dict[str, str] = {}
    for name, lines in sections.items():
        while lines and not lines[-1].strip():
            lines.pop()
        text = "\n".join(lines)
        if text.count(example) != 1:
            raise DataError(f"Prompts.docx variant {name!r} does not contain the item-1 question exactly once")
        templates[name] = text.replace(example, _ITEM_SLOT)
    return templates


def all_templates(
    prompts_docx_paragraphs: list[str], example_story: str, example_options: tuple[str, ...]
) -> dict[str, str]:
    """Every variant's template, the direct prompt first."""
    return {
        DIRECT: DIRECT_TEMPLATE,
        **templates_from_prompts_docx(prompts_docx_paragraphs, example_story, example_options),
    }
