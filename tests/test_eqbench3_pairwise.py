"""EQ-Bench 3 pairwise mode: prompt, plus-margin tallies, margins, pseudo-wins, TrueSkill, anchors (spec §5)."""

from pathlib import Path

import pytest
import trueskill

from empathybench.instruments.eqbench3 import conversation as conv
from empathybench.instruments.eqbench3 import data
from empathybench.instruments.eqbench3 import pairwise as pw


@pytest.fixture(scope="module")
def protocol() -> data.Protocol:
    return data.load_protocol()


def _respondent(protocol: data.Protocol, scenario: data.Scenario, tag: str, debrief: str | None) -> pw.Respondent:
    replies = [
        f"# I'm thinking & feeling\n{tag}{'x' * 3000}\n# They're thinking & feeling\n{tag} theirs\n"
        f"# My response\n**{tag}** said\n--"
        for _ in scenario.turns
    ]
    return pw.Respondent(replies, [conv.parse_sections(scenario.type, r) for r in replies], debrief)


def test_roleplay_prompt_shows_the_first_respondent_as_a0493(mirror: Path, protocol: data.Protocol) -> None:
    scenario = protocol.scenarios["1"]
    first = _respondent(protocol, scenario, "FIRST", "d" * 4100)
    second = _respondent(protocol, scenario, "SECOND", None)
    prompt = pw.pairwise_prompt(protocol, scenario, first, second)
    a_block = prompt[prompt.index("[RESPONDENT A0493]") : prompt.index("[/RESPONDENT A0493]")]
    b_block = prompt[prompt.index("[RESPONDENT A0488]") : prompt.index("[/RESPONDENT A0488]")]
    assert "FIRST" in a_block and "SECOND" not in a_block and "SECOND" in b_block
    # sections cut at 2,200 characters with the mark, headings kept without '#', '*' removed, ending in --
    assert f"FIRST{'x' * 2195}... [truncated]\n\n They're thinking & feeling" in a_block
    assert "FIRST said\n\n--\n---" in a_block
    assert "d" * 4000 + "... [truncated]" in a_block and "d" * 4001 not in a_block
    assert "[No Debrief Provided]" in b_block
    assert protocol.note("1") in prompt
    assert "{" + "scenario_notes}" not in prompt
    without = pw.pairwise_prompt(protocol, scenario, first, second, use_notes=False)
    assert protocol.note("1") not in without and "[No scenario notes available]" in without
    # the template's example JSON ends in a trailing comma (spec §8 item 3)
    assert '"overall_eq": "winner & disparity rating",\n}' in prompt


def test_analysis_prompt(mirror: Path, protocol: data.Protocol) -> None:
    scenario = protocol.scenarios["404"]
    first = pw.Respondent(["## A" + "a" * 7000], [{}], None)
    second = pw.Respondent(["*B*"], [{}], None)
    prompt = pw.pairwise_prompt(protocol, scenario, first, second)
    assert scenario.turns[0] in prompt
    assert " A" + "a" * 5998 + "... [truncated]" in prompt
    assert "[RESPONDENT A0488 ANALYSIS]\nB\n" in prompt


def test_tally_counts_every_plus_as_upstream() -> None:
    verdict = {
        "chain_of_thought_reasoning": "A0488+++++ would be wrong",
        "demonstrated_empathy": "A0493++",
        "pragmatic_ei": "A0488+++",
        "depth_of_insight": "A0488++ (A0493 close)",  # names A0493: credited to A0493
        "extra_key": "A0488+",
        "overall_eq": 5,
    }
    assert pw.tally(verdict) == (0.5, 4, 4)
    assert pw.tally({"a": "A0493+"}) == (1.0, 1, 0)
    assert pw.tally({"a": "A0488+"}) == (0.0, 0, 1)


def test_margin_rules() -> None:
    # the spec's worked example (8c3a125 rules): 0 vs 21 pluses, n = 0.7
    m = pw.margin(0.0, 0, 21, "8c3a125")
    assert m.diff_normalized == pytest.approx(0.7)
    assert m.diff_blended == pytest.approx(0.9464456503013438, abs=1e-15)
    assert m.fraction == pytest.approx(0.026777174849328178, abs=1e-15)
    assert pw.margin(1.0, 21, 0).fraction == pytest.approx(0.5 + 0.35)
    assert pw.margin(1.0, 45, 0).fraction == 1.0  # capped at MAX_POSSIBLE_DIFF
    assert pw.margin(0.5, 3, 3).fraction == 0.5
    assert pw.blend_8c3a125(0.0) == 0.0
    assert pw.blend_8c3a125(0.7) == pytest.approx(0.94645, abs=5e-6)  # spec: the saturating curve alone
    assert pw.blend_8c3a125(0.01) == pytest.approx(5 * 0.01, rel=0.05)  # near 0 the linear part dominates


def test_analysis_judgements_are_clamped_under_3c21bcc() -> None:
    verdict = {"overall_eq": "A0488+++++", "correctness": "A0488++"}
    clamped = pw.judgement_from_verdict(
        verdict, scenario_id="404", iteration="1", test_model="t", other_model="o", test_first=False
    )
    assert (clamped.outcome_for_test, clamped.plus_for_test, clamped.plus_for_other) == (1.0, 1, 0)
    assert clamped.fraction_for_test == pytest.approx(0.5 + 0.5 / 30)
    old = pw.judgement_from_verdict(
        verdict, scenario_id="404", iteration="1", test_model="t", other_model="o", test_first=False, rules="8c3a125"
    )
    assert (old.plus_for_test, old.plus_for_other) == (7, 0)


def test_pseudo_wins_reproduce_the_spec_tables() -> None:
    spec_b20 = [1, 2, 3, 3, 4, 4, 5, 6, 7, 7, 8, 8, 9, 10, 10, 11, 12, 13, 13, 14, 14, 15, 16, 16, 17, 18, 18, 19, 20,
                20]  # fmt: skip
    assert [pw.pseudo_wins(pw.margin(1.0, d, 0).fraction, 20) for d in range(1, 31)] == spec_b20
    spec_b5 = [1] * 6 + [2] * 6 + [3] * 5 + [4] * 7 + [5] * 6
    assert [pw.pseudo_wins(pw.margin(0.0, 0, d).fraction, 5) for d in range(1, 31)] == spec_b5
    assert {pw.pseudo_wins(pw.margin(1.0, d, 0).fraction, 1) for d in range(1, 31)} == {1}


def test_trueskill_environment_and_draws() -> None:
    env = trueskill.TrueSkill(mu=pw.TS_MU, sigma=pw.TS_SIGMA, beta=pw.TS_BETA, tau=pw.TS_TAU, draw_probability=0)
    a, _ = trueskill.rate_1vs1(env.create_rating(), env.create_rating(), drawn=True, env=env)
    assert a.sigma == pytest.approx(134.22, abs=0.01) and a.mu == pytest.approx(1200)
    low, high = trueskill.rate_1vs1(env.create_rating(mu=1200), env.create_rating(mu=1250), drawn=True, env=env)
    assert (round(low.mu), round(high.mu)) == (1220, 1230)
    # the same through the solver: one drawn group between two fresh models
    solved = pw.solve_trueskill([pw.Group("a", "b", "1", "1", 3, 3)], ["a", "b", "c"])
    assert solved["a"][1] == pytest.approx(134.22, abs=0.01) and solved["c"] == (1200.0, pytest.approx(350 / 3))


def test_solver_groups_both_orders_and_wins_by_margin() -> None:
    judgements = [
        pw.Judgement("1", "1", "x", "y", True, 1.0, 6, 0, 0.6),
        pw.Judgement("1", "1", "y", "x", True, 0.0, 1, 4, 0.4),  # reversed order, same logical pair
        pw.Judgement("2", "1", "y", "x", True, 1.0, 2, 0, 0.53),
    ]
    groups = pw.group_judgements(judgements)
    assert groups == [pw.Group("x", "y", "1", "1", 10, 1), pw.Group("x", "y", "2", "1", 0, 2)]
    big = pw.solve_trueskill(groups[:1], ["x", "y"])
    small = pw.solve_trueskill([pw.Group("x", "y", "1", "1", 2, 1)], ["x", "y"])
    assert big["x"][0] > small["x"][0] > 1200 > small["y"][0] > big["y"][0]
    ladder = {"x": 1.0, "y": 2.0, "z": 3.0}
    assert pw.within_window([pw.Group("x", "z", "1", "1", 1, 0)], ladder, 1) == []


def test_normalisation_with_and_without_anchors() -> None:
    raw = {"o3": 1600.0, "meta-llama/llama-3.2-1b-instruct": 950.0, "m": 1275.0}
    norm = pw.normalisation(raw)
    assert norm.anchored and norm.apply(1600.0) == pytest.approx(1500) and norm.apply(950.0) == pytest.approx(200)
    assert norm.apply(1275.0) == pytest.approx(850)
    missing = pw.normalisation({"o3": 1600.0, "m": 1273.0})
    assert not missing.anchored and missing.apply(1273.0) == 1273.0
    custom = pw.normalisation({"a": 10.0, "b": 20.0}, (("b", 100.0), ("a", 0.0)))
    assert custom.apply(15.0) == pytest.approx(50.0)


def test_verdict_parsing_tolerates_the_templates_trailing_comma() -> None:
    text = '<think>hm</think>```json\n{\n  "chain_of_thought_reasoning": "x",\n  "overall_eq": "A0493++",\n}\n```'
    parsed = pw.parse_pairwise_reply(text)
    assert parsed.verdict == {"chain_of_thought_reasoning": "x", "overall_eq": "A0493++"}
    assert parsed.repairs == ("trailing_comma",)
    strict = pw.parse_pairwise_reply(text, tolerate_trailing_comma=False)
    assert strict.verdict is None and strict.error
    assert pw.parse_pairwise_reply("{}").verdict is None
    assert pw.parse_pairwise_reply('{"overall_eq": "A0488+"').verdict is None  # truncated JSON


def test_elo_table_orders_models_by_their_wins_and_falls_back_to_raw() -> None:
    judgements = []
    strength = {"strong": 3, "middle": 2, "weak": 1}
    for scenario in range(1, 7):
        for a, b in (("strong", "middle"), ("middle", "weak"), ("strong", "weak")):
            for test_first in (True, False):
                gap = strength[a] - strength[b]
                judgements.append(pw.Judgement(str(scenario), "1", a, b, test_first, 1.0, 2 + gap, 1, 0.6))
    table = pw.elo_table(judgements, ["weak", "middle", "strong", "idle"])
    assert table["strong"]["elo"] > table["middle"]["elo"] > table["weak"]["elo"]
    assert table["idle"]["elo"] == 1200.0  # a model without comparisons stays where it started
    assert all(row["elo_norm"] == row["elo"] for row in table.values())  # no anchors among these models
    anchored = pw.elo_table(judgements, ["weak", "middle", "strong"], anchors=(("strong", 1500.0), ("weak", 200.0)))
    assert (anchored["strong"]["elo_norm"], anchored["weak"]["elo_norm"]) == (1500.0, 200.0)
    row = anchored["middle"]
    assert row["ci_low"] == pytest.approx(row["elo"] - 1.96 * row["sigma"], abs=0.006)
    assert row["ci_low_norm"] < row["elo_norm"] < row["ci_high_norm"]
