"""SAGE's upstream files: the pins (pins.json), the 100 people, and the protocol read out of the upstream code.

Nothing of SAGE's content is in this repository: the people come from the pinned profile file, and every prompt
string (the simulator's analysis and reply templates, the conversation target, the model's system prompt, the words
that end a conversation, the emotion thresholds) is read at run time from the fetched upstream Python files with
`ast`, never executed (specs/sage.md).
"""

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from empathybench.data.fetch import FetchedFile, fetch_pinned
from empathybench.errors import DataError
from empathybench.instruments.support import jsonl_records as jsonl_records  # re-exported: rescore, tests

_ROOT = "sage/SAGE/"
PROFILES_KEY = _ROOT + "profile/simulator_profile_withfirsttalk.jsonl"
PROFILES_NO_FIRST_LINE_KEY = _ROOT + "profile/simulator_profile.jsonl"
SIMULATOR_CODE_KEY = _ROOT + "simulator_response.py"
NPC_CODE_KEY = _ROOT + "npc_response.py"
LOOP_CODE_KEY = _ROOT + "test_npc.py"
RESULTS_DIR = _ROOT + "dataset/deepseek-v3-2024-1227_based_simulator/"
GPT41_RESULTS_KEY = RESULTS_DIR + "gpt-4.1_result.jsonl"
CLAUDE37_RESULTS_KEY = RESULTS_DIR + "claude3.7_result.jsonl"
# What a run reads (the result files and the README are for rescore and the tests).
RUN_KEYS = (PROFILES_KEY, SIMULATOR_CODE_KEY, NPC_CODE_KEY, LOOP_CODE_KEY)

N_PEOPLE = 100


@dataclass(frozen=True)
class Person:
    """One simulated person (a line of simulator_profile_withfirsttalk.jsonl)."""

    number: int  # 1-based line number in the pinned file: the item id
    id: str  # upstream's id (the result files' `id`)
    player: str  # the persona ("人物画像")
    scene: str  # the background, hidden theme and reactions per emotion ("对话背景")
    first_talk: str  # the preset first line
    character: str  # main_cha: the character type
    task: str  # what the person wants from the conversation
    traits: tuple[str, ...]  # cha_group


def parse_people(text: str, *, source: str = "simulator_profile_withfirsttalk.jsonl") -> list[Person]:
    people = []
    for number, record in enumerate(jsonl_records(text, source=source), start=1):
        try:
            people.append(
                Person(
                    number=number,
                    id=str(record["id"]),
                    player=str(record["player"]),
                    scene=str(record["scene"]),
                    first_talk=str(record["first_talk"]),
                    character=str(record["main_cha"]),
                    task=str(record["task"]),
                    traits=tuple(str(t) for t in record.get("cha_group") or ()),
                )
            )
        except KeyError as exc:
            raise DataError(f"{source}: person {number} has no {exc.args[0]!r}") from None
    return people


# --- the protocol, read out of the upstream code ------------------------------------------------------------------


@dataclass(frozen=True)
class UpstreamProtocol:
    """Every string and threshold of SAGE's protocol, as the pinned upstream code has them."""

    target: str  # simulator_response.py `target_prompt`: the person's conversation goal
    analysis_template: str  # planning_reply's `template`: the emotion analyser
    reply_template: str  # player_reply's `template`: the actor who answers in character
    history_roles: Mapping[str, str]  # `mapping`: how each side is named in the dumped dialogue history
    # player_reply's {{planning}} text: literal parts and the analysis fields between them, in order
    planning_parts: tuple[tuple[str, str], ...]  # ("text", literal) | ("field", planning key)
    initial_emotion: int  # player_init: "emo_point"
    initial_state: str  # player_init: "emo_state"
    emotion_states: tuple[tuple[str, int], ...]  # emo_count in order: (state, lowest emotion), first match wins
    failed_state: str  # the state below `failed_below` ("Emotion-F")
    failed_below: int
    system_prompt: str  # npc_response.py call_npc's `role_system`: the model under test's system message
    goodbye_words: tuple[str, ...]  # test_npc.py: the person's line that ends the conversation
    max_rounds: int  # test_npc.py: `turns > N` ends it
    stop_at_or_above: int  # test_npc.py: emotion-point >= this ends it
    stop_below: int  # test_npc.py: emotion-point < this ends it


def _module(source: str, name: str) -> ast.Module:
    try:
        return ast.parse(source, filename=name)
    except SyntaxError as exc:
        raise DataError(f"{name} is not Python: {exc}") from None


def _function(module: ast.Module, name: str, source_name: str) -> ast.FunctionDef:
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise DataError(f"{source_name}: no function {name}()")


def _assigned(scope: ast.AST, name: str, source_name: str) -> Any:
    """The literal value first assigned to `name` in `scope` (a module or a function)."""
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                continue
    raise DataError(f"{source_name}: no literal assignment to {name}")


def _planning_parts(player_reply: ast.FunctionDef, source_name: str) -> tuple[tuple[str, str], ...]:
    """The `{{planning}}` text of player_reply when there is an analysis: the string added up from literals and
    `planning[...]` fields in `template.replace("{{planning}}", ...)` (the branch with literal text between fields;
    the other branch, before any analysis, inserts one field alone)."""

    def flatten(node: ast.expr) -> list[tuple[str, str]] | None:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = flatten(node.left), flatten(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [("text", node.value)]
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "planning"
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            return [("field", node.slice.value)]
        return None

    candidates: list[tuple[tuple[str, str], ...]] = []
    for node in ast.walk(player_reply):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "replace"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "{{planning}}"
        ):
            parts = flatten(node.args[1])
            if parts and any(kind == "field" for kind, _ in parts) and any(kind == "text" for kind, _ in parts):
                candidates.append(tuple(parts))
    if len(candidates) == 1:  # the other replacement (no analysis yet) inserts one field, no literal text
        return candidates[0]
    raise DataError(f"{source_name}: no {{{{planning}}}} text built from the analysis in player_reply()")


def _failed_state(planning_reply: ast.FunctionDef, source_name: str) -> tuple[str, int]:
    """`if emo_point < N: emo_state = '...'` in planning_reply."""
    for node in ast.walk(planning_reply):
        test = node.test if isinstance(node, ast.If) else None
        if (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "emo_point"
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Lt)
            and isinstance(test.comparators[0], ast.Constant)
        ):
            for statement in node.body:  # type: ignore[union-attr]
                if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant):
                    return str(statement.value.value), int(test.comparators[0].value)
    raise DataError(f"{source_name}: no failed emotion state (emo_point < N) in planning_reply()")


def _initial(player_init: ast.FunctionDef, source_name: str) -> tuple[int, str]:
    """player_init's starting "emo_point" and "emo_state" (literal values in its player_data dict)."""
    found: dict[str, Any] = {}
    for node in ast.walk(player_init):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                    found[str(key.value)] = value.value
    emotion, state = found.get("emo_point"), found.get("emo_state")
    if not isinstance(emotion, int) or not isinstance(state, str):
        raise DataError(f"{source_name}: player_init() has no literal emo_point and emo_state")
    return emotion, state


def _loop_rules(module: ast.Module, source_name: str) -> tuple[tuple[str, ...], int, int, int]:
    """test_npc.py's stop rules: the goodbye words, `turns > N`, emotion-point >= high and < low."""
    words: list[str] = []
    rounds: set[int] = set()
    high: set[int] = set()
    low: set[int] = set()
    for node in ast.walk(module):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        op, right = node.ops[0], node.comparators[0]
        if isinstance(op, ast.In) and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            if node.left.value not in words:
                words.append(node.left.value)
        elif isinstance(right, ast.Constant) and isinstance(right.value, int):
            if isinstance(node.left, ast.Name) and node.left.id == "turns" and isinstance(op, ast.Gt):
                rounds.add(right.value)
            elif _names_emotion_point(node.left) and isinstance(op, ast.GtE):
                high.add(right.value)
            elif _names_emotion_point(node.left) and isinstance(op, ast.Lt):
                low.add(right.value)
    if not words or len(rounds) != 1 or len(high) != 1 or len(low) != 1:
        raise DataError(f"{source_name}: its stop rules (goodbye words, turns > N, emotion-point bounds) not found")
    return tuple(words), rounds.pop(), high.pop(), low.pop()


def _names_emotion_point(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "emotion-point"
    )


def parse_protocol(simulator_code: str, npc_code: str, loop_code: str) -> UpstreamProtocol:
    """The protocol from the three upstream files' text (simulator_response.py, npc_response.py, test_npc.py)."""
    simulator = _module(simulator_code, "simulator_response.py")
    planning_reply = _function(simulator, "planning_reply", "simulator_response.py")
    player_reply = _function(simulator, "player_reply", "simulator_response.py")
    emo_count = _assigned(simulator, "emo_count", "simulator_response.py")
    if not isinstance(emo_count, dict) or not all(isinstance(v, int) for v in emo_count.values()):
        raise DataError("simulator_response.py: emo_count is not a mapping of states to numbers")
    history_roles = _assigned(planning_reply, "mapping", "simulator_response.py")
    if _assigned(player_reply, "mapping", "simulator_response.py") != history_roles:
        raise DataError("simulator_response.py: the two history mappings differ")
    failed_state, failed_below = _failed_state(planning_reply, "simulator_response.py")
    initial_emotion, initial_state = _initial(
        _function(simulator, "player_init", "simulator_response.py"), "simulator_response.py"
    )
    npc = _module(npc_code, "npc_response.py")
    words, rounds, high, low = _loop_rules(_module(loop_code, "test_npc.py"), "test_npc.py")
    texts = {
        "target": _assigned(simulator, "target_prompt", "simulator_response.py"),
        "analysis": _assigned(planning_reply, "template", "simulator_response.py"),
        "reply": _assigned(player_reply, "template", "simulator_response.py"),
        "system": _assigned(_function(npc, "call_npc", "npc_response.py"), "role_system", "npc_response.py"),
    }
    for what, value in texts.items():
        if not isinstance(value, str) or not value:
            raise DataError(f"SAGE's {what} prompt is not a string in the upstream code")
    return UpstreamProtocol(
        target=texts["target"],
        analysis_template=texts["analysis"],
        reply_template=texts["reply"],
        history_roles=dict(history_roles),
        planning_parts=_planning_parts(player_reply, "simulator_response.py"),
        initial_emotion=initial_emotion,
        initial_state=initial_state,
        emotion_states=tuple(emo_count.items()),
        failed_state=failed_state,
        failed_below=failed_below,
        system_prompt=texts["system"],
        goodbye_words=words,
        max_rounds=rounds,
        stop_at_or_above=high,
        stop_below=low,
    )


def _read(fetched: FetchedFile) -> str:
    return Path(fetched.path).read_text("utf-8")


def load(*, allow_unverified: bool = False) -> tuple[list[Person], UpstreamProtocol, list[FetchedFile]]:
    """The people and the protocol, fetched (or read from the cache) and verified."""
    files = {key: fetch_pinned(__package__, key, allow_unverified=allow_unverified) for key in RUN_KEYS}
    people = parse_people(_read(files[PROFILES_KEY]))
    if len(people) != N_PEOPLE:
        raise DataError(f"SAGE's profile file holds {len(people)} people, not {N_PEOPLE}")
    protocol = parse_protocol(_read(files[SIMULATOR_CODE_KEY]), _read(files[NPC_CODE_KEY]), _read(files[LOOP_CODE_KEY]))
    return people, protocol, list(files.values())
