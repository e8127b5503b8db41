"""The upstream ToMBench code the tests hold ours to: functions of the pinned run_api.py and get_results.py, read
through the project's fetch code (from the offline mirror) and compiled on their own (their modules import openai and
tqdm at the top, which the functions do not need)."""

import json
from typing import Any

from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.tombench.data import PROMPTS_KEY
from upstream_code import upstream_functions_of


def upstream_source(key: str) -> str:
    return fetch_pinned("empathybench.instruments.tombench", key).path.read_text("utf-8")


def upstream_functions(key: str, names: tuple[str, ...], namespace: dict[str, Any]) -> dict[str, Any]:
    """The named top-level functions of an upstream file, defined in `namespace` (its globals)."""
    return upstream_functions_of(upstream_source(key), key, names, namespace)


def upstream_prompt_namespace() -> dict[str, Any]:
    """prompts.py's strings as run_api.py sees them (`from prompts import *`): the file is only assignments."""
    namespace: dict[str, Any] = {}
    exec(compile(upstream_source(PROMPTS_KEY), PROMPTS_KEY, "exec"), namespace)
    return namespace


def upstream_records(task: str) -> list[dict[str, Any]]:
    text = upstream_source(f"tombench/data/{task}.jsonl")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
