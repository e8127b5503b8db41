"""Prompt text read out of Spiral-Bench's own code (main.py, conversation_runner.py, scoring.py at the pinned commit).

Upstream writes several prompts as string expressions in its Python code (the chunk judge's task text, the judges'
system messages, the user agent's injection line) rather than in text files. So that they reach the model byte for
byte and nothing of them is pasted into this package, the fetched source is parsed with `ast` and those expressions
are evaluated here by a small interpreter that knows only what string building needs: literals, f-strings without
format specs, `+`, subscripts by constant, `.strip()` / `.join()` / `.capitalize()` on strings, one-loop
comprehensions, list and dict displays. It runs no upstream code: anything else is an UpstreamCodeError, and the
files are verified by sha256 before they are parsed, so such an error means this module needs updating.
"""

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_STRING_METHODS = frozenset({"strip", "join", "capitalize"})


class UpstreamCodeError(ValueError):
    """The pinned upstream code does not have the shape this module reads."""


def evaluate(node: ast.expr, env: Mapping[str, Any]) -> Any:
    """The value of a string-building expression of upstream's code, its names taken from `env`."""
    match node:
        case ast.Constant(value=value) if isinstance(value, str | int):
            return value
        case ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=int() as value)):
            return -value
        case ast.Name(id=name):
            if name not in env:
                raise UpstreamCodeError(f"upstream expression uses {name!r}, which is not provided")
            return env[name]
        case ast.JoinedStr(values=values):
            return "".join(_fstring_part(part, env) for part in values)
        case ast.BinOp(left=left, op=ast.Add(), right=right):
            first, second = evaluate(left, env), evaluate(right, env)
            if not (isinstance(first, str) and isinstance(second, str)):
                raise UpstreamCodeError("upstream `+` outside string concatenation")
            return first + second
        case ast.Subscript(value=container, slice=key):
            return evaluate(container, env)[evaluate(key, env)]
        case ast.Call(func=ast.Attribute(value=receiver, attr=method), args=args, keywords=[]):
            target = evaluate(receiver, env)
            if method not in _STRING_METHODS or not isinstance(target, str):
                raise UpstreamCodeError(f"upstream calls .{method}(), which this reader does not evaluate")
            return getattr(target, method)(*(evaluate(arg, env) for arg in args))
        case ast.ListComp(elt=element, generators=[loop]) | ast.GeneratorExp(elt=element, generators=[loop]):
            return _comprehension(element, loop, env)
        case ast.List(elts=elements):
            return [evaluate(element, env) for element in elements]
        case ast.Dict(keys=keys, values=values) if all(key is not None for key in keys):
            return {evaluate(key, env): evaluate(value, env) for key, value in zip(keys, values, strict=True)}  # type: ignore[arg-type]
    raise UpstreamCodeError(f"upstream expression not understood: {ast.unparse(node)[:120]}")


def _fstring_part(part: ast.expr, env: Mapping[str, Any]) -> str:
    if isinstance(part, ast.Constant) and isinstance(part.value, str):
        return part.value
    if isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None:
        return str(evaluate(part.value, env))
    raise UpstreamCodeError(f"f-string part not understood: {ast.unparse(part)[:120]}")


def _comprehension(element: ast.expr, loop: ast.comprehension, env: Mapping[str, Any]) -> list[Any]:
    if not isinstance(loop.target, ast.Name) or loop.ifs or loop.is_async:
        raise UpstreamCodeError("comprehension not understood")
    name = loop.target.id
    return [evaluate(element, {**env, name: value}) for value in evaluate(loop.iter, env)]


@dataclass(frozen=True)
class Source:
    """One parsed upstream module."""

    tree: ast.Module
    name: str  # the file name, for messages

    @classmethod
    def parse(cls, text: str, name: str) -> "Source":
        try:
            return cls(ast.parse(text), name)
        except SyntaxError as exc:
            raise UpstreamCodeError(f"{name} does not parse: {exc}") from None

    def function(self, name: str) -> ast.FunctionDef:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return node
        raise UpstreamCodeError(f"{self.name} has no function {name}()")

    def module_literal(self, name: str) -> Any:
        """The literal value of a module-level `NAME = <literal>` (the last assignment, as Python reads it)."""
        value = None
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                value = node.value
        if value is None:
            raise UpstreamCodeError(f"{self.name} has no module-level {name}")
        try:
            return ast.literal_eval(value)
        except ValueError:
            raise UpstreamCodeError(f"{self.name}: {name} is not a literal") from None


def _assignments(scope: ast.AST, name: str, *, augmented: bool = False) -> list[ast.expr]:
    found: list[ast.expr] = []
    for node in ast.walk(scope):
        if augmented and isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            if isinstance(node.target, ast.Name) and node.target.id == name:
                found.append(node.value)
        elif not augmented and isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id == name:
                found.append(node.value)
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def only_expression(scope: ast.AST, name: str, *, augmented: bool = False, where: str = "") -> ast.expr:
    """The expression assigned to `name` in `scope` (`name += ...` when augmented). Where upstream writes the same
    assignment more than once (e.g. once when resuming, once in the loop), every copy must be the same."""
    found = _assignments(scope, name, augmented=augmented)
    if not found:
        raise UpstreamCodeError(f"{where or 'upstream'}: no assignment to {name}")
    if len({ast.dump(node) for node in found}) != 1:
        raise UpstreamCodeError(f"{where or 'upstream'}: the assignments to {name} differ")
    return found[0]


def appended(scope: ast.AST, list_name: str) -> list[ast.expr]:
    """The arguments of every `list_name.append(x)` in `scope`, in source order."""
    calls = [
        node
        for node in ast.walk(scope)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "append"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == list_name
        and len(node.args) == 1
    ]
    return [call.args[0] for call in sorted(calls, key=lambda n: (n.lineno, n.col_offset))]


def subscript_assignment_content(scope: ast.AST, list_name: str, *, where: str = "") -> ast.expr:
    """The "content" value of `list_name[-1] = {**..., "content": <expr>}` (the user agent's last message).
    Every copy of the assignment in `scope` must be the same."""
    found: list[ast.expr] = []
    for node in ast.walk(scope):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Dict)):
            continue
        target = node.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == list_name:
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "content":
                    found.append(value)
    if not found or len({ast.dump(node) for node in found}) != 1:
        raise UpstreamCodeError(f"{where or 'upstream'}: no single {list_name}[-1] content expression")
    return found[0]


def function_default(function: ast.FunctionDef, parameter: str) -> Any:
    """The literal default of a function's parameter."""
    positional = function.args.args
    defaults: Sequence[ast.expr | None] = [None] * (len(positional) - len(function.args.defaults)) + list(
        function.args.defaults
    )
    pairs = [
        *zip(positional, defaults, strict=True),
        *zip(function.args.kwonlyargs, function.args.kw_defaults, strict=True),
    ]
    for argument, default in pairs:
        if argument.arg == parameter and default is not None:
            return ast.literal_eval(default)
    raise UpstreamCodeError(f"{function.name}() has no default for {parameter}")
