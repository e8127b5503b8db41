"""EQ-Bench 3 data: the pinned upstream files and their parsers (specs/eqbench3.md §1-2).

The pins (repository, commit, path, sha256, git blob sha1) live beside this module in `pins.json`; the content is
fetched at run time through the project's fetch code (`EMPATHYBENCH_MIRROR` for the offline mirror). Nothing of
the upstream text is kept in this package.
"""

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

from empathybench.data.fetch import fetch_pinned
from empathybench.data.registry import DataFile, load_pins

log = logging.getLogger(__name__)

PINNED_COMMIT = "3c21bcc514bd43f93a00a5cf9c630aa3eb73a380"
ELO_RESULTS_FILE = "canonical_leaderboard_elo_results.json.gz"  # pinned at 8c3a125, the only commit that has it

ParseMode = Literal["upstream", "all"]


class TaskType(StrEnum):
    ROLEPLAY = "roleplay"
    DRAFTING = "drafting"
    ANALYSIS = "analysis"


# Hard-coded id sets of the pinned commit (spec §1): drafting is configured for 201-209 (only 208 exists),
# analysis for 401-420. The "no role-play framing" set {8, 10, 12, 14} matches no scenario and is not modelled.
DRAFTING_IDS = frozenset(str(i) for i in range(201, 210))
ANALYSIS_IDS = frozenset(str(i) for i in range(401, 421))
NO_NOTE = "[No scenario notes available]"


def task_type(scenario_id: str) -> TaskType:
    if scenario_id in ANALYSIS_IDS:
        return TaskType.ANALYSIS
    if scenario_id in DRAFTING_IDS:
        return TaskType.DRAFTING
    return TaskType.ROLEPLAY


def pins() -> Mapping[str, DataFile]:
    """The instrument's pinned files (its pins.json), keyed `eqbench3/<file name>`."""
    return load_pins(__package__)


def fetch_path(name: str, *, allow_unverified: bool = False) -> Path:
    """A verified local copy of the pinned file `name` (e.g. "scenario_prompts.txt")."""
    return fetch_pinned(__package__, f"eqbench3/{name}", allow_unverified=allow_unverified).path


def read_text(name: str) -> str:
    """The pinned file's text, bytes kept as they are (none of the files ends with a newline, spec §2)."""
    return fetch_path(name).read_bytes().decode("utf-8")


@dataclass(frozen=True)
class Scenario:
    scenario_id: str
    title: str  # "category | title" from the header, for display only
    turns: tuple[str, ...]

    @property
    def type(self) -> TaskType:
        return task_type(self.scenario_id)


_HEADER = re.compile(r"^########\s*(\S+)")
_PROMPT_UPSTREAM = re.compile(r"^#######\s*Prompt(\d+)")
# "all" also takes the delimiter written without the word Prompt (block 409 uses `####### 1`).
_PROMPT_ALL = re.compile(r"^#######\s*(?:Prompt)?(\d+)")


def parse_scenarios(text: str, mode: ParseMode = "upstream") -> dict[str, Scenario]:
    """Scenario blocks of `scenario_prompts.txt` by the grammar of spec §2, in file order of first appearance."""
    delimiter = _PROMPT_UPSTREAM if mode == "upstream" else _PROMPT_ALL
    scenarios: dict[str, Scenario] = {}
    current_id: str | None = None
    current_title = ""
    turns: list[str] = []
    lines: list[str] | None = None  # None: not inside a prompt

    def close_turn() -> None:
        if lines is not None:
            turn = "\n".join(lines).strip()
            if turn:
                turns.append(turn)

    def close_scenario() -> None:
        if current_id is not None and turns:
            scenarios[current_id] = Scenario(current_id, current_title, tuple(turns))

    # Split on "\n" only, as reading the file line by line does (str.splitlines also splits on \x0c, \u2028...).
    for raw_line in text.split("\n"):
        raw_line = raw_line.rstrip("\r")
        line = raw_line.strip()
        header = _HEADER.match(line)
        if header:  # tested before the delimiter: a header also begins with 7 hashes
            close_turn()
            close_scenario()
            current_id = header.group(1)
            current_title = " | ".join(part.strip() for part in line.split("|")[1:])
            turns, lines = [], None
            continue
        if delimiter.match(line):
            if current_id is None:
                continue
            close_turn()
            lines = []
            continue
        if current_id is not None and lines is not None:
            lines.append(raw_line)
    close_turn()
    close_scenario()
    return scenarios


def load_scenarios(mode: ParseMode = "upstream") -> dict[str, Scenario]:
    """The pinned scenarios; warns when the two parse modes differ, naming the scenarios that differ."""
    text = read_text("scenario_prompts.txt")
    upstream = parse_scenarios(text, "upstream")
    everything = parse_scenarios(text, "all")
    differing = sorted(set(upstream) ^ set(everything)) + sorted(
        sid for sid in set(upstream) & set(everything) if upstream[sid].turns != everything[sid].turns
    )
    if differing:
        log.warning(
            "scenario_prompts.txt: the upstream parser gives %d scenarios, the lenient one %d (differ: %s); "
            "using parse mode %r",
            len(upstream),
            len(everything),
            ", ".join(differing),
            mode,
        )
    return upstream if mode == "upstream" else everything


def parse_notes(text: str) -> dict[str, str]:
    """`scenario_notes.txt`: a line starting "# " opens a note; id = that line stripped of '#', ' ', newline."""
    notes: dict[str, str] = {}
    current: str | None = None
    body: list[str] = []
    lines = text.split("\n")
    if lines and lines[-1] == "":  # a final newline ends the last line, it opens no new one
        lines.pop()
    for line in lines:
        if line.startswith("# "):
            if current is not None and body:
                notes[current] = "\n".join(body).strip()
            current, body = line.strip("# \n"), []
        elif current is not None:
            body.append(line.rstrip("\n"))
    if current is not None and body:
        notes[current] = "\n".join(body).strip()
    return notes


def parse_criteria(text: str) -> list[str]:
    """One criterion per line; blank lines and lines starting with '#' are skipped."""
    return [line.strip() for line in text.split("\n") if line.strip() and not line.strip().startswith("#")]


@dataclass(frozen=True)
class Protocol:
    """Everything a run needs from the pinned files, loaded once."""

    scenarios: dict[str, Scenario]
    notes: dict[str, str]
    master_roleplay: str
    master_drafting: str
    master_analysis: str
    debrief: str
    rubric_prompt: str
    rubric_prompt_analysis: str
    criteria: list[str]
    criteria_analysis: list[str]
    pairwise_prompt: str
    pairwise_prompt_analysis: str

    def master(self, kind: TaskType) -> str:
        return {
            TaskType.ROLEPLAY: self.master_roleplay,
            TaskType.DRAFTING: self.master_drafting,
            TaskType.ANALYSIS: self.master_analysis,
        }[kind]

    def note(self, scenario_id: str) -> str:
        return self.notes.get(scenario_id, NO_NOTE)


def load_protocol(mode: ParseMode = "upstream") -> Protocol:
    return Protocol(
        scenarios=load_scenarios(mode),
        notes=parse_notes(read_text("scenario_notes.txt")),
        master_roleplay=read_text("scenario_master_prompt.txt"),
        master_drafting=read_text("scenario_master_prompt_message_drafting.txt"),
        master_analysis=read_text("scenario_master_prompt_analysis.txt"),
        debrief=read_text("debrief_prompt.txt"),
        rubric_prompt=read_text("rubric_scoring_prompt.txt"),
        rubric_prompt_analysis=read_text("rubric_scoring_prompt_analysis.txt"),
        criteria=parse_criteria(read_text("rubric_scoring_criteria.txt")),
        criteria_analysis=parse_criteria(read_text("rubric_scoring_criteria_analysis.txt")),
        pairwise_prompt=read_text("pairwise_prompt_eqbench3.txt"),
        pairwise_prompt_analysis=read_text("pairwise_prompt_eqbench3_analysis.txt"),
    )
