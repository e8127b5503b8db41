"""EmoBench stays one movable folder: it imports only shared layers, and nothing outside the folder imports it
(the CLI finds its rescore command through the registry)."""

import ast
from pathlib import Path

import empathybench

PACKAGE = Path(empathybench.__file__).resolve().parent
FOLDER = PACKAGE / "instruments" / "emobench"
ALLOWED = (
    "empathybench.instruments.emobench",
    "empathybench.instruments.protocol",
    "empathybench.instruments.support",
    "empathybench.data",
    "empathybench.engine.engine",
    "empathybench.models.base",
    "empathybench.stats",
    "empathybench.errors",
    "empathybench.formatting",
)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_folder_imports_only_shared_layers() -> None:
    for path in FOLDER.glob("*.py"):
        project = {name for name in _imports(path) if name.startswith("empathybench")}
        assert all(name.startswith(ALLOWED) for name in project), (path.name, project)


def test_nothing_outside_the_folder_imports_it() -> None:
    users = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if FOLDER not in path.parents
        and any(name.startswith("empathybench.instruments.emobench") for name in _imports(path))
    }
    assert users == set()  # the entry point in pyproject.toml is the only link
