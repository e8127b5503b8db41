"""Prompts of both EmoBench protocols, built from the downloaded upstream files (spec §2).

- `repo2025` (commit 3b4f843, `src/configs/*.yaml`): one chat call per item, system + user, JSON answer.
- `paper2024` (commit ffa5e58, `data/dicts.json`): letter answers, EU asked in two calls (emotion, then cause
  conditioned on the model's own emotion answer).
Only the layout glue that upstream wrote in code (option lettering, the response-format block) is restated here.
"""

import json
from dataclasses import dataclass
from typing import Any, Literal

from empathybench.errors import DataError
from empathybench.instruments.emobench.data import (
    DICTS_2024_KEY,
    PROMPTS_2025_KEY,
    RESPONSE_2025_KEY,
    EAItem,
    EUItem,
    Language,
    Task,
    read_pinned_text,
)
from empathybench.instruments.emobench.yamlblocks import parse_block_yaml
from empathybench.models.base import Message

Protocol = Literal["paper2024", "repo2025"]
PROTOCOLS: tuple[Protocol, ...] = ("paper2024", "repo2025")
QWEN_NO_THINK = "/no_think\n\n"  # repo2025 prepends it for model names containing "qwen" without CoT (spec §2.1)


@dataclass(frozen=True)
class Repo2025Prompts:
    prompts: dict[str, dict[str, str]]  # prompts.yaml: sys / EU / EA -> lang -> text
    response: dict[str, dict[str, str]]  # response.yaml: base / cot / reasoning / EU / EA -> lang -> text

    def system(self, task: Task, language: Language, *, cot: bool, model_name: str = "") -> str:
        statement = self.response["cot" if cot else "base"][language]
        fields = self.response[task][language]
        if cot:
            fields = self.response["reasoning"][language] + ",\n" + fields
        # The response-format block upstream assembles in code: statement, a fenced JSON skeleton, a closing
        # fence with a trailing space and a 4-space tail (spec §2.1; verified by the sha256 pins).
        block = f"\n{statement}\n```json\n    {{\n    {fields}\n    }}\n``` \n    "
        text = self.prompts["sys"][language] + block
        if not cot and "qwen" in model_name.rsplit("/", 1)[-1].lower():
            text = QWEN_NO_THINK + text
        return text

    def user_eu(self, item: EUItem) -> str:
        return self.prompts["EU"][item.language].format(
            scenario=item.scenario,
            subject=item.subject,
            emo_choices=letter_list_upper(item.emotion_choices),
            cause_choices=letter_list_upper(item.cause_choices),
        )

    def user_ea(self, item: EAItem) -> str:
        return self.prompts["EA"][item.language].format(
            scenario=item.scenario,
            subject=item.subject,
            choices=letter_list_upper(item.choices),
            q_type=item.question_type,
        )

    def messages(self, item: EUItem | EAItem, *, cot: bool, model_name: str = "") -> list[Message]:
        task: Task = "EU" if isinstance(item, EUItem) else "EA"
        user = self.user_eu(item) if isinstance(item, EUItem) else self.user_ea(item)
        return [
            Message("system", self.system(task, item.language, cot=cot, model_name=model_name)),
            Message("user", user),
        ]


def letter_list_upper(choices: tuple[str, ...] | list[str]) -> str:
    """repo2025 option list: `A) text` one per line, in file order."""
    return "\n".join(f"{chr(ord('A') + index)}) {choice}" for index, choice in enumerate(choices))


def letter_list_lower(choices: tuple[str, ...] | list[str]) -> str:
    """paper2024 option list: `(a) text` one per line, each option stripped."""
    return "\n".join(f"({chr(ord('a') + index)}) {choice.strip()}" for index, choice in enumerate(choices))


def load_repo2025_prompts(*, allow_unverified: bool = False) -> Repo2025Prompts:
    prompts = parse_block_yaml(read_pinned_text(PROMPTS_2025_KEY, allow_unverified=allow_unverified), "prompts.yaml")
    response = parse_block_yaml(read_pinned_text(RESPONSE_2025_KEY, allow_unverified=allow_unverified), "response.yaml")
    for key in ("sys", "EU", "EA"):
        if set(prompts.get(key, {})) != {"en", "zh"}:
            raise DataError(f"prompts.yaml: {key!r} does not hold en and zh")
    for key in ("base", "cot", "reasoning", "EU", "EA"):
        if set(response.get(key, {})) != {"en", "zh"}:
            raise DataError(f"response.yaml: {key!r} does not hold en and zh")
    return Repo2025Prompts(prompts, response)


@dataclass(frozen=True)
class Paper2024Prompts:
    dicts: dict[str, Any]  # data/dicts.json "Prompts"

    def system(self, language: Language, *, cot: bool) -> str:
        return self.dicts["System_cot" if cot else "System"][language]

    def _suffix(self, language: Language, cot: bool) -> str:
        return self.dicts["cot" if cot else "no_cot"][language]

    def emotion_question(
        self, language: Language, scenario: str, subject: str, emotion_choices: tuple[str, ...], *, cot: bool
    ) -> str:
        body = self.dicts["EU"]["Emotion"][language].format(
            scenario=scenario, subject=subject, choices=letter_list_lower(emotion_choices)
        )
        return body + self._suffix(language, cot)

    def cause_question(
        self,
        language: Language,
        scenario: str,
        subject: str,
        emotions: str,
        cause_choices: tuple[str, ...],
        *,
        cot: bool,
    ) -> str:
        body = self.dicts["EU"]["Cause"][language].format(
            scenario=scenario, subject=subject, emotions=emotions, choices=letter_list_lower(cause_choices)
        )
        return body + self._suffix(language, cot)

    def action_question(
        self, language: Language, scenario: str, subject: str, q_type: str, choices: tuple[str, ...], *, cot: bool
    ) -> str:
        body = self.dicts["EA"][language].format(
            scenario=scenario, subject=subject, q_type=q_type, choices=letter_list_lower(choices)
        )
        return body + self._suffix(language, cot)

    def messages(self, language: Language, user: str, *, cot: bool) -> list[Message]:
        return [Message("system", self.system(language, cot=cot)), Message("user", user)]


def emotion_for_cause_question(emotion_choices: tuple[str, ...], emotion_index: int) -> str:
    """The emotion text the paper's second EU call names: the model's own pick; unparsed (-1) gives the LAST
    option, as Python indexing did upstream (spec §2.2, §8.6)."""
    return emotion_choices[emotion_index]


def load_paper2024_prompts(*, allow_unverified: bool = False) -> Paper2024Prompts:
    raw = json.loads(read_pinned_text(DICTS_2024_KEY, allow_unverified=allow_unverified))
    prompts = raw.get("Prompts") if isinstance(raw, dict) else None
    needed = ("System", "System_cot", "EU", "EA", "no_cot", "cot")
    if not isinstance(prompts, dict) or any(key not in prompts for key in needed):
        raise DataError(f"{DICTS_2024_KEY}: no 'Prompts' with {', '.join(needed)}")
    return Paper2024Prompts(prompts)
