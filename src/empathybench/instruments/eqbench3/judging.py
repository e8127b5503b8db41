"""Reading a judge's JSON reply the way upstream does (specs/eqbench3.md §4 "Parsing the judge reply").

Upstream's tolerant loader: keep the text after the last of several ```json fences, drop fence lines, take the
first brace-balanced object, `json.loads`; on failure escape raw newlines and stray inner quotes in strings and
try again. EmpathyBench adds one repair of its own, named in `repairs` so it can be counted: trailing commas
before `}` or `]`, which judges copy from the role-play pairwise template (spec §8 item 3).
"""

import json
import re
from dataclasses import dataclass, field
from typing import Any

_FENCE = "```json"
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


@dataclass
class LoadedJson:
    value: Any
    repairs: list[str] = field(default_factory=list)  # "quotes" (upstream's), "trailing_comma" (ours)


def _first_object(text: str) -> str:
    """The first brace-balanced `{...}`, aware of strings and escapes; the rest of the text when unbalanced."""
    start = text.find("{")
    if start < 0:
        return text
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return text[start:]


def _repair_strings(text: str) -> str:
    """Escape raw newlines inside strings, and quotes inside strings not followed by , } ] or :."""
    out: list[str] = []
    in_string, escaped = False, False
    for index, char in enumerate(text):
        if not in_string:
            out.append(char)
            if char == '"':
                in_string = True
            continue
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            out.append(char)
            escaped = True
        elif char == "\n":
            out.append("\\n")
        elif char == '"':
            rest = text[index + 1 :].lstrip()
            if not rest or rest[0] in ",}]:":
                out.append(char)
                in_string = False
            else:
                out.append('\\"')
        else:
            out.append(char)
    return "".join(out)


def load_judge_json(text: str) -> LoadedJson:
    """The judge reply's JSON object; raises ValueError when none can be read."""
    if text.count(_FENCE) > 1:
        text = text[text.rfind(_FENCE) + len(_FENCE) :]
    text = "\n".join(line for line in text.split("\n") if not line.startswith("```"))
    candidate = _first_object(text)
    attempts: list[tuple[str, list[str]]] = [(candidate, [])]
    repaired = _repair_strings(candidate)
    attempts.append((repaired, ["quotes"]))
    attempts.append((_TRAILING_COMMA.sub(r"\1", candidate), ["trailing_comma"]))
    attempts.append((_TRAILING_COMMA.sub(r"\1", repaired), ["quotes", "trailing_comma"]))
    for index, (attempt, repairs) in enumerate(attempts):
        try:
            return LoadedJson(json.loads(attempt), repairs)
        except (json.JSONDecodeError, RecursionError):
            # Upstream stops after its own two attempts; the trailing-comma ones are ours (counted via `repairs`).
            if index == len(attempts) - 1:
                raise ValueError("no valid JSON object in the judge reply") from None
    raise AssertionError("unreachable")


def load_judge_json_upstream(text: str) -> Any:
    """Upstream's loader without EmpathyBench's trailing-comma repair (what the April 2025 file reflects)."""
    loaded = load_judge_json(text)
    if "trailing_comma" in loaded.repairs:
        raise ValueError("the judge reply's JSON has a trailing comma (strict JSON fails upstream)")
    return loaded.value
