"""`empathybench rescore emotionbench FILE`: recompute the paper's tables from an upstream answer sheet."""

from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.instruments.emotionbench.data import AnswerSheet, read_answer_sheet
from empathybench.instruments.emotionbench.questionnaires import Questionnaire, Scoring, panas_affect
from empathybench.instruments.emotionbench.stats import ScoredResponse, group_table

PUBLIC_KEYS = ("level", "emotion", "factor", "n", "PA_mean", "PA_sd", "NA_mean", "NA_sd", "PA_delta", "NA_delta")


def panas_responses(sheet: AnswerSheet, panas: Questionnaire) -> tuple[list[ScoredResponse], int]:
    """Scored responses and the number of skipped (empty or unreadable) runs, dropped as the paper did."""
    scored: list[ScoredResponse] = []
    skipped = 0
    for response in sheet.responses:
        if response.answers is None or len(response.answers) != len(panas.items):
            skipped += 1
            continue
        pa, na = panas_affect(panas, response.answers)
        scored.append(ScoredResponse(response.factor_key, {"PA": pa, "NA": na}))
    return scored, skipped


def rescore_panas(sheet: AnswerSheet, panas: Questionnaire) -> dict[str, Any]:
    scored, skipped = panas_responses(sheet, panas)
    rows = group_table(scored, ("PA", "NA"))
    return {"questionnaire": "PANAS", "skipped_runs": skipped, "rows": rows}


def detect_questionnaire(sheet: AnswerSheet, questionnaires: dict[str, Questionnaire], path: Path) -> Questionnaire:
    for questionnaire in questionnaires.values():
        if sheet.prompt_template.removeprefix("Prompt: ").strip() == questionnaire.prompt.strip():
            return questionnaire
    for name in sorted(questionnaires, key=len, reverse=True):
        if f"-{name}-" in path.name:
            return questionnaires[name]
    raise ValueError("the prompt in row 0 matches no questionnaire of questionnaires.json")


def rescore_challenging(sheet: AnswerSheet, questionnaire: Questionnaire) -> dict[str, Any]:
    """Both scorings (spec §3.2): "paper" (plain sums) and "corrected" (reverse items + compute mode)."""
    valid = [r for r in sheet.responses if r.answers is not None and len(r.answers) == len(questionnaire.items)]
    rows: list[dict[str, Any]] = []
    scorings: tuple[Scoring, ...] = ("paper", "corrected")
    for scoring in scorings:
        for category in questionnaire.category_names(scoring):
            scored = [
                ScoredResponse(r.factor_key, {"score": questionnaire.score(r.answers or {}, category, scoring)})
                for r in valid
            ]
            # A challenging sheet holds one emotion, so its "overall" row would repeat the emotion row.
            for row in group_table(scored, ("score",)):
                if row["level"] != "overall":
                    rows.append({"scoring": scoring, "category": category, **row})
    return {
        "questionnaire": questionnaire.name,
        "skipped_runs": len(sheet.responses) - len(valid),
        "rows": rows,
    }


def rescore_file(path: Path, questionnaires: dict[str, Questionnaire], *, challenging: bool) -> dict[str, Any]:
    sheet = read_answer_sheet(path)
    questionnaire = detect_questionnaire(sheet, questionnaires, path)
    if challenging:
        if questionnaire.name == "PANAS":
            raise ValueError("this is a PANAS sheet; rescore it without --challenging")
        return rescore_challenging(sheet, questionnaire)
    if questionnaire.name != "PANAS":
        raise ValueError(f"this is a {questionnaire.name} sheet; rescore it with --challenging")
    return rescore_panas(sheet, questionnaire)


def rescore_answer_sheet(path: Path, *, challenging: bool = False) -> dict[str, Any]:
    from empathybench.instruments.emotionbench.questionnaires import load_questionnaires

    if not path.is_file():
        raise UserError(f"no such file: {path}")
    questionnaires = load_questionnaires()
    try:
        return rescore_file(path, questionnaires, challenging=challenging)
    except (KeyError, ValueError, UnicodeDecodeError) as exc:
        raise UserError(f"{path} is not an upstream EmotionBench answer sheet: {exc}") from None
