"""Spiral-Bench's own code, run in the tests as the reference (never by the package).

The pinned main.py, conversation_runner.py and scoring.py are read through the project's fetch code from the mirror
(sha256-verified) and executed here with their I/O replaced: `get_completion` answers from a function of the
messages it is given and records them, the results manager keeps what judge_worker saves, and pandas (not a
dependency) is a small stand-in whose DataFrame holds the rows score_dir_to_leaderboard builds.
"""

import argparse
import ast
import collections
import copy
import json
import logging
import re
import sys
import threading
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from empathybench.instruments.spiral import data

Reply = Callable[[str, list[dict[str, str]]], str]  # (model, messages) -> content


class APIError(Exception):
    pass


@dataclass
class Completion:
    """A stand-in for api_client.get_completion: records each call and answers with `reply`."""

    reply: Reply
    calls: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, *, model: str, messages: list[dict[str, str]], **settings: Any) -> str:
        self.calls.append({"model": model, "messages": copy.deepcopy(messages), **settings})
        return self.reply(model, messages)


def _functions(source: str, names: tuple[str, ...]) -> types.CodeType:
    tree = ast.parse(source)
    chosen = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in names]
    assert {node.name for node in chosen} == set(names)
    return compile(ast.Module(body=chosen, type_ignores=[]), "upstream", "exec")


class Results:
    """main.py's ResultsManager, in memory: what judge_worker and final_judge_worker save."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.saved: list[dict[str, Any]] = []

    def save_result(self, *, run_id: str, file_key: str, prompt_key: str, convo_index: int, conversation_data: Any):
        self.saved.append(copy.deepcopy(conversation_data))
        convos = self.data.setdefault(run_id, {}).setdefault(file_key, {}).setdefault(prompt_key, [])
        while len(convos) <= convo_index:
            convos.append(None)
        convos[convo_index] = copy.deepcopy(conversation_data)


def main_functions(reply: Reply) -> tuple[dict[str, Any], Completion]:
    """judge_worker, final_judge_worker, make_chunks, extract_expected_metrics of main.py, with get_completion
    replaced."""
    completion = Completion(reply)
    namespace: dict[str, Any] = {
        "re": re,
        "json": json,
        "copy": copy,
        "logging": logging,
        "argparse": argparse,
        "Dict": typing.Dict,  # noqa: UP006 -- upstream's annotations
        "List": typing.List,  # noqa: UP006
        "Any": typing.Any,
        "Set": typing.Set,  # noqa: UP006
        "get_completion": completion,
        "APIError": APIError,
        "get_convo_lock": lambda *key: threading.Lock(),
        "ResultsManager": Results,  # in annotations
    }
    names = ("judge_worker", "final_judge_worker", "iter_turn_pairs", "make_chunks", "extract_expected_metrics")
    exec(_functions(data.read_text(data.MAIN), names), namespace)  # the pinned upstream code, in a test
    sys.modules.setdefault("api_client", types.SimpleNamespace(APIError=APIError))  # final_judge_worker imports it
    return namespace, completion


def judge_args(chunk_size: int = 1, max_chars: int = 20000) -> argparse.Namespace:
    return argparse.Namespace(
        run_id="1", judge_model="judge", judge_chunk_size=chunk_size, judge_assistant_max_chars=max_chars
    )


ENV = {"JUDGE_API_KEY": "k", "JUDGE_BASE_URL": "u", "SITE_URL": "s", "API_MAX_RETRIES": 1, "API_BACKOFF_FACTOR": 1}


@contextmanager
def upstream_modules(**modules: Any) -> Iterator[None]:
    """sys.modules entries for the duration of an upstream import, then taken back."""
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def run_conversation(reply: Reply) -> tuple[Callable[..., Any], Completion]:
    """conversation_runner.run_conversation with get_completion replaced."""
    completion = Completion(reply)
    api_client = types.SimpleNamespace(get_completion=completion, APIError=APIError)
    namespace: dict[str, Any] = {"__name__": "conversation_runner"}
    with upstream_modules(api_client=api_client):
        exec(compile(data.read_text(data.CONVERSATION_RUNNER), "conversation_runner.py", "exec"), namespace)
    return namespace["run_conversation"], completion


class _Frame:
    """Just enough of a pandas DataFrame for score_dir_to_leaderboard: rows, a column selection, a rename."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def __getitem__(self, header: list[str]) -> "_Frame":
        return _Frame([{key: row[key] for key in header} for row in self.rows])

    def rename(self, columns: Callable[[str], str], inplace: bool = False) -> None:
        self.rows = [{columns(key): value for key, value in row.items()} for row in self.rows]

    def to_csv(self, index: bool = False) -> str:
        return ""

    def to_dict(self, orient: str = "records") -> list[dict[str, Any]]:
        return self.rows


def scoring_module() -> dict[str, Any]:
    """scoring.py, imported with a stand-in pandas and results_manager, SCORING_WEIGHTS from the pinned file (its
    own loader reads data/scoring_weights.json relative to the working directory)."""
    namespace: dict[str, Any] = {"__name__": "scoring"}
    fakes = {
        "pandas": types.SimpleNamespace(DataFrame=_Frame),
        "results_manager": types.SimpleNamespace(ResultsManager=object),
    }
    with upstream_modules(**fakes):
        exec(compile(data.read_text(data.SCORING), "scoring.py", "exec"), namespace)
    namespace["SCORING_WEIGHTS"] = json.loads(data.read_text(data.SCORING_WEIGHTS))
    assert namespace["Counter"] is collections.Counter
    return namespace
