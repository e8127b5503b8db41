"""Shared by the SAGE tests: the released conversations read through the project's fetch code, the simulator's raw
replies rebuilt from what a result file keeps of them, and the pinned upstream code loaded (with its `call_llm`
replaced) to compute what upstream would send."""

import ast
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.sage import data
from empathybench.models.base import ChatRequest

SAGE = "empathybench.instruments.sage"  # the package whose pins.json holds the files read here


def released(key: str) -> list[dict[str, Any]]:
    """A released result file (data.GPT41_RESULTS_KEY / CLAUDE37_RESULTS_KEY), fetched and verified from the mirror."""
    path = fetch_pinned(SAGE, key).path
    return data.jsonl_records(Path(path).read_text("utf-8"), source=key)


def upstream_text(key: str) -> str:
    return Path(fetch_pinned(SAGE, key).path).read_text("utf-8")


def analysis_reply(planning: dict[str, Any]) -> str:
    """An analysis in the template's output format whose upstream reading is `planning` (a result file's)."""
    return (
        f"Content:\n[{planning['content']}\nTargetCompletion:\n[{planning['TargetCompletion']}\n"
        f"Activity:\n[{planning['activity']}\nAnalyse:\n[{planning['analyse']}\nChange:\n{planning['change']}"
    )


def person_reply(entry: dict[str, Any]) -> str:
    """A line in the reply template's output format whose upstream reading is the entry's thinking and content."""
    return f"Thinking:\n{entry['thinking']}\nResponse:\n{entry['content']}"


class Replay:
    """The answers of one released conversation, in the order the protocol asks for them: the model's replies, and
    the simulator's analysis and line of each later round."""

    def __init__(self, conversation: dict[str, Any]) -> None:
        history = conversation["history"]
        self.model: Iterator[str] = iter([m["content"] for m in history if m["role"] == "assistant"])
        people = [m for m in history if m["role"] == "user"][1:]  # the first line is preset, not asked
        self.analyses: Iterator[str] = iter([analysis_reply(m["planning"]) for m in people])
        self.lines: Iterator[str] = iter([person_reply(m) for m in people])

    def answer_model(self, request: ChatRequest) -> str:
        return next(self.model)

    def simulator_answer(self, prompt: str) -> str:
        # the line's template asks for "Response:", the analysis's does not
        return next(self.lines) if "Response:" in prompt else next(self.analyses)

    def answer_simulator(self, request: ChatRequest) -> str:
        return self.simulator_answer(request.messages[-1].content)

    def answer_by_tag(self, request: ChatRequest) -> str:
        """Both roles from one scripted model (self-simulated): the simulator's requests carry "sage:simulator"."""
        return self.answer_simulator(request) if request.tag.endswith(":simulator") else self.answer_model(request)


def upstream_loop() -> Any:
    """test_npc.py's conversation loop with a model (`while testmode != "human": ...`), compiled from the pinned file:
    run it with exec in a namespace holding player, simulator, chat_player, call_npc, turns and testmode."""
    module = ast.parse(upstream_text(data.LOOP_CODE_KEY))
    for node in module.body:
        if isinstance(node, ast.For):  # `for simulator in data:` holds the loops
            for inner in node.body:
                if (
                    isinstance(inner, ast.While)
                    and "human" in ast.unparse(inner.test)
                    and "!=" in ast.unparse(inner.test)
                ):
                    return compile(ast.Module(body=[inner], type_ignores=[]), data.LOOP_CODE_KEY, "exec")
    raise AssertionError("test_npc.py has no model loop")


def upstream_modules(answer: Callable[[Any], str]) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    """The pinned simulator_response.py and npc_response.py executed as modules with `call_llm` answering by `answer`
    (what was asked is appended to the returned list); their `time.sleep` does not wait."""
    asked: list[Any] = []

    def call_llm(prompt: Any) -> str:
        asked.append(prompt)
        return answer(prompt)

    namespaces = []
    for key in (data.SIMULATOR_CODE_KEY, data.NPC_CODE_KEY):
        saved = sys.modules.get("requests")
        sys.modules.setdefault("requests", types.ModuleType("requests"))  # imported, never used
        try:
            namespace: dict[str, Any] = {"__name__": f"upstream_{Path(key).stem}", "__file__": str(Path(key).name)}
            exec(compile(upstream_text(key), key, "exec"), namespace)  # the pinned upstream file, in the test only
        finally:
            if saved is None:
                sys.modules.pop("requests", None)
        namespace["call_llm"] = call_llm
        namespace["time"] = types.SimpleNamespace(sleep=lambda seconds: None, time=lambda: 0.0)
        namespace["print"] = lambda *args, **kwargs: None
        namespaces.append(namespace)
    return namespaces[0], namespaces[1], asked
