"""TactfulToM's prompts: the system prompt per format, with and without chain of thought, the user prompt, the
shuffled options of a multiple-choice question and the second pass of chain of thought.

Source: code/get_original_results.py at commit 0881b0d8c251974e5ac2d8207a67f35fde0ec8f3 of nii-cl/tactful-tom, quoted
in specs/tactfultom.md section 3a with its line numbers. That file also holds two API keys, so it is neither pinned
nor fetched: its literals are quoted here (typos kept: "spliited"). Everything else a prompt holds (the
conversation, the question, its options) comes from the pinned dataset at run time.
"""

import random
from collections.abc import Sequence
from dataclasses import dataclass

from empathybench.instruments.tactfultom.parse import Format

# get_system_prompt, L90-109: without chain of thought L93 (binary), L95 (freeform), L97 (mcq), L99 (list).
SYSTEM_PROMPTS: dict[Format, str] = {
    "binary": "You are an expert in social reasoning. Answer the following question with 'Yes' or 'No'. "
    "Remember: Your answer should ONLY include 'Yes' or 'No' with nothing else.",
    "freeform": "You are an expert in social reasoning. Answer the following question with a single sentence.",
    "mcq": "You are an expert in social reasoning. Answer the following question with the option number of the most "
    "appropriate answer. Remember: Your answer should ONLY include the option number with nothing else.",
    "list": "You are an expert in social reasoning. List the required items and split them with commas. Remember: "
    "Your answer should ONLY include the required items spliited by commas with nothing else.",
}
# With chain of thought: L102 (binary), L104 (freeform), L106 (mcq), L108 (list).
COT_SYSTEM_PROMPTS: dict[Format, str] = {
    "binary": "You are an expert in social reasoning. Think step by step and give a final answer of 'Yes' or 'No' "
    "only.",
    "freeform": "You are an expert in social reasoning. Think step by step and give a final answer of a single "
    "sentence.",
    "mcq": "You are an expert in social reasoning. Think step by step and give a final answer of the option number of "
    "the most appropriate answer.",
    "list": "You are an expert in social reasoning. Think step by step, list the required items and split them with "
    "commas.",
}
COT_CUE = "Let's think step by step:\n"  # get_user_prompt, L61-88
COT_FINAL = "\n\nTherefore, the final answer is: "  # generate_set, L57: after the first pass's reply

# get_llm_input L116-125: the first of these keys a question has is shown as its target question.
TARGET_QUESTION_KEYS = ("fact_question_real_reason", "comprehension_q", "fact_question_truth", "truth_question")


def system_prompt(question_format: Format, cot: bool) -> str:
    return (COT_SYSTEM_PROMPTS if cot else SYSTEM_PROMPTS)[question_format]


def information_block(question: dict[str, object]) -> str:
    """L116-125: "# Information:" when the question has `information`, else its target question, else nothing."""
    if "information" in question:
        return f"# Information:\n{question['information']}\n\n"
    for key in TARGET_QUESTION_KEYS:
        if key in question:
            return f"# Target Question:\n{question[key]}\n\n"
    return ""


def options_of(question: dict[str, object]) -> list[str]:
    """L127-152: the gold answer first, then the wrong ones (`wrong_answer`, else `wrong_answers`; one string is a
    list of one; a nested list is unwrapped)."""
    wrong = question.get("wrong_answer", question.get("wrong_answers")) or []
    wrong_list = [wrong] if isinstance(wrong, str) else list(wrong)  # type: ignore[call-overload]
    flat: list[str] = []
    for option in wrong_list:
        flat.extend(str(o) for o in option) if isinstance(option, list) else flat.append(str(option))
    return [str(question["correct_answer"]), *flat]


def shuffled_mapping(n_options: int, rng: random.Random) -> list[int]:
    """The shown order: shown option i is original option mapping[i] (0: the gold answer). Upstream shuffled with
    Python's unseeded `random.shuffle`; ours is seeded per run and question."""
    mapping = list(range(n_options))
    rng.shuffle(mapping)
    return mapping


def question_rng(seed: int, question_id: str) -> random.Random:
    """The shuffle of one question: from the run's seed and the question only (the same order with and without
    chain of thought)."""
    return random.Random(f"tactfultom|{seed}|{question_id}")


def user_prompt(context: str, question: dict[str, object], options: Sequence[str] | None, cot: bool) -> str:
    """get_user_prompt L61-88: context, information, question, (mcq) the numbered options, (CoT) the cue."""
    text = f"# Context:\n{context}\n\n" + information_block(question) + f"# Question:\n{question['question']}\n\n"
    if options is not None:
        text += "# Options:\n" + "\n".join(f"{number + 1}. {option}" for number, option in enumerate(options)) + "\n\n"
    return text + (COT_CUE if cot else "")


def second_pass(user: str, first_reply: str) -> str:
    """generate_set L57: the user content of chain of thought's second pass (the same system prompt is sent)."""
    return user + first_reply + COT_FINAL


@dataclass(frozen=True)
class ShownOptions:
    texts: tuple[str, ...]  # in the order shown
    mapping: tuple[int, ...]  # shown position -> original index (0: gold)


def shown_options(options: Sequence[str], rng: random.Random) -> ShownOptions:
    mapping = shuffled_mapping(len(options), rng)
    return ShownOptions(tuple(options[index] for index in mapping), tuple(mapping))
