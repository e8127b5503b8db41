"""Spiral-Bench data: the pinned upstream files and what is read from them (specs/spiral.md).

The pins (repository, commit, path, sha256, git blob sha1) live beside this module in `pins.json`; the files are
fetched at run time through the project's fetch code (`EMPATHYBENCH_MIRROR` for an offline mirror). Nothing of the
upstream text is kept in this package: the openings, the user agent's instructions and injections, the rubric and
the final judge prompt come from their files, and the prompt strings upstream writes in its code from main.py and
conversation_runner.py (read by `upstream.py`); scoring.py's constants are read the same way.
"""

import ast
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from empathybench.data.fetch import FetchedFile, fetch_pinned
from empathybench.instruments.spiral import upstream

PREFIX = "spiral/"
OPENINGS = "prompts/eval_prompts_v0.2.json"
FINAL_JUDGE_PROMPT = "prompts/final_judge_prompt.txt"
CATEGORY_INSTRUCTIONS = "user_instructions/category_instructions.json"
# main.py takes user_instructions/<category>.txt when it exists, else default.txt; at the pinned commit no category
# file exists (the folder holds default.txt and variant1.txt), so every opening gets default.txt, as every released
# conversation records (`instruction_file`).
USER_INSTRUCTIONS = "user_instructions/default.txt"
INJECTIONS = "user_instructions/entropy.json"  # main.py's --prompt-injections default
RUBRIC_CRITERIA = "data/rubric_criteria.txt"  # main.py's --rubric-criteria-file default
SCORING_WEIGHTS = "data/scoring_weights.json"
MAIN = "main.py"
CONVERSATION_RUNNER = "conversation_runner.py"
SCORING = "scoring.py"
DEVELOPMENT_RESULT = "res_v0.2/claude-3.5-sonnet.json"  # the released file to develop against (tests only)

# What prepare() needs (the result file is fetched by the tests only).
PROTOCOL_FILES = (
    OPENINGS,
    FINAL_JUDGE_PROMPT,
    CATEGORY_INSTRUCTIONS,
    USER_INSTRUCTIONS,
    INJECTIONS,
    RUBRIC_CRITERIA,
    SCORING_WEIGHTS,
    MAIN,
    CONVERSATION_RUNNER,
    SCORING,
)


def fetch(path: str, *, allow_unverified: bool = False) -> FetchedFile:
    """A verified local copy of the pinned upstream file `path` (e.g. "main.py")."""
    return fetch_pinned(__package__, PREFIX + path, allow_unverified=allow_unverified)


def read_text(path: str, *, allow_unverified: bool = False) -> str:
    """The text of the pinned upstream file `path` (see `text_of`)."""
    return text_of(fetch(path, allow_unverified=allow_unverified))


def text_of(fetched: FetchedFile) -> str:
    """A fetched file's text as upstream's `open(path, "r", encoding="utf-8")` reads it (universal newlines)."""
    data = fetched.path.read_bytes().decode("utf-8")
    return data.replace("\r\n", "\n").replace("\r", "\n")


@dataclass(frozen=True)
class Opening:
    """One of the 30 openings of prompts/eval_prompts_v0.2.json."""

    prompt_id: str
    category: str
    prompts: tuple[str, ...]  # the scripted user turns; v0.2 has only the first


def parse_openings(text: str) -> list[Opening]:
    payload = json.loads(text)
    entries = payload if isinstance(payload, list) else [payload]
    openings = []
    for index, entry in enumerate(entries):
        prompts = entry.get("prompts")
        if not isinstance(prompts, list) or not prompts or not isinstance(prompts[0], str) or not prompts[0].strip():
            raise ValueError(f"{OPENINGS}: entry {index} has no first prompt")  # upstream skips it with an error
        # main.py's prompt key: prompt_id, else "prompt_index::<i>"
        prompt_id = entry.get("prompt_id") or f"prompt_index::{index}"
        openings.append(Opening(str(prompt_id), str(entry.get("category") or ""), tuple(prompts)))
    return openings


def expected_metrics(criteria_text: str) -> tuple[str, ...]:
    """main.py `extract_expected_metrics`: every non-empty line that is not a comment, stripped. Upstream collects
    them in a set, whose iteration order changes with PYTHONHASHSEED from one process to the next, so the order of
    the criteria in its judge prompt is not fixed; the file's order is kept here (the one order that is)."""
    lines = (line.strip() for line in criteria_text.splitlines())
    return tuple(dict.fromkeys(line for line in lines if line and not line.startswith("#")))


@dataclass(frozen=True)
class ScoringRules:
    """scoring.py's constants and data/scoring_weights.json, as `score_dir_to_leaderboard` uses them."""

    per_metric_max: dict[str, float]
    default_max: float
    per_chunk_cap: float
    positive_metrics: frozenset[str]
    ignore_metrics: frozenset[str]
    required_features: tuple[str, ...]
    metric_aliases: dict[str, str]
    weights: dict[str, float]
    max_features: int  # score_dir_to_leaderboard's default number of columns

    def weight(self, metric: str) -> float:
        return float(self.weights.get(metric, 1.0))

    def cap(self, metric: str) -> float:
        return float(self.per_metric_max.get(metric, self.default_max))


def scoring_rules_from(scoring_source: str, weights_text: str) -> ScoringRules:
    source = upstream.Source.parse(scoring_source, SCORING)
    weights = json.loads(weights_text)
    return ScoringRules(
        per_metric_max={k: float(v) for k, v in source.module_literal("PER_METRIC_MAX").items()},
        default_max=float(source.module_literal("DEFAULT_MAX")),
        per_chunk_cap=float(source.module_literal("PER_CHUNK_CAP")),
        positive_metrics=frozenset(source.module_literal("POSITIVE_METRICS")),
        ignore_metrics=frozenset(source.module_literal("IGNORE_METRICS")),
        required_features=tuple(source.module_literal("REQUIRED_FEATURES_ORDERED")),
        metric_aliases=dict(source.module_literal("METRIC_ALIASES")),
        weights={str(k): float(v) for k, v in weights.items()},
        max_features=int(upstream.function_default(source.function("score_dir_to_leaderboard"), "max_features")),
    )


@cache
def scoring_rules(allow_unverified: bool = False) -> ScoringRules:
    return scoring_rules_from(
        read_text(SCORING, allow_unverified=allow_unverified),
        read_text(SCORING_WEIGHTS, allow_unverified=allow_unverified),
    )


@dataclass(frozen=True)
class CodeTemplates:
    """The string expressions upstream builds its prompts with, as parsed nodes (evaluated by prompts.py)."""

    user_agent_base: str  # main.py USER_AGENT_BASE_SYSTEM_PROMPT
    user_system: ast.expr  # worker: user_system_prompt = f"{USER_AGENT_BASE_SYSTEM_PROMPT}\n{instructions}"
    user_system_extra: ast.expr  # worker: user_system_prompt += f"...{extra_text}"
    injected_system: ast.expr  # run_conversation: current_user_system_prompt = f"...{injection_to_add}]"
    last_message_content: ast.expr  # run_conversation: user_msgs[-1]["content"] + "...[Instructions..." + ...
    chunk_lines: ast.expr  # judge_worker: chunk_lines = ["[TRANSCRIPT]", ..., task["initial_user"].strip()]
    chunk_user_line: ast.expr  # judge_worker: f"\n# User (turn {turn_no})\n{u.strip()}"
    chunk_assistant_line: ast.expr  # judge_worker: f"\n# Assistant (turn {turn_no})\n{a_trunc.strip()}"
    chunk_closing_line: ast.expr  # judge_worker: "[/TRANSCRIPT]\n"
    transcript_block: ast.expr  # judge_worker: "\n".join(chunk_lines)
    criteria_list: ast.expr  # judge_worker: "\n".join(f"- {c}" for c in task["expected_metrics"])
    json_template: ast.expr  # judge_worker: "{\n" + ",\n".join([...]) + "\n}"
    judge_prompt: ast.expr  # judge_worker: the judging task around the transcript block
    judge_messages: ast.expr  # judge_worker: [system, user]
    final_chat_line: ast.expr  # final_judge_worker: f"{role}: {content}\n\n"
    final_messages: ast.expr  # final_judge_worker: [system, user]


def code_templates_from(main_source: str, runner_source: str) -> CodeTemplates:
    main = upstream.Source.parse(main_source, MAIN)
    runner = upstream.Source.parse(runner_source, CONVERSATION_RUNNER)
    worker = main.function("worker")
    judge = main.function("judge_worker")
    final = main.function("final_judge_worker")
    conversation = runner.function("run_conversation")
    lines = upstream.appended(judge, "chunk_lines")
    if len(lines) != 3:
        raise upstream.UpstreamCodeError(f"{MAIN} judge_worker: expected 3 chunk_lines.append calls, got {len(lines)}")
    return CodeTemplates(
        user_agent_base=main.module_literal("USER_AGENT_BASE_SYSTEM_PROMPT"),
        user_system=upstream.only_expression(worker, "user_system_prompt", where="main.py worker"),
        user_system_extra=upstream.only_expression(
            worker, "user_system_prompt", augmented=True, where="main.py worker"
        ),
        injected_system=_injection_expression(conversation),
        last_message_content=upstream.subscript_assignment_content(
            conversation, "user_msgs", where="conversation_runner.py"
        ),
        chunk_lines=upstream.only_expression(judge, "chunk_lines", where="main.py judge_worker"),
        chunk_user_line=lines[0],
        chunk_assistant_line=lines[1],
        chunk_closing_line=lines[2],
        transcript_block=upstream.only_expression(judge, "transcript_block", where="main.py judge_worker"),
        criteria_list=upstream.only_expression(judge, "criteria_list", where="main.py judge_worker"),
        json_template=upstream.only_expression(judge, "json_template", where="main.py judge_worker"),
        judge_prompt=upstream.only_expression(judge, "judge_prompt", where="main.py judge_worker"),
        judge_messages=upstream.only_expression(judge, "messages", where="main.py judge_worker"),
        final_chat_line=upstream.only_expression(final, "chatlog_str", augmented=True, where="main.py final judge"),
        final_messages=upstream.only_expression(final, "messages", where="main.py final judge"),
    )


def _injection_expression(scope: ast.AST) -> ast.expr:
    """run_conversation sets `current_user_system_prompt = user_system_prompt` and then, on an injection turn,
    `current_user_system_prompt = f"...{injection_to_add}]"`: the f-string is the injected form (every copy the
    same)."""
    found = [
        node.value
        for node in ast.walk(scope)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == "current_user_system_prompt"
        and isinstance(node.value, ast.JoinedStr)
    ]
    if not found or len({ast.dump(node) for node in found}) != 1:
        raise upstream.UpstreamCodeError("conversation_runner.py: no single injected system prompt expression")
    return found[0]


@dataclass(frozen=True)
class SpiralProtocol:
    """Everything a Spiral-Bench run reads from upstream."""

    openings: tuple[Opening, ...]
    user_instructions: str
    category_instructions: dict[str, str]
    injections: tuple[str, ...]
    criteria: tuple[str, ...]
    final_judge_template: str
    templates: CodeTemplates
    scoring: ScoringRules


def load_protocol(*, allow_unverified: bool = False) -> tuple[SpiralProtocol, list[FetchedFile]]:
    """Fetch (verified) and read every file a run needs, each once; the fetched files for run.json."""
    files = {path: fetch(path, allow_unverified=allow_unverified) for path in PROTOCOL_FILES}
    return _protocol({path: text_of(fetched) for path, fetched in files.items()}), list(files.values())


def _protocol(text: Mapping[str, str]) -> SpiralProtocol:
    injections: Any = json.loads(text[INJECTIONS])
    if not isinstance(injections, list) or not all(isinstance(s, str) for s in injections):
        raise ValueError(f"{INJECTIONS} must be a JSON list of strings")  # main.py load_injection_file
    categories = json.loads(text[CATEGORY_INSTRUCTIONS])
    return SpiralProtocol(
        openings=tuple(parse_openings(text[OPENINGS])),
        user_instructions=text[USER_INSTRUCTIONS],
        category_instructions={str(k): str(v) for k, v in categories.items()},
        injections=tuple(injections),
        criteria=expected_metrics(text[RUBRIC_CRITERIA]),
        final_judge_template=text[FINAL_JUDGE_PROMPT],
        templates=code_templates_from(text[MAIN], text[CONVERSATION_RUNNER]),
        scoring=scoring_rules_from(text[SCORING], text[SCORING_WEIGHTS]),
    )


def development_result_path() -> Path:
    """The released result file to develop against, fetched and verified (for the tests)."""
    return fetch(DEVELOPMENT_RESULT).path
