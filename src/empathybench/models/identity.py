"""One model identity table: which published names are the same checkpoint, which only the same family.

The table (`atlas/models.json`, shipped with the package) lists each checkpoint once under a canonical id, with every
name it was published under and where that name comes from; a checkpoint belongs to a family (e.g. gpt-4o), and
two checkpoints of one family (gpt-4o-2024-05-13, gpt-4o-2024-08-06) are never the same model. Dropping a date
merges distinct checkpoints, so matching never guesses one: a name matches an alias exactly (case, punctuation and
a backend or organisation prefix aside), or a family by its name, or nothing.

It lives here, below the instruments, because the atlas (which builds on the instruments) and the instruments' own
labels (is this the published simulator, the published judge?) both ask it; the table file stays beside the atlas,
read as package data, so nothing of atlas/ is imported.
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Literal

TABLE_FILE = ("atlas", "models.json")  # inside the package
# `empathybench run -m openai/<model>`: the backend prefix says how the model was reached, not which it is.
BACKEND_PREFIXES = ("openai/", "anthropic/", "llamacpp/", "scripted/", "inspect/")
MAX_NAME_CHARS = 300  # a model name longer than this is not one
_PUNCTUATION = re.compile(r"[\s_.\-:]+")
# A llama.cpp GGUF file's name: the weights' base name, then its quantisation (TheBloke's "llama-2-70b-chat.Q4_K_M",
# "model-q4_k_m", llama.cpp's "F16"), a split suffix, ".gguf". The quantisation is a setting of the run, not the model.
_GGUF_FILE = re.compile(
    r"(?i)^(?P<base>.+?)(?:[.\-_](?:i?q\d+(?:_[a-z0-9]+)*|bf16|f16|f32))?(?:-\d{5}-of-\d{5})?\.gguf$"
)

Relation = Literal["same checkpoint", "same family"]


@dataclass(frozen=True)
class Alias:
    name: str
    source: str
    # The instrument whose published name this is, when the same name means another checkpoint elsewhere (e.g.
    # SAGE's "Gemini2.5-Pro" is the March preview, Spiral-Bench's "gemini-2.5-pro" the June model): it then resolves
    # that instrument's atlas entries only, never a user's run.
    instrument: str | None = None
    # Which source decided the checkpoint, where the name alone does not: upstream's own name map, or for a moving
    # name (gpt-3.5-turbo, chatgpt-4o-latest) the run's date and the provider's alias history. Shown with the match.
    decided_by: str | None = None


@dataclass(frozen=True)
class ModelIdentity:
    id: str  # canonical: one checkpoint
    family: str  # canonical family id
    aliases: tuple[Alias, ...]


@dataclass(frozen=True)
class Match:
    """What a model name is in the table: a checkpoint (`id`) or only a family (`id` None); `alias` None when the
    name was the checkpoint's canonical id."""

    relation: Relation
    family: str
    id: str | None = None
    alias: Alias | None = None


@dataclass(frozen=True)
class IdentityTable:
    models: Mapping[str, ModelIdentity]
    families: Mapping[str, str]  # family id -> its display name
    # (scope, normalised alias) -> (model id, alias), scope "" or an instrument; and the same keyed by the alias
    # without its organisation, where that short name is unambiguous in its scope
    _full: dict[tuple[str, str], tuple[str, Alias]] = field(init=False, repr=False, compare=False)
    _short: dict[tuple[str, str], tuple[str, Alias]] = field(init=False, repr=False, compare=False)
    _ids: dict[str, str] = field(init=False, repr=False, compare=False)  # normalised id -> id
    _scoped_family: dict[str, str] = field(init=False, repr=False, compare=False)  # normalised name -> family

    def __post_init__(self) -> None:
        full: dict[tuple[str, str], tuple[str, Alias]] = {}
        short: dict[tuple[str, str], list[tuple[str, Alias]]] = {}
        family_names = {normalise(family) for family in self.families}
        for model in self.models.values():
            for alias in model.aliases:
                scope = alias.instrument or ""
                full[(scope, normalise(alias.name))] = (model.id, alias)
                key = normalise(alias.name.rsplit("/", 1)[-1])
                if not scope and key in family_names and key != normalise(model.id):
                    # without its organisation the name is the family's (`DeepSeek-V3` of `deepseek-ai/DeepSeek-V3`),
                    # a moving name: for a user's run only the alias's own spelling decides (an instrument's scoped
                    # names are decided by its own map)
                    continue
                short.setdefault((scope, key), []).append((model.id, alias))
        unique = {key: found[0] for key, found in short.items() if len({model_id for model_id, _ in found}) == 1}
        # A canonical id names its checkpoint too (the atlas shows it, e.g. SAGE's simulator deepseek-v3-2024-12-26),
        # after every alias: an alias spelled like another checkpoint's id keeps its own meaning.
        ids = {normalise(model.id): model.id for model in self.models.values()}
        # a name only instruments' scoped aliases know (`chatgpt-4o-latest`, SAGE's `Gemini2.5-Pro`) is, in a user's
        # run, its family's, where every scope's checkpoint is of one family
        scoped: dict[str, set[str]] = {}
        for (scope, key), (model_id, _) in full.items():
            if scope:
                scoped.setdefault(key, set()).add(self.models[model_id].family)
        object.__setattr__(
            self, "_scoped_family", {key: found.pop() for key, found in scoped.items() if len(found) == 1}
        )
        object.__setattr__(self, "_full", full)
        object.__setattr__(self, "_short", unique)
        object.__setattr__(self, "_ids", ids)

    def match(self, spec: str, *, instrument: str | None = None) -> Match | None:
        """The checkpoint or family a model name or run spec names (`openai/gpt-4o-2024-08-06`, `gpt-4o-0808`,
        `Qwen/Qwen-72B-Chat`), or None. `instrument`: the name is that instrument's published name (its scoped
        aliases first)."""
        given = spec.strip()[:MAX_NAME_CHARS]
        name = given
        for prefix in BACKEND_PREFIXES:
            if name.lower().startswith(prefix):
                name = name[len(prefix) :]
                break
        base = gguf_base_name(name)
        if base is not None:  # a GGUF file (`llamacpp/models/llama-2-70b-chat.Q4_K_M.gguf`): its weights' name
            given = name = base
        keys = ((normalise(given), self._full), (normalise(name), self._full))
        short = ((normalise(name.rsplit("/", 1)[-1]), self._short),)
        scopes = ([instrument] if instrument else []) + [""]
        for scope in scopes:
            for key, index in (*keys, *short):
                found = index.get((scope, key))
                if found is not None:
                    model = self.models[found[0]]
                    return Match("same checkpoint", model.family, model.id, found[1])
        for key in (normalise(given), normalise(name)):
            if key in self._ids:
                model = self.models[self._ids[key]]
                return Match("same checkpoint", model.family, model.id)
        for key in (normalise(given), normalise(name)):
            if key in self._scoped_family:
                return Match("same family", self._scoped_family[key])
        family_key = normalise(name.rsplit("/", 1)[-1])
        for family in self.families:
            if normalise(family) == family_key:
                return Match("same family", family)
        return None

    def family_of(self, model_id: str) -> str:
        return self.models[model_id].family


def gguf_base_name(name: str) -> str | None:
    """The weights' name a GGUF file's name states (its folder, quantisation and `.gguf` removed:
    `models/llama-2-70b-chat.Q4_K_M.gguf` is `llama-2-70b-chat`), or None for a name that is no GGUF file."""
    found = _GGUF_FILE.match(name.strip().replace("\\", "/").rsplit("/", 1)[-1])
    return found.group("base") if found else None


def normalise(name: str) -> str:
    """A name as compared: lower case, without spaces, dots, dashes, underscores and colons."""
    return _PUNCTUATION.sub("", name.lower())


def parse_table(raw: object) -> IdentityTable:
    """The table from its JSON (`{"families": {id: name}, "models": [{"id", "family", "aliases": [{"name",
    "source"}]}]}`); a malformed one is a ValueError naming what is wrong."""
    if (
        not isinstance(raw, dict)
        or not isinstance(raw.get("models"), list)
        or not isinstance(raw.get("families"), dict)
    ):
        raise ValueError("a model identity table is an object with 'families' and 'models'")
    families = {str(key): str(value) for key, value in raw["families"].items()}
    models: dict[str, ModelIdentity] = {}
    for row in raw["models"]:
        model_id, family = str(row["id"]), str(row["family"])
        if model_id in models:
            raise ValueError(f"model id {model_id!r} is listed twice")
        if family not in families:
            raise ValueError(f"model {model_id!r} names an unknown family {family!r}")
        aliases = tuple(
            Alias(
                str(a["name"]),
                str(a["source"]),
                str(a["instrument"]) if a.get("instrument") else None,
                str(a["decided_by"]) if a.get("decided_by") else None,
            )
            for a in row["aliases"]
        )
        models[model_id] = ModelIdentity(model_id, family, aliases)
    return IdentityTable(models, families)


def name_map_disagreements(table: IdentityTable, instrument: str, name_map: Mapping[str, str]) -> list[str]:
    """Where the table disagrees with an upstream's own name map (its run name -> its leaderboard name): a name or
    target it does not resolve to a checkpoint, a name resolved to another checkpoint than its target's, or two
    distinct targets resolved to one checkpoint. Read as `instrument`'s names (its scoped aliases first)."""
    problems: list[str] = []
    target_of_id: dict[str, str] = {}
    for name, target in sorted(name_map.items()):
        found, wanted = table.match(name, instrument=instrument), table.match(target, instrument=instrument)
        if found is None or found.id is None or wanted is None or wanted.id is None:
            problems.append(f"{name!r} -> {target!r}: not both resolved to a checkpoint")
            continue
        if found.id != wanted.id:
            problems.append(f"{name!r} is {found.id}, but its target {target!r} is {wanted.id}")
        earlier = target_of_id.setdefault(wanted.id, target)
        if normalise(earlier) != normalise(target):
            problems.append(f"targets {earlier!r} and {target!r} are distinct, but both are {wanted.id}")
    return problems


@cache
def identity_table() -> IdentityTable:
    """The table that ships with the package."""
    text = resources.files("empathybench").joinpath(*TABLE_FILE).read_text("utf-8")
    return parse_table(json.loads(text))
