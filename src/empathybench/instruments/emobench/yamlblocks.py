"""Read the two upstream YAML prompt files without a YAML dependency.

They use one shape only: top-level keys holding `<lang>: |` (literal) or `<lang>: >` (folded) block scalars with the
default "clip" chomping. This reader implements exactly that shape by the YAML 1.1 rules that matter for
byte-identical prompts (kept trailing spaces, folded line joins, no final line break when the file ends without one)
and refuses anything else. Tests compare it with PyYAML when PyYAML is installed and with the spec's prompt hashes.
"""

import re

from empathybench.errors import DataError

_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*):[ \t]*$")
_BLOCK_KEY = re.compile(r"^( +)([A-Za-z_][\w-]*):[ \t]*([|>])[ \t]*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _fold(lines: list[str]) -> str:
    """Folded-scalar line joining: a break between two text lines becomes a space; blank lines stay breaks."""
    out = ""
    pending_blank = 0
    for index, line in enumerate(lines):
        if line == "":
            pending_blank += 1
            continue
        if index > 0:
            out += "\n" * pending_blank if pending_blank else " "
        pending_blank = 0
        out += line
    return out


def parse_block_yaml(text: str, source: str) -> dict[str, dict[str, str]]:
    """`{top_key: {sub_key: value}}` for a file made only of two-level block scalars."""
    ends_with_break = text.endswith("\n")
    lines = text.split("\n")
    if ends_with_break:
        lines.pop()
    result: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.strip() == "" or (line.lstrip().startswith("#") and _indent(line) == 0):
            index += 1
            continue
        top = _TOP_KEY.match(line)
        if top:
            current = result.setdefault(top.group(1), {})
            index += 1
            continue
        block = _BLOCK_KEY.match(line)
        if not block or current is None:
            raise DataError(f"{source} line {index + 1}: not the block-scalar YAML this reader supports")
        parent_indent, key, style = len(block.group(1)), block.group(2), block.group(3)
        index += 1
        body: list[str] = []
        while index < len(lines) and (lines[index].strip() == "" or _indent(lines[index]) > parent_indent):
            body.append(lines[index])
            index += 1
        content_lines = [entry for entry in body if entry.strip()]
        if not content_lines:
            current[key] = ""
            continue
        indent = _indent(content_lines[0])
        texts = [entry[indent:] if len(entry) > indent else "" for entry in body]
        while texts and texts[-1] == "":
            texts.pop()  # clip chomping drops trailing blank lines
        # Clip keeps one final break unless the text ran to the end of a file that has no final newline.
        last_line_is_file_end = index >= len(lines) and not ends_with_break and body[-1].strip() != ""
        value = "\n".join(texts) if style == "|" else _fold(texts)
        current[key] = value if last_line_is_file_end else value + "\n"
    return result
