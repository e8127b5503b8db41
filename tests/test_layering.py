"""The package's import graph keeps its layers: every import points down (or sideways), and there is no circle.

    L7 cli, testing, __main__,       L4 instruments (protocol, support, registry, <name>/)
       inspect_bridge
    L6 run (orchestration), atlas    L3 engine, rundir (the run-directory format: one writer, one reader)
    L5 report                        L2 models, data, stats, schema        L1 paths, errors, redaction, formatting

Imports inside functions count (a lazy import is still an arrow). `ALLOWED_FOR_NOW` names the arrows that the
migration of the remaining instruments (issue 12, step B/C) removes; an entry that no longer occurs fails the test,
so the list only shrinks.
"""

import ast
from collections import defaultdict
from pathlib import Path

import empathybench

PACKAGE = Path(empathybench.__file__).resolve().parent
LAYERS = {
    "cli": 7,
    "__main__": 7,
    "testing": 7,
    "inspect_bridge": 7,  # the inspect_ai entry point: above run/, the only importer of inspect_ai
    "cli_reference": 7,  # docs/cli.md from the CLI
    "cli_commands": 7,  # what each command does, behind its definition in cli.py
    "cli_options": 7,  # the options several commands share
    "run": 6,
    "report": 5,
    "judges": 6,  # judge evidence: released ratings of judges and people, recomputed; beside atlas/
    "atlas": 6,  # published models recomputed from released outputs; draws with report/; asked by run/ and the CLI
    "instruments": 4,
    "engine": 3,
    "rundir": 3,
    "models": 2,
    "data": 2,
    "stats": 2,
    "schema": 2,
    "paths": 1,
    "errors": 1,
    "redaction": 1,
    "formatting": 1,
    "version": 1,
}

# (importing module, imported module): arrows that point up today; each goes away with a later step.
ALLOWED_FOR_NOW: set[tuple[str, str]] = set()  # empty: the plausible <-> scripted circle went with step A


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import of the package in `path`, relative ones resolved, lazy ones included."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from empathybench.x import y` may import the submodule y: count it when it is one.
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if _is_module(candidate):
                    found.append((node.lineno, candidate))
                else:
                    found.append((node.lineno, target))
    return [(line, name) for line, name in found if name == "empathybench" or name.startswith("empathybench.")]


def _is_module(name: str) -> bool:
    relative = Path(*name.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative / "__init__.py").is_file()


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package's own __init__ (its version string): below everything
    return LAYERS[parts[1]]


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in _sources():
        source = _module_name(path)
        graph[source]
        for _, target in _imports(path):
            if target != source and target != "empathybench":
                graph[source].add(target)
    return graph


def test_every_top_level_part_has_a_layer() -> None:
    tops = {_module_name(p).split(".")[1] for p in _sources() if _module_name(p) != "empathybench"}
    assert tops <= set(LAYERS), f"give these a layer in LAYERS: {sorted(tops - set(LAYERS))}"


def test_imports_point_down() -> None:
    upward: list[str] = []
    used_exceptions: set[tuple[str, str]] = set()
    for path in _sources():
        source = _module_name(path)
        for line, target in _imports(path):
            source_layer, target_layer = _layer(source), _layer(target)
            if source_layer is None or target_layer is None or target_layer <= source_layer:
                continue
            if (source, target) in ALLOWED_FOR_NOW:
                used_exceptions.add((source, target))
                continue
            where = f"{path.relative_to(PACKAGE)}:{line}"
            upward.append(f"{where} {source} (L{source_layer}) -> {target} (L{target_layer})")
    assert not upward, "imports that point up:\n" + "\n".join(upward)
    stale = {pair for pair in ALLOWED_FOR_NOW if pair not in used_exceptions and pair not in _circle_exceptions()}
    assert not stale, f"remove from ALLOWED_FOR_NOW, they no longer occur: {sorted(stale)}"


def _circle_exceptions() -> set[tuple[str, str]]:
    return {pair for pair in ALLOWED_FOR_NOW if _layer(pair[0]) == _layer(pair[1])}


def test_instruments_stay_in_their_folder() -> None:
    """An instrument imports its own folder, the shared protocol, support, conversation runner and comparability
    check, and the layers below; never another instrument, never the registry."""
    shared_names = ("protocol", "support", "bounds", "conversation", "comparability")
    shared = tuple(f"empathybench.instruments.{name}" for name in shared_names)
    crossing: list[str] = []
    for path in (PACKAGE / "instruments").rglob("*.py"):
        source = _module_name(path)
        parts = source.split(".")
        if len(parts) < 3 or parts[2] in (*shared_names, "registry"):
            continue  # the shared modules themselves
        own = ".".join(parts[:3])
        for line, target in _imports(path):
            if not target.startswith("empathybench.instruments") or target.startswith(own):
                continue
            if target.startswith(shared):
                continue
            crossing.append(f"{path.relative_to(PACKAGE)}:{line} {source} -> {target}")
    assert not crossing, "\n".join(crossing)


def test_no_import_circle() -> None:
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    allowed = _circle_exceptions()
    real = [c for c in circles if not all((a, b) in allowed or (b, a) in allowed for a in c for b in c if a != b)]
    assert not real, f"import circles: {real}"
    in_circles = {(a, b) for c in circles for a in c for b in c if a != b}
    stale = allowed - in_circles
    assert not stale, f"remove from ALLOWED_FOR_NOW, these circles are gone: {sorted(stale)}"


def test_only_the_inspect_bridge_imports_inspect_ai() -> None:
    """inspect_ai is an optional extra: nothing but inspect_bridge/ imports it (so --help and a run stay as fast)."""
    importing: list[str] = []
    for path in _sources():
        if "inspect_bridge" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            if any(name == "inspect_ai" or name.startswith("inspect_ai.") for name in names):
                importing.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not importing, "\n".join(importing)


def test_report_reads_run_directories_only_through_the_reader() -> None:
    """report/ renders what a run wrote; it reads run directories through rundir.reader and never imports the
    orchestrator (run/) or the writer."""
    wrong: list[str] = []
    for path in (PACKAGE / "report").rglob("*.py"):
        for line, target in _imports(path):
            if target.startswith(("empathybench.run.", "empathybench.rundir.store")) or target == "empathybench.run":
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} -> {target}")
    assert not wrong, "\n".join(wrong)


def _instrument_names() -> set[str]:
    from empathybench.instruments import registry

    # The built-in instruments; a plugin's name (e.g. examples/plugin's "example") is no word the core may not use.
    folders = {p.parent.name for p in (PACKAGE / "instruments").glob("*/__init__.py")}
    return set(registry.BUILTIN_ENTRY_POINTS) | folders


# Files outside instruments/ that still name an instrument, and which names: each entry goes away when that
# instrument's table entry, branch or command moves into its folder (issue 12 steps B and C). An entry that no
# longer names anything fails the test, so the list only shrinks.
NAMED_FOR_NOW: dict[str, set[str]] = {}


def _named(path: Path, names: set[str]) -> dict[str, list[int]]:
    """Instrument names in the code of `path` (names and strings; comments and docstrings do not count)."""
    import io
    import re
    import tokenize

    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")\b")
    source = path.read_text("utf-8")
    docstrings = {
        node.body[0].value.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
        and isinstance(node.body[0].value.value, str)
    }
    found: dict[str, list[int]] = defaultdict(list)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in (tokenize.NAME, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)):
            continue
        if token.type == tokenize.STRING and token.start[0] in docstrings:
            continue
        for match in pattern.finditer(token.string):
            found[match.group(1)].append(token.start[0])
    return found


def test_no_instrument_named_outside_instruments() -> None:
    names = _instrument_names()
    unexpected: list[str] = []
    stale: list[str] = []
    for path in _sources():
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("instruments/"):
            continue
        found = _named(path, names)
        allowed = NAMED_FOR_NOW.get(relative, set())
        unexpected += [f"{relative}:{found[n][0]} names {n!r}" for n in sorted(set(found) - allowed)]
        stale += [f"{relative} no longer names {n!r}" for n in sorted(allowed - set(found))]
    assert not unexpected, "\n".join(unexpected)
    assert not stale, "shrink NAMED_FOR_NOW:\n" + "\n".join(stale)
