"""EQ-Bench prompts: the stored ("revise") prompt and the default "no revise" prompt (specs/eqbench.md §2).

The items store the revise-style prompt (first pass, critique, revised scores). Since v2.1 the pipeline, lm-eval
and evalscope send a shortened prompt built by four edits (§2.2):
  (a) drop the "critique and revise" instruction,
  (b) drop the first-pass heading line,
  (c) cut from the critique placeholder up to (not including) the end-of-answer marker, leaving one "\\n",
  (d) append an answer cue.

en, de and pl use the fixed protocol strings quoted in §2.2. The community Japanese file (ja) was translated
item by item by an LLM, so its wording varies between items (7 first-pass headings, 7 revised headings,
4 critique placeholders and dozens of instruction sentences in 171 items); for it the same four edits are
located by the prompt's structure instead (see `_no_revise_japanese`). The "half" Japanese file (jahalf)
keeps the English instructions, except item 171, which is the fully Japanese prompt; ja and jahalf are both
handled by trying the English anchors first.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Languages with a no-revise transform. "jahalf" is the community file with Japanese dialogue and English
# instructions.
LANGUAGES: tuple[str, ...] = ("en", "de", "pl", "ja", "jahalf")


@dataclass(frozen=True)
class _Anchors:
    """The protocol strings of §2.2 for one language."""

    revise_instruction: str | None  # (a) deleted, with its leading space; None: replaced differently (de)
    first_pass_heading: str  # (b) deleted line, including its "\n"
    critique_start: str  # (c) start of the cut
    end_of_answer: str  # (c) end of the cut (kept)
    answer_cue: str  # (d) appended


# §2.2, English (S1 v2.1+).
_ENGLISH = _Anchors(
    revise_instruction=(
        " Then critique your answer by thinking it through step by step. Finally, give your revised scores."
    ),
    first_pass_heading="First pass scores:\n",
    critique_start="Critique: <your critique here>",
    end_of_answer="[End of answer]",
    answer_cue="\nYour answer:\n",
)

# §2.2, German (v2.1+). (a) is a replacement of the whole instruction sentence, see `_GERMAN_INSTRUCTION`.
_GERMAN = _Anchors(
    revise_instruction=None,
    first_pass_heading="Erste Bewertung:\n",
    critique_start="Kritik: <Ihre Kritik hier>",
    end_of_answer="[Ende der Antwort]",
    answer_cue="\nIhre Antwort:\n",
)

# §2.2, German (a): the instruction sentence that replaces the stored one.
_GERMAN_INSTRUCTION = (
    "Geben Sie jeder dieser möglichen Emotionen eine Punktzahl von 0-10 für die relative Intensität, "
    "die sie wahrscheinlich fühlen werden."
)
# The stored German instruction line. GPT-4 translated it item by item, so 58 of the 171 items word the
# critique sentence differently (e.g. "Dann kritisieren Sie ..."); the line as a whole is what gets replaced.
_GERMAN_INSTRUCTION_LINE = re.compile(r"^Geben Sie jeder dieser möglichen Emotionen [^\n]*$", re.MULTILINE)

# §2.2, Polish (S2 enelpol `polish`).
_POLISH = _Anchors(
    revise_instruction=(
        " Następnie skrytykuj swoją odpowiedź, przemyśl ją krok po kroku."
        " Wprowadź zmiany i na koniec podaj ostateczne oceny."
    ),
    first_pass_heading="Pierwsze oceny:\n",
    critique_start="Weryfikacja: <twoja opinia tutaj>",
    end_of_answer="[Koniec odpowiedzi]",
    answer_cue="\nTwoja odpowiedź:\n",
)

# Japanese community file (our own choice; no upstream no-revise prompt exists for it). The end marker is the
# only instruction string that is identical in all 171 items.
_JAPANESE_END_OF_ANSWER = "[回答終了]"
# Our Japanese rendering of "Your answer:" (d); the colon follows the file's own "見出し: " style.
_JAPANESE_ANSWER_CUE = "\nあなたの回答:\n"
# (a) The instruction line asks for 0-10 scores in its first sentence; the revise request always follows as
# "その後、..." (sometimes split into a further sentence "最後に、..."). Everything from "その後" to the end of
# the line is dropped.
_JAPANESE_INSTRUCTION = re.compile(r"^(?P<keep>[^\n]*0-10[^\n]*?。)その後[^\n]*$", re.MULTILINE)
# (b) A heading line is a line ending in a colon (half- or full-width, optional trailing space) directly
# followed by a placeholder line "<label>: <...>". Both the first-pass and the revised heading match.
_HEADING_BEFORE_PLACEHOLDERS = re.compile(r"^[^\n<>]*[:：] ?\n(?=[^\n]+: <[^\n]*>$)", re.MULTILINE)
_PLACEHOLDER_LINE = re.compile(r"^[^\n]+: <[^\n]*>$", re.MULTILINE)


def _require_once(text: str, anchor: str, what: str, where: str) -> int:
    count = text.count(anchor)
    if count != 1:
        raise ValueError(f"{where}: expected the {what} {anchor!r} exactly once, found it {count} times")
    return text.index(anchor)


def _where(language: str, item_id: str | None) -> str:
    return f"EQ-Bench item {item_id} ({language})" if item_id is not None else f"EQ-Bench prompt ({language})"


def _cut_critique(text: str, anchors: _Anchors, where: str) -> str:
    """(c): everything from the critique placeholder up to the end-of-answer marker becomes one "\\n"."""
    start = _require_once(text, anchors.critique_start, "critique placeholder", where)
    end = _require_once(text, anchors.end_of_answer, "end-of-answer marker", where)
    if end < start:
        raise ValueError(f"{where}: the end-of-answer marker comes before the critique placeholder")
    return text[:start] + "\n" + text[end:]


def _no_revise_with_anchors(stored: str, anchors: _Anchors, where: str) -> str:
    text = stored
    if anchors.revise_instruction is not None:
        _require_once(text, anchors.revise_instruction, "revise instruction", where)
        text = text.replace(anchors.revise_instruction, "", 1)
    _require_once(text, anchors.first_pass_heading, "first-pass heading", where)
    text = text.replace(anchors.first_pass_heading, "", 1)
    return _cut_critique(text, anchors, where) + anchors.answer_cue


def _no_revise_german(stored: str, where: str) -> str:
    lines = _GERMAN_INSTRUCTION_LINE.findall(stored)
    if len(lines) != 1:
        raise ValueError(f"{where}: expected one German instruction line, found {len(lines)}")
    text = _GERMAN_INSTRUCTION_LINE.sub(_GERMAN_INSTRUCTION, stored, count=1)
    return _no_revise_with_anchors(text, _GERMAN, where)


def _no_revise_japanese(stored: str, where: str) -> str:
    """The four edits located by structure, for the LLM-translated Japanese prompts.

    The stored format section is: instruction line, output-format sentence, first-pass heading, 4 placeholder
    lines, blank line, critique placeholder, blank line, revised heading, 4 placeholder lines, blank line,
    "[回答終了]". Each step checks that structure and names the item when it is not there.
    """
    instruction = _JAPANESE_INSTRUCTION.findall(stored)
    if len(instruction) != 1:
        raise ValueError(f"{where}: expected one instruction line with '0-10' and 'その後', found {len(instruction)}")
    text = _JAPANESE_INSTRUCTION.sub(r"\g<keep>", stored, count=1)

    headings = list(_HEADING_BEFORE_PLACEHOLDERS.finditer(text))
    if len(headings) != 2:
        raise ValueError(f"{where}: expected a first-pass and a revised heading, found {len(headings)} headings")
    first_heading = headings[0]
    text = text[: first_heading.start()] + text[first_heading.end() :]

    end = _require_once(text, _JAPANESE_END_OF_ANSWER, "end-of-answer marker", where)
    # The first-pass placeholder block ends at the first blank line after its first placeholder line.
    block_start = first_heading.start()
    block_end = text.find("\n\n", block_start)
    if block_end == -1 or block_end > end:
        raise ValueError(f"{where}: no blank line after the first-pass placeholders")
    first_block = text[block_start:block_end]
    cut = text[block_end + 2 : end]
    # The cut must hold the critique placeholder and the 4 revised placeholders, nothing of the first block.
    if len(_PLACEHOLDER_LINE.findall(first_block)) != 4 or len(_PLACEHOLDER_LINE.findall(cut)) != 5:
        raise ValueError(f"{where}: the placeholder lines are not 4 (first pass) + 1 + 4 (critique, revised)")
    return text[: block_end + 2] + "\n" + text[end:] + _JAPANESE_ANSWER_CUE


def no_revise_prompt(stored_prompt: str, language: str, *, item_id: str | None = None) -> str:
    """The default prompt since v2.1 (§2.2): the stored prompt with the revise part removed.

    `language` is one of `LANGUAGES`. Raises ValueError, naming `item_id` when given, if the prompt does not
    have the expected protocol strings or structure.
    """
    where = _where(language, item_id)
    if language == "en":
        return _no_revise_with_anchors(stored_prompt, _ENGLISH, where)
    if language == "de":
        return _no_revise_german(stored_prompt, where)
    if language == "pl":
        return _no_revise_with_anchors(stored_prompt, _POLISH, where)
    if language in ("ja", "jahalf"):
        # jahalf keeps the English instructions (all but one item); ja items are Japanese throughout.
        if _ENGLISH.critique_start in stored_prompt:
            return _no_revise_with_anchors(stored_prompt, _ENGLISH, where)
        return _no_revise_japanese(stored_prompt, where)
    raise ValueError(f"unsupported EQ-Bench language {language!r}; expected one of {', '.join(LANGUAGES)}")


def revise_prompt(stored_prompt: str) -> str:
    """The revise-style prompt (v1, v2.0, v2.x with `-revise`): the stored prompt unchanged (§2.1)."""
    return stored_prompt


def emotion_labels(reference: Mapping[str, Any]) -> list[str]:
    """The four emotion labels of a reference (`reference_answer` or `..._fullscale`), in prompt order."""
    return [str(reference[f"emotion{i}"]) for i in range(1, 5)]


def reference_scores(reference: Mapping[str, Any]) -> dict[str, float]:
    """Label -> reference intensity. Upstream stores some scores as strings (e.g. '6'), hence the cast."""
    return {str(reference[f"emotion{i}"]): float(reference[f"emotion{i}_score"]) for i in range(1, 5)}
