"""The CLI reference page (docs/cli.md), generated from the CLI itself: every command, argument and option with its
help and default, as `empathybench --help` knows them. tests/test_docs.py fails when the page drifts.

    python -m empathybench.cli_reference > docs/cli.md
"""

from typing import Any

import typer.main

HEADER = """# CLI reference

Generated from the CLI itself (`python -m empathybench.cli_reference > docs/cli.md`; a test fails when it drifts).
Every command also prints this with `--help`.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\\\|")


# typer's command objects are read by their attributes (typer vendors its own click).


def _is_argument(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


def _default(param: Any) -> str:
    if param.default is None or param.default == () or _is_argument(param):
        return ""
    if getattr(param, "is_flag", False):
        return "on" if param.default else "off"
    return f"`{param.default}`"


def _command(path: str, command: Any, lines: list[str]) -> None:
    if getattr(command, "hidden", False):
        return
    lines += [f"## `{path}`", ""]
    help_text = (command.help or "").strip()
    if help_text:
        lines += [help_text, ""]
    rows = []
    for param in command.params:
        if getattr(param, "hidden", False) or "--help" in param.opts:
            continue
        names = ", ".join(f"`{name}`" for name in (*param.opts, *getattr(param, "secondary_opts", ())))
        if _is_argument(param):
            names = f"`{(param.metavar or param.name or '').upper()}`"
        rows.append(f"| {names} | {_cell(getattr(param, 'help', None) or '')} | {_default(param)} |")
    if rows:
        lines += ["| argument / option | meaning | default |", "|---|---|---|", *rows, ""]
    if getattr(command, "commands", None):
        for name in sorted(command.commands):
            _command(f"{path} {name}", command.commands[name], lines)


def cli_reference() -> str:
    """docs/cli.md as it should be for this CLI."""
    from empathybench.cli import app

    lines = [HEADER]
    _command("empathybench", typer.main.get_command(app), lines)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(cli_reference(), end="")
