"""Upstream code the tests hold ours to: named top-level functions of a pinned upstream file, compiled on their own
(the modules import what the functions do not need: openai, tqdm, helper modules missing upstream)."""

import ast
from typing import Any


def upstream_functions_of(
    source: str, filename: str, names: tuple[str, ...], namespace: dict[str, Any]
) -> dict[str, Any]:
    """The named top-level functions of `source`, defined in `namespace` (their globals)."""
    tree = ast.parse(source)
    chosen = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in names]
    assert sorted(node.name for node in chosen) == sorted(names)
    exec(compile(ast.Module(body=chosen, type_ignores=[]), filename, "exec"), namespace)
    return namespace
