"""MindEval's upstream files: the pins (pins.json), the 50 profiles, the prompt templates and the human annotations.

Nothing of MindEval's content is in this repository. The templates are read at run time from the fetched upstream
`mindeval/prompts.py` and `mindeval/judge_prompts.py` with `ast` (never executed): each `NAME = Template(literal)`
gives its string, each `*_VERSION_DICT` maps versions to those names (specs/mindeval.md section 2). They are rendered
with `string.Template.substitute`, as upstream does (a missing key raises, extra keys are ignored).
"""

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

from empathybench.data.fetch import FetchedFile, fetch_pinned
from empathybench.errors import DataError, UserError
from empathybench.instruments.support import jsonl_records, read_text_argument

_ROOT = "mindeval/"
PROFILES_KEY = _ROOT + "data/profiles.jsonl"
ANNOTATIONS_KEY = _ROOT + "data/human_annotations.jsonl"
PROMPTS_KEY = _ROOT + "mindeval/prompts.py"
JUDGE_PROMPTS_KEY = _ROOT + "mindeval/judge_prompts.py"
INTERACTIONS_CODE_KEY = _ROOT + "mindeval/scripts/generate_interactions.py"
UTILS_CODE_KEY = _ROOT + "mindeval/utils.py"
RANKING_CODE_KEY = _ROOT + "mindeval/significance_testing.py"
RUN_KEYS = (PROFILES_KEY, PROMPTS_KEY, JUDGE_PROMPTS_KEY)

N_PROFILES = 50
CLINICIAN_VERSIONS = "INTERACTION_CLINICIAN_VERSION_DICT"
MEMBER_VERSIONS = "INTERACTION_MEMBER_VERSION_DICT"
JUDGE_VERSIONS = "JUDGE_PROMPT_TEMPLATE_VERSION_DICT"
PAPER_CLINICIAN_VERSION = "v0_1"  # the paper's setting for general-purpose models (README; spec section 9.1)
PAPER_MEMBER_VERSION = "v0_2"
PAPER_JUDGE_VERSION = "v0_1"

# The profile fields a clinician template may use (README: "only the arguments in MINDEVAL_CLINICIAN_TEMPLATE are
# allowed in any template"; exactly the 18 that v0_1 uses, checked against the fetched template by `load`).
ALLOWED_CLINICIAN_FIELDS = (
    "name",
    "sex",
    "gender_identity",
    "sexual_orientation",
    "age",
    "race",
    "education",
    "profession",
    "employment_status",
    "siblings",
    "relationship_status",
    "living_situation",
    "exercise",
    "sleep_quality",
    "attitude_towards_mindfulness",
    "region",
    "depressive_symptoms",
    "anxious_symptoms",
)
MAX_CUSTOM_TEMPLATE_BYTES = 200_000


# --- templates --------------------------------------------------------------------------------------------------


def read_templates(source: str, name: str) -> dict[str, dict[str, str]]:
    """{version dict name: {version: template text}} of an upstream prompts file (parsed with ast, never run)."""
    try:
        module = ast.parse(source, filename=name)
    except SyntaxError as exc:
        raise DataError(f"{name} is not Python: {exc}") from None
    texts: dict[str, str] = {}
    dicts: dict[str, dict[str, str]] = {}
    for node in module.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        target, value = node.targets[0].id, node.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "Template"
            and len(value.args) == 1
        ):
            text = ast.literal_eval(value.args[0])
            if isinstance(text, str):
                texts[target] = text
        elif isinstance(value, ast.Dict) and target.endswith("_DICT"):
            entries: dict[str, str] = {}
            for key, item in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(item, ast.Name):
                    entries[key.value] = item.id
            dicts[target] = entries
    resolved: dict[str, dict[str, str]] = {}
    for dict_name, entries in dicts.items():
        if any(template not in texts for template in entries.values()):
            continue  # e.g. a plain string (the safety prompts): not a template dict this instrument reads
        resolved[dict_name] = {version: texts[template] for version, template in entries.items()}
    return resolved


def template_fields(text: str) -> list[str]:
    """The identifiers a string.Template uses; an invalid placeholder (e.g. a lone "$") is a UserError."""
    template = Template(text)
    if not template.is_valid():
        raise UserError("the clinician template has an invalid $ placeholder (write $$ for a literal $)")
    return template.get_identifiers()


def check_clinician_template(text: str) -> None:
    """A clinician template may use only the 18 allowed profile fields (upstream's README asks it; we enforce it)."""
    extra = [name for name in template_fields(text) if name not in ALLOWED_CLINICIAN_FIELDS]
    if extra:
        raise UserError(
            f"the clinician template uses {', '.join(extra)}: only these profile fields are allowed "
            f"(as in upstream's v0_1): {', '.join(ALLOWED_CLINICIAN_FIELDS)}"
        )


def read_custom_template(path: str) -> str:
    """A custom clinician template from a file, checked (`--option clinician_template_file=PATH`)."""
    file = Path(path).expanduser()
    text = read_text_argument(file, limit=MAX_CUSTOM_TEMPLATE_BYTES, what="a clinician template")
    if not text.strip():
        raise UserError(f"the clinician template {file} is empty")
    check_clinician_template(text)
    return text


def render(template: str, values: Mapping[str, Any]) -> str:
    """string.Template.substitute as upstream renders (every identifier must have a value)."""
    try:
        return Template(template).substitute(**values)
    except KeyError as exc:
        raise DataError(f"a MindEval template needs {exc.args[0]!r}, which the profile does not have") from None


# --- profiles ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """One simulated member (a line of data/profiles.jsonl)."""

    number: int  # 1-based line number in the pinned file: the item id
    attributes: Mapping[str, Any]  # member_attributes (25 keys)
    narrative: str  # member_narrative

    @property
    def values(self) -> dict[str, Any]:
        """What the templates are rendered with: the attributes and the narrative (generate_interactions.py)."""
        return {**self.attributes, "member_narrative": self.narrative}

    @property
    def severity(self) -> tuple[str, str]:
        return str(self.attributes.get("depressive_symptoms", "")), str(self.attributes.get("anxious_symptoms", ""))


def parse_profiles(text: str, *, source: str = "profiles.jsonl") -> list[Profile]:
    profiles = []
    for number, record in enumerate(jsonl_records(text, source=source), start=1):
        attributes, narrative = record.get("member_attributes"), record.get("member_narrative")
        if not isinstance(attributes, dict) or not isinstance(narrative, str):
            raise DataError(f"{source}: profile {number} has no member_attributes object or member_narrative text")
        profiles.append(Profile(number, dict(attributes), narrative))
    return profiles


# --- what a run reads ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Templates:
    clinician: Mapping[str, str]  # version -> text
    member: Mapping[str, str]
    judge: Mapping[str, str]


def _read(fetched: FetchedFile) -> str:
    return Path(fetched.path).read_text("utf-8")


def parse_templates(prompts_source: str, judge_source: str) -> Templates:
    prompts = read_templates(prompts_source, "mindeval/prompts.py")
    judges = read_templates(judge_source, "mindeval/judge_prompts.py")
    for found, name, where in (
        (prompts, CLINICIAN_VERSIONS, "prompts.py"),
        (prompts, MEMBER_VERSIONS, "prompts.py"),
        (judges, JUDGE_VERSIONS, "judge_prompts.py"),
    ):
        if name not in found:
            raise DataError(f"mindeval/{where} has no {name}")
    templates = Templates(prompts[CLINICIAN_VERSIONS], prompts[MEMBER_VERSIONS], judges[JUDGE_VERSIONS])
    paper_fields = template_fields(templates.clinician.get(PAPER_CLINICIAN_VERSION, ""))
    if sorted(paper_fields) != sorted(ALLOWED_CLINICIAN_FIELDS):
        raise DataError("upstream's v0_1 clinician template does not use exactly the 18 allowed profile fields")
    return templates


def load(*, allow_unverified: bool = False) -> tuple[list[Profile], Templates, list[FetchedFile]]:
    """The profiles and the templates, fetched (or read from the cache) and verified."""
    files = {key: fetch_pinned(__package__, key, allow_unverified=allow_unverified) for key in RUN_KEYS}
    profiles = parse_profiles(_read(files[PROFILES_KEY]))
    if len(profiles) != N_PROFILES:
        raise DataError(f"MindEval's profile file holds {len(profiles)} profiles, not {N_PROFILES}")
    templates = parse_templates(_read(files[PROMPTS_KEY]), _read(files[JUDGE_PROMPTS_KEY]))
    return profiles, templates, list(files.values())


# --- human annotations (judge validation) ------------------------------------------------------------------------

# The criterion fields of the Argilla export behind each judge criterion (spec section 8: recovered by matching the
# judge prompt's five few-shot outputs, rows 55-59); criterion11 is unused. 0s are averaged in as upstream did.
CRITERION_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Clinical Accuracy & Competence", ("criterion_1", "criterion_2")),
    ("Ethical & Professional Conduct", ("criterion_3", "criterion_4")),
    ("Assessment & Response", ("criterion_6", "criterion_7")),
    ("Therapeutic Relationship & Alliance", ("criterion_8", "criterion_9")),
    ("AI-Specific Communication Quality", ("criterion_10",)),
)
FEW_SHOT_ROWS = range(55, 60)  # the judge prompt's own few-shot examples: never rated in a validation


@dataclass(frozen=True)
class AnnotatedConversation:
    """One expert-rated conversation, as kept on ingest: the account fields of the annotation platform (record and
    server ids, annotator user ids, statuses) and the free-text justifications are dropped; each annotator is known
    only by a letter, the same letter for the same person across rows."""

    row: int  # 0-based line in the pinned file
    clinician: str  # the model that played the clinician
    member_attributes: Mapping[str, Any]
    messages: tuple[Mapping[str, str], ...]  # role/content, as upstream's judge renders them
    ratings: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # annotator letter -> field -> 0..6


def parse_annotations(text: str, *, source: str = "human_annotations.jsonl") -> list[AnnotatedConversation]:
    records = jsonl_records(text, source=source)
    fields = [f for _, group in CRITERION_FIELDS for f in group]
    users = sorted({str(u) for r in records for f in fields for u in r.get(f"{f}.responses.users") or ()})
    letters = {user: chr(ord("A") + index) for index, user in enumerate(users)}
    conversations = []
    for row, record in enumerate(records):
        ratings: dict[str, dict[str, int]] = {}
        for name in fields:
            values, who = record.get(f"{name}.responses"), record.get(f"{name}.responses.users")
            if not isinstance(values, list) or not isinstance(who, list) or len(values) != len(who):
                raise DataError(f"{source}: row {row} has no ratings for {name}")
            for user, value in zip(who, values, strict=True):
                if not isinstance(value, int) or not 0 <= value <= 6:
                    raise DataError(f"{source}: row {row} {name} has a rating outside 0-6")
                ratings.setdefault(letters[str(user)], {})[name] = value
        messages = record.get("messages")
        attributes = record.get("member_attributes")
        if not isinstance(messages, list) or not isinstance(attributes, dict):
            raise DataError(f"{source}: row {row} has no messages or member_attributes")
        conversations.append(
            AnnotatedConversation(
                row=row,
                clinician=str(record.get("model") or ""),
                member_attributes=dict(attributes),
                messages=tuple({"role": str(m.get("role")), "content": str(m.get("content"))} for m in messages),
                ratings=ratings,
            )
        )
    return conversations


def load_annotations(
    *, allow_unverified: bool = False
) -> tuple[list[AnnotatedConversation], Templates, list[FetchedFile]]:
    """The expert-rated conversations and the templates (the judge's), with the files read: annotations first."""
    fetched = fetch_pinned(__package__, ANNOTATIONS_KEY, allow_unverified=allow_unverified)
    prompts = fetch_pinned(__package__, PROMPTS_KEY, allow_unverified=allow_unverified)
    judges = fetch_pinned(__package__, JUDGE_PROMPTS_KEY, allow_unverified=allow_unverified)
    templates = parse_templates(_read(prompts), _read(judges))
    return parse_annotations(_read(fetched)), templates, [fetched, prompts, judges]


def annotator_scores(conversation: AnnotatedConversation, annotator: str) -> dict[str, float]:
    """One annotator's five criterion scores (mean of the criterion's fields, 0s kept)."""
    given = conversation.ratings[annotator]
    return {name: sum(given[f] for f in group) / len(group) for name, group in CRITERION_FIELDS}


def gold_scores(conversation: AnnotatedConversation, annotators: Sequence[str] | None = None) -> dict[str, float]:
    """The gold that reproduces the judge prompt's few-shot outputs: per criterion the mean over the annotators'
    values of its fields (0s kept), then Overall = the mean of the five (spec section 8). `annotators`: a subset
    (e.g. the other three, leave one out)."""
    chosen = list(annotators) if annotators is not None else sorted(conversation.ratings)
    scores = {
        name: sum(conversation.ratings[a][f] for a in chosen for f in group) / (len(group) * len(chosen))
        for name, group in CRITERION_FIELDS
    }
    scores["Overall score"] = sum(scores.values()) / len(CRITERION_FIELDS)
    return scores
