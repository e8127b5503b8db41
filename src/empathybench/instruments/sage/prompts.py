"""SAGE's three requests, built as the upstream code builds them (the templates come from data.UpstreamProtocol).

The order of the `str.replace` calls is upstream's (simulator_response.py planning_reply / player_reply): a text
inserted early is itself searched by the later replacements, as upstream's is. `tests/test_sage_prompts.py` runs
the pinned upstream functions on the same conversation and compares their prompts with these byte for byte.

Upstream quirk (kept): planning_reply fills {{target}} with `target_prompt`, then calls
`prompt.replace("{{target}}", target_prompt[player_data["target"]])`, which raises as released (the player has no
"target" and target_prompt is a string) and otherwise replaces nothing, {{target}} being gone: the prompt is the one
the first replacement gives.
"""

import json
from collections.abc import Mapping, Sequence

from empathybench.instruments.sage.data import Person, UpstreamProtocol

# (upstream role, text) of the dialogue so far: "user" is the person, "assistant" the model under test
HistoryEntry = tuple[str, str]


def dumped_history(protocol: UpstreamProtocol, history: Sequence[HistoryEntry]) -> str:
    """The dialogue as upstream puts it into a prompt: a JSON list of {role, content}, roles renamed ("你", "NPC")."""
    entries = [{"role": protocol.history_roles[role], "content": content} for role, content in history]
    return json.dumps(entries, ensure_ascii=False, indent=2)


def analysis_prompt(protocol: UpstreamProtocol, person: Person, emotion: int, history: Sequence[HistoryEntry]) -> str:
    """planning_reply's prompt: the emotion analyser, given the emotion before the model's last reply."""
    prompt = (
        protocol.analysis_template.replace("{{emotion}}", str(emotion))
        .replace("{{simulator_role}}", person.player)
        .replace("{{simulator_scene}}", person.scene)
        .replace("{{target}}", protocol.target)
    )
    return prompt.replace("{{dialog_history}}", dumped_history(protocol, history))


def planning_text(protocol: UpstreamProtocol, planning: Mapping[str, object]) -> str:
    """player_reply's {{planning}} text from the analysis (upstream's `planning` dict)."""
    return "".join(value if kind == "text" else str(planning[value]) for kind, value in protocol.planning_parts)


def reply_prompt(
    protocol: UpstreamProtocol,
    person: Person,
    state: str,
    history: Sequence[HistoryEntry],
    planning: Mapping[str, object],
) -> str:
    """player_reply's prompt: the actor who answers in character, given the analysis and the state after it."""
    prompt = protocol.reply_template.replace("{{planning}}", planning_text(protocol, planning))
    prompt = (
        prompt.replace("{{target}}", protocol.target)
        .replace("{{emotion}}", state)
        .replace("{{player_type}}", person.player)
        .replace("{{player_topic}}", person.scene)
    )
    earlier, latest = dumped_history(protocol, history[:-2]), dumped_history(protocol, history[-2:])
    return prompt.replace("{{dialog_history}}", earlier).replace("{{new_history}}", latest)
