"""MindEval: the templates read from upstream with ast, the custom-template refusal, upstream's judge parse, the human
annotations (gold mapping and the experts' agreement, against the spec's table), the conversation protocol over the
wire (a fake OpenAI clinician, a fake Anthropic member and judge), strict mode, the comparability label from what
was sent, upstream's ranking test in a comparison, the dry run and `judge validate --bench mindeval`."""

import ast
import html
import json
import math
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import ttest_rel

from conftest import MIRROR, cli_in_process
from empathybench.data.fetch import fetch_pinned
from empathybench.errors import UserError
from empathybench.instruments.mindeval import data, dialogue, parse, published, ranking
from empathybench.instruments.mindeval.validate import human_agreement
from empathybench.instruments.registry import all_benchmarks
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"the offline mirror is not at {MIRROR}")
OPENAI_KEY, ANTHROPIC_KEY = "sk-test-mindeval", "sk-ant-test-mindeval"
MEMBER, JUDGE = "claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"


def instrument() -> Any:
    return all_benchmarks()["mindeval"]


def _records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").split("\n") if line]


def _summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text("utf-8"))["benchmarks"]["mindeval"]


# --- templates, profiles, parse ------------------------------------------------------------------------------------


def test_the_templates_are_read_from_upstream_and_the_profiles_hold_every_field() -> None:
    profiles, templates, _ = data.load()
    assert set(templates.clinician) == {"v0_1", "v0_1_four_sentence_cap", "custom"}
    assert set(templates.member) == {"v0_2"} and set(templates.judge) == {"v0_1", "v0_1_w_length_guidelines"}
    assert sorted(data.template_fields(templates.clinician["v0_1"])) == sorted(data.ALLOWED_CLINICIAN_FIELDS)
    judge_fields = set(data.template_fields(templates.judge["v0_1"]))
    assert judge_fields == {*data.ALLOWED_CLINICIAN_FIELDS, "conversation_str"}
    assert len(profiles) == data.N_PROFILES
    for profile in profiles:  # every template renders from every profile (substitute raises on a missing key)
        for text in (templates.clinician["v0_1"], templates.member["v0_2"]):
            rendered = data.render(text, profile.values)
            assert "${" not in rendered and profile.attributes["name"] in rendered
    # The member knows its narrative; the clinician does not see it.
    first = profiles[0]
    assert first.narrative[:200] in data.render(templates.member["v0_2"], first.values)
    assert first.narrative[:200] not in data.render(templates.clinician["v0_1"], first.values)


def test_a_custom_clinician_template_with_another_field_is_refused_in_one_line(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text("You are a clinician. The member is $name, $age, and feels ${depressive_symptoms}.", "utf-8")
    bad.write_text("You are a clinician. $name says: $member_narrative (mood: $recent_mood)", "utf-8")
    config = instrument().configure("paper", {"clinician_template_file": str(good)})
    assert config.template_name == "custom"
    with pytest.raises(UserError, match="member_narrative, recent_mood") as refused:
        instrument().configure("paper", {"clinician_template_file": str(bad)})
    assert "\n" not in str(refused.value)
    roles = ["--simulator", "scripted/plausible", "--judge", "scripted/plausible"]
    option = f"mindeval.clinician_template_file={bad}"
    done = cli_in_process(["run", "-m", "scripted/plausible", *roles, "--bench", "mindeval", "-O", option, "--dry-run"])
    assert done.returncode != 0 and "recent_mood" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    with pytest.raises(UserError):
        instrument().configure("paper", {"clinician_template": "custom"})  # upstream's placeholder


def test_the_judge_parse_is_upstreams() -> None:
    reply = "<think>Clinical Accuracy & Competence: 1</think>\nClinical Accuracy & Competence: 4.5\n" + (
        "Ethical & Professional Conduct:5\nAssessment & Response: 7\n**Therapeutic Relationship & Alliance**: 2\n"
        "AI-Specific Communication Quality (LLMness): 2"
    )
    judgment = parse.parse_judgment(reply)
    assert judgment.scores["Clinical Accuracy & Competence"] == 4.5  # the thinking is split off first
    assert judgment.scores["Assessment & Response"] == 7.0  # no clamp to 1-6
    # The regex misses "**Name**: 2" and "Name (LLMness): 2": both are 3, and counted.
    assert judgment.missing == ("Therapeutic Relationship & Alliance", "AI-Specific Communication Quality")
    assert judgment.scores["Therapeutic Relationship & Alliance"] == parse.MISSING_DEFAULT
    expected = (4.5 + 5 + 7 + 3 + 3) / 5
    assert judgment.overall == pytest.approx(expected) and judgment.scores["Average score"] == judgment.overall
    assert parse.split_thinking("plan</think> answer") == ("answer", "plan")
    assert parse.turn_text("<think>only thinking</think>") == ("...", "only thinking")
    text = parse.conversation_text([{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}])
    assert text == "<member>\nHello\n</member>\n<therapist>\nHi\n</therapist>"


def _literals(tree: ast.AST, kind: type) -> list[Any]:
    """Every node of `kind` in `tree` that is a literal, as its value."""
    values = []
    for node in ast.walk(tree):
        if isinstance(node, kind):
            try:
                values.append(ast.literal_eval(node))
            except ValueError:
                continue
    return values


def _upstream_tree(key: str) -> ast.Module:
    return ast.parse(Path(fetch_pinned(data.__name__.rsplit(".", 1)[0], key).path).read_text("utf-8"))


def test_the_protocols_constants_are_upstreams() -> None:
    """The greeting, the empty-reply text, the criteria, the missing default and the ranking threshold, read from the
    pinned upstream code (generate_interactions.py, utils.py, significance_testing.py)."""
    interactions = _upstream_tree(data.INTERACTIONS_CODE_KEY)
    openings = [d for d in _literals(interactions, ast.Dict) if d.get("content") == dialogue.GREETING]
    assert sorted(d["role"] for d in openings) == ["assistant", "user"]  # the member's Hello on both sides
    empties = {
        node.value.value
        for node in ast.walk(interactions)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    assert empties == {parse.EMPTY_REPLY}
    utils = _upstream_tree(data.UTILS_CODE_KEY)
    assert tuple(parse.CRITERIA) in [tuple(found) for found in _literals(utils, ast.List)]
    defaults = [
        n.value.value
        for n in ast.walk(utils)
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Subscript) and isinstance(n.value, ast.Constant)
    ]
    assert defaults == [parse.MISSING_DEFAULT]
    pattern = next(
        "".join(part.value for part in n.values if isinstance(part, ast.Constant))
        for n in ast.walk(utils)
        if isinstance(n, ast.JoinedStr) and any(isinstance(p, ast.Constant) and "\\d" in str(p.value) for p in n.values)
    )
    assert pattern == parse._PATTERNS[parse.CRITERIA[0]].pattern.split(re.escape(parse.CRITERIA[0]))[1]
    upstream_ranking = _upstream_tree(data.RANKING_CODE_KEY)
    thresholds = {
        ast.literal_eval(default)
        for n in ast.walk(upstream_ranking)
        if isinstance(n, ast.FunctionDef) and n.args.defaults
        for arg, default in zip(n.args.args[-len(n.args.defaults) :], n.args.defaults, strict=True)
        if arg.arg == "threshold_p_value"
    }
    assert thresholds == {ranking.RANKING_P}
    alternatives = {
        keyword.value.value
        for node in ast.walk(upstream_ranking)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "alternative" and isinstance(keyword.value, ast.Constant)
    }
    assert alternatives == {"greater"}


# --- human annotations ------------------------------------------------------------------------------------------


def test_the_gold_mapping_reproduces_the_judge_prompts_few_shot_outputs() -> None:
    conversations, templates, _ = data.load_annotations()
    outputs = re.findall(r"<output>\n(.*?)\n</output>", templates.judge["v0_1"], re.DOTALL)
    assert len(outputs) == len(data.FEW_SHOT_ROWS)
    # The examples are rows 55-59 (in another order): each shown output is the gold of exactly one of them.
    shown = sorted(tuple(parse.parse_judgment(text).scores[name] for name in parse.CRITERIA) for text in outputs)
    gold = sorted(
        tuple(data.gold_scores(conversations[row])[name] for name in parse.CRITERIA) for row in data.FEW_SHOT_ROWS
    )
    assert shown == gold
    other = tuple(data.gold_scores(conversations[0])[name] for name in parse.CRITERIA)
    assert other not in shown


def test_the_experts_agreement_with_each_other_is_the_specs_table() -> None:
    conversations, _, _ = data.load_annotations()
    assert len(conversations) == 60 and all(len(c.ratings) == 4 for c in conversations)
    # The spec's table (specs/mindeval.md section 8), two decimals: CAC, EPC, AR, TRA, ASCQ, Overall.
    table = {
        (60, "leave_one_out_pearson"): (0.25, 0.20, 0.27, 0.22, 0.27, 0.41),
        (60, "leave_one_out_kendall_tau_b"): (0.19, 0.18, 0.20, 0.19, 0.23, 0.32),
        (55, "leave_one_out_pearson"): (0.29, 0.20, 0.30, 0.19, 0.27, 0.41),
        (55, "leave_one_out_kendall_tau_b"): (0.22, 0.16, 0.23, 0.16, 0.23, 0.31),
    }
    for (n, key), expected in table.items():
        figures = human_agreement(conversations[:n])[key]
        got = [figures[name] for name in (*parse.CRITERIA, parse.OVERALL)]
        # Two decimals as printed; a few figures are off by more than rounding, by less than 0.01 (on 60 rows TRA's
        # Pearson is 0.2146 against .22, the Overall's tau-b 0.3125 against .32); the Overall's Pearson is exact.
        assert got == pytest.approx(expected, abs=0.01), (n, key)
        if key == "leave_one_out_pearson":
            assert got[-1] == pytest.approx(expected[-1], abs=0.005)
    gold = [data.gold_scores(c) for c in conversations]
    means = [sum(g[name] for g in gold) / len(gold) for name in (*parse.CRITERIA, parse.OVERALL)]
    assert means == pytest.approx((3.59, 4.04, 3.47, 3.69, 2.72, 3.50), abs=0.005)


def test_the_annotation_platforms_account_fields_are_dropped_on_ingest() -> None:
    conversations, _, files = data.load_annotations()
    raw = Path(files[0].path).read_text("utf-8")
    user_ids = set(re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", raw))
    assert user_ids
    kept = repr(conversations)
    assert not any(user in kept for user in user_ids) and "score_justification" not in kept
    assert {a for c in conversations for a in c.ratings} == {"A", "B", "C", "D"}


# --- the protocol over the wire ----------------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or () if isinstance(block, dict))


class Replies:
    """The clinician's replies (OpenAI fake: thinking inline, one empty reply) and the member's and the judge's
    (Anthropic fake: thinking in its own blocks when enabled), by what they are asked."""

    def __init__(self, judge_leaves_out: str | None = None) -> None:
        self.judge_leaves_out = judge_leaves_out
        self.clinician_bodies: list[dict[str, Any]] = []

    def clinician(self, body: dict[str, Any]) -> str:
        self.clinician_bodies.append(body)
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn == 0:
            return "   "  # an empty first reply: passed on as "..."
        return f"<think>SECRET-PLAN-{turn}</think>How has your week been? ({turn})"

    def anthropic(self, body: dict[str, Any]) -> str:
        last = _text_of(body["messages"][-1]["content"])
        if "Return Your ratings" in last:
            lines = [f"{name}: {3 + index * 0.5}" for index, name in enumerate(parse.CRITERIA)]
            return "\n".join(line for line in lines if not line.startswith(self.judge_leaves_out or "\0"))
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return f"Member line {turn}."


def _wire_args(openai: FakeOpenAIServer, anthropic: FakeAnthropicServer, *extra: str) -> list[str]:
    return [
        "run",
        "-m",
        "openai/clinician-model",
        "--base-url",
        openai.base_url,
        "--simulator",
        f"anthropic/{MEMBER}",
        "--simulator-base-url",
        anthropic.base_url,
        "--judge",
        f"anthropic/{JUDGE}",
        "--judge-base-url",
        anthropic.base_url,
        "--bench",
        "mindeval",
        "--preset",
        "paper",
        *extra,
    ]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    return {**env, "OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}


def test_a_conversation_over_the_wire_follows_upstreams_protocol(tmp_path: Path) -> None:
    replies = Replies()
    with (
        FakeOpenAIServer(answer=replies.clinician, models=("clinician-model",)) as openai,
        FakeAnthropicServer(api_key=ANTHROPIC_KEY, answer=replies.anthropic) as anthropic,
    ):
        out = tmp_path / "run"
        done = cli_in_process([*_wire_args(openai, anthropic), "--limit", "1", "--out", str(out)], _env(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]
        clinician_bodies = replies.clinician_bodies
        member_bodies = [r.body for r in anthropic.requests if "system" in r.body]
        judge_bodies = [r.body for r in anthropic.requests if "system" not in r.body]
    (record,) = _records(out)
    # 10 rounds: 10 clinician calls, 10 member calls, one judge call.
    assert len(clinician_bodies) == 10 and len(member_bodies) == 10 and len(judge_bodies) == 1
    # The clinician speaks first, after the member's synthetic Hello; its history is user-first.
    first = clinician_bodies[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user"] and first[1]["content"] == "Hello"
    # The member's history opens with its own "Hello" as assistant; for Anthropic a user "." goes first.
    member_first = [(m["role"], _text_of(m["content"])) for m in member_bodies[0]["messages"]]
    assert member_first[:3] == [("user", "."), ("assistant", "Hello"), ("user", "...")]  # the empty reply: "..."
    assert record["member_placeholder"] is True
    # Thinking is never passed on, to the member or back to the clinician, nor shown to the judge.
    assert not any("SECRET-PLAN" in json.dumps(body) for body in member_bodies + judge_bodies)
    assert not any("SECRET-PLAN" in json.dumps(body["messages"]) for body in clinician_bodies)
    # ... but kept apart: the backend records it as the call's reasoning (or the reader in the turn's fields).
    kept = [c.get("reasoning") or "" for c in record["calls"] if c.get("role") is None]
    kept += [str((t.get("call") or {}).get("fields", {}).get("thinking", "")) for t in record["turns"]]
    assert sum("SECRET-PLAN-" in text for text in kept) == 9
    # The saved interaction: user Hello, then (assistant, user) x 10, as upstream saves it.
    interaction = record["interaction"]
    assert len(interaction) == 21 and interaction[0] == {"role": "user", "content": "Hello"}
    assert [m["role"] for m in interaction[1:]] == ["assistant", "user"] * 10 and interaction[-1]["role"] == "user"
    # The judge: one user message, no system prompt; the conversation as upstream renders it.
    (judge_message,) = judge_bodies[0]["messages"]
    assert judge_message["role"] == "user"
    assert parse.conversation_text(interaction) in _text_of(judge_message["content"])
    # The published models get the published settings by default (thinking 4096 within 16000 tokens, no
    # temperature), and the label says only what differs: the cut of one profile.
    for body in (member_bodies[0], judge_bodies[0]):
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
        assert body["max_tokens"] == 16000 and "temperature" not in body
    summary = _summary(out)
    assert summary["judge"] == {"self_judging": False, "identity": {"provider": "anthropic", "model": JUDGE}}
    # The clinician gets the member's settings where its model takes them: clinician-model takes no reasoning
    # setting, so the budget alone; each role's thinking budget is said.
    assert all(b["max_tokens"] == 16000 and "reasoning_effort" not in b for b in clinician_bodies)
    assert summary["comparability"] == (
        f"not comparable with the published protocol (member {MEMBER} (thinking 4,096 of 16,000 tokens), judge "
        f"{JUDGE} (thinking 4,096 of 16,000 tokens), clinician clinician-model (16,000 tokens, no thinking)): "
        "1 of 50 profiles scored: 49 not in this run (a cut)"
    )
    expected = [3 + index * 0.5 for index in range(5)]
    assert summary["score"] == pytest.approx(sum(expected) / 5) and summary["n_missing_criteria"] == 0


def test_a_huge_reply_reaches_the_judge_whole_and_is_stored_bounded(tmp_path: Path) -> None:
    from empathybench.engine.engine import MAX_STORED_REPLY_CHARS

    def clinician(body: dict[str, Any]) -> str:
        return ("m" * 99 + " ") * 1500  # 150,000 characters in 1,500 words (the fake server counts words as tokens)

    replies = Replies()
    with (
        FakeOpenAIServer(answer=clinician, models=("clinician-model",)) as openai,
        FakeAnthropicServer(api_key=ANTHROPIC_KEY, answer=replies.anthropic) as anthropic,
    ):
        out = tmp_path / "run"
        args = [*_wire_args(openai, anthropic), "--limit", "1", "--option", "mindeval.rounds=1"]
        done = cli_in_process([*args, "--out", str(out)], _env(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]
        (judge_body,) = [r.body for r in anthropic.requests if "system" not in r.body]
    assert (("m" * 99 + " ") * 1500).strip() in _text_of(judge_body["messages"][0]["content"])
    (record,) = _records(out)
    assert len(record["interaction"][1]["content"]) == MAX_STORED_REPLY_CHARS
    assert all(len(t["text"]) <= MAX_STORED_REPLY_CHARS for t in record["turns"])


def test_the_label_names_what_was_sent_where_it_differs(tmp_path: Path) -> None:
    replies = Replies(judge_leaves_out="AI-Specific")
    with (
        FakeOpenAIServer(answer=replies.clinician, models=("clinician-model",)) as openai,
        FakeAnthropicServer(api_key=ANTHROPIC_KEY, answer=replies.anthropic) as anthropic,
    ):
        out = tmp_path / "run"
        args = [*_wire_args(openai, anthropic), "--limit", "2", "--option", "mindeval.rounds=2"]
        # The user's arguments win over the published defaults (and the label says so).
        args += ["--judge-arg", "max_tokens=9000", "--simulator-arg", "thinking_budget=2048"]
        done = cli_in_process([*args, "--out", str(out)], _env(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]
        judge_budgets = {r.body["max_tokens"] for r in anthropic.requests if "system" not in r.body}
    summary = _summary(out)
    label = summary["comparability"]
    assert summary["config"]["judge_max_tokens"] == 16000 and judge_budgets == {9000}
    assert f"the judge {JUDGE}: token budget 9000 (published 16000), 2 calls" in label
    assert f"the simulator {MEMBER}: reasoning budget 2048 (published 4096), 4 calls" in label
    assert "2 rounds, not 10" in label and "2 of 50 profiles scored" in label and "temperature" not in label
    # Faithful mode: the left-out criterion is 3, counted per criterion and shown beside the score.
    assert summary["missing_criteria"]["AI-Specific Communication Quality"] == 2
    assert summary["metrics"]["ascq"]["value"] == 3.0 and "2 left out" in summary["metrics"]["ascq"]["unit"]
    page = html.unescape((out / "report.html").read_text("utf-8"))
    assert "left out by the judge" in page and page.count(label) == 1  # the label, said once


def test_the_clinician_gets_the_members_settings_and_the_label_names_each_thinking_budget(tmp_path: Path) -> None:
    """Issue 40, item 4: a reasoning clinician is sent the member's published settings (reasoning effort high within
    16,000 tokens); a member reached through an OpenAI-compatible gateway is sent reasoning effort high, whose
    thinking budget the gateway chooses (OpenRouter: 12,800), and the label says so beside litellm's 4,096."""
    gateway_member = "anthropic/claude-haiku-4.5"
    replies = Replies()

    def openai_answer(body: dict[str, Any]) -> str:
        return "Member line." if body["model"] == gateway_member else replies.clinician(body)

    with (
        FakeOpenAIServer(answer=openai_answer, models=("o3-mini", gateway_member), keep_bodies=True) as openai,
        FakeAnthropicServer(api_key=ANTHROPIC_KEY, answer=replies.anthropic) as anthropic,
    ):
        out = tmp_path / "run"
        args = [*_wire_args(openai, anthropic), "--limit", "1", "--option", "mindeval.rounds=1"]
        args[2] = "openai/o3-mini"
        args[args.index(f"anthropic/{MEMBER}")] = f"openai/{gateway_member}"
        args[args.index("--simulator-base-url") + 1] = openai.base_url
        done = cli_in_process([*args, "--out", str(out)], _env(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]
        bodies = {body["model"]: body for body in openai.received_bodies}
    assert bodies["o3-mini"]["reasoning_effort"] == "high" and bodies["o3-mini"]["max_completion_tokens"] == 16000
    assert bodies[gateway_member]["reasoning_effort"] == "high" and bodies[gateway_member]["max_tokens"] == 16000
    assert _summary(out)["comparability"] == (
        f"not comparable with the published protocol (member {gateway_member} (reasoning effort high within 16,000 "
        f"tokens), judge {JUDGE} (thinking 4,096 of 16,000 tokens), clinician o3-mini (reasoning effort high within "
        f"16,000 tokens)): 1 round, not 10; the simulator {gateway_member}: reasoning effort high through an "
        "OpenAI-compatible endpoint, which sets the thinking budget (OpenRouter's 12,800 of 16,000 tokens; published "
        "4,096, litellm's for Anthropic), 1 call; 1 of 50 profiles scored: 49 not in this run (a cut)"
    )


def test_the_users_token_budgets_replace_the_published_one_and_the_label_names_them(tmp_path: Path) -> None:
    """Issue 40, item 1: a budget option the user sets replaces the published 16,000 (one field on the wire, the
    published reasoning setting kept) for the clinician, the member and the judge, and the label names each
    difference with both values."""
    replies = Replies()
    with (
        FakeOpenAIServer(answer=replies.clinician, models=("o3-mini",), keep_bodies=True) as openai,
        FakeAnthropicServer(api_key=ANTHROPIC_KEY, answer=replies.anthropic) as anthropic,
    ):
        out = tmp_path / "run"
        args = [*_wire_args(openai, anthropic), "--limit", "1", "--option", "mindeval.rounds=1"]
        args[2] = "openai/o3-mini"
        for option in ("max_tokens=8000", "member_max_tokens=9000", "judge_max_tokens=10000"):
            args += ["--option", f"mindeval.{option}"]
        done = cli_in_process([*args, "--out", str(out)], _env(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]
        (clinician,) = openai.received_bodies
        (member,) = [r.body for r in anthropic.requests if "system" in r.body]
        (judge,) = [r.body for r in anthropic.requests if "system" not in r.body]
    assert clinician["max_completion_tokens"] == 8000 and clinician["reasoning_effort"] == "high"
    assert "max_tokens" not in clinician
    assert member["max_tokens"] == 9000 and member["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert judge["max_tokens"] == 10000 and judge["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert _summary(out)["comparability"] == (
        f"not comparable with the published protocol (member {MEMBER} (thinking 4,096 of 9,000 tokens), judge "
        f"{JUDGE} (thinking 4,096 of 10,000 tokens), clinician o3-mini (reasoning effort high within 8,000 tokens)): "
        f"1 round, not 10; the judge {JUDGE}: token budget 10000 (published 16000), 1 call; the model under test "
        f"o3-mini: token budget 8000 (published 16000), 1 call; the simulator {MEMBER}: token budget 9000 "
        "(published 16000), 1 call; 1 of 50 profiles scored: 49 not in this run (a cut)"
    )


def test_strict_mode_asks_the_judge_again_and_a_run_with_nothing_scored_exits_non_zero(tmp_path: Path) -> None:
    replies = Replies(judge_leaves_out="Assessment")
    with (
        FakeOpenAIServer(answer=replies.clinician, models=("clinician-model",)) as openai,
        FakeAnthropicServer(api_key=ANTHROPIC_KEY, answer=replies.anthropic) as anthropic,
    ):
        out = tmp_path / "run"
        args = [*_wire_args(openai, anthropic), "--limit", "1", "--option", "mindeval.rounds=1"]
        args += ["--option", "mindeval.missing_criterion=strict", "--option", "mindeval.judge_attempts=2"]
        done = cli_in_process([*args, "--out", str(out)], _env(tmp_path))
        judge_calls = [r for r in anthropic.requests if "system" not in r.body]
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "mindeval: no item could be scored" in done.stderr
    assert len(judge_calls) == 2  # asked again once, then not scored
    (record,) = _records(out)
    assert record["status"] == "ok" and record["overall"] is None and "Assessment & Response" in record["judge_error"]
    summary = _summary(out)
    assert summary["score"] is None and summary["n_scored"] == 0 and summary["n_judge_errors"] == 1
    assert "no conversation was scored" in summary["headline_note"]
    assert "1 not scored (the judge left out a criterion in every ask)" in summary["comparability"]
    assert "strict parse" in summary["comparability"]


# --- figures, label, ranking --------------------------------------------------------------------------------------


def test_the_published_settings_go_to_the_published_models_only() -> None:
    from empathybench.models.base import Sampling

    base = Sampling(temperature=1.0, max_tokens=16000, top_p=None)
    anthropic = published.request_sampling("simulator", {"provider": "anthropic", "model": MEMBER}, base)
    assert anthropic.model_args is not None and anthropic.model_args.as_dict() == {
        "thinking_budget": 4096,
        "max_tokens": 16000,
    }
    # A budget the user set (the role's option) is the one sent, with the published thinking.
    mine = published.request_sampling(
        "simulator", {"provider": "anthropic", "model": MEMBER}, replace(base, max_tokens=9000)
    )
    assert mine.model_args is not None and mine.model_args.as_dict() == {"thinking_budget": 4096, "max_tokens": 9000}
    gateway = published.request_sampling("judge", {"provider": "openai", "model": "anthropic/claude-sonnet-4.5"}, base)
    assert gateway.model_args is not None and gateway.model_args.reasoning_effort == "high"
    assert published.request_sampling("judge", {"provider": "anthropic", "model": MEMBER}, base) == base  # not its
    assert published.request_sampling("simulator", {"provider": "openai", "model": "gpt-4o"}, base) == base
    # The clinician: the member's settings (upstream's README: copy them) where its model takes them.
    assert published.clinician_sampling({"provider": "openai", "model": "gpt-4o"}, base) == base
    for identity, args in (
        ({"provider": "anthropic", "model": JUDGE}, {"thinking_budget": 4096, "max_tokens": 16000}),
        (
            {"provider": "openai", "model": "gpt-5"},
            {"reasoning": True, "reasoning_effort": "high", "max_tokens": 16000},
        ),
        ({"provider": "openai", "model": "x/claude-opus-4.1"}, {"reasoning": True, "reasoning_effort": "high"}),
        ({"provider": "openai", "model": "mine", "model_args": {"reasoning": True}}, {"reasoning_effort": "high"}),
    ):
        clinician = published.clinician_sampling(identity, base).model_args
        assert clinician is not None and args.items() <= clinician.as_dict().items(), identity
    # What the label compares a call with, in the terms it was sent in.
    assert published.published_call_body("model", "gpt-4o", {}) == {"max_tokens": 16000}
    assert "thinking" in (published.published_call_body("judge", JUDGE, {}) or {})
    gateway_body = published.published_call_body("judge", "x/claude", {"model_args": {"reasoning_effort": "high"}})
    assert gateway_body == {"max_tokens": 16000, "reasoning_effort": "high"}


def test_the_label_names_the_roles_and_the_protocol() -> None:
    given = {"simulator": "gpt-4o", "judge": JUDGE}
    differences = published.role_differences(given, {"simulator": False, "judge": False})
    assert differences == ["the member is not the published claude-haiku-4-5@20251001"]
    assert "self-judged" in published.role_differences(given, {"simulator": False, "judge": True})[-1]
    assert published.role_differences({"simulator": MEMBER, "judge": "claude-sonnet-4-5@20250929"}, {}) == []
    protocol = {"rounds": 10, "clinician_template": "v0_1", "judge_template": "v0_1", "missing_criterion": "default"}
    assert published.protocol_differences(protocol) == []
    changed = {**protocol, "rounds": 1, "clinician_template": "custom", "missing_criterion": "strict"}
    assert published.protocol_differences(changed) == [
        "1 round, not 10",
        "clinician template custom, not v0_1",
        "strict parse (upstream scores a criterion the judge leaves out as 3)",
    ]


def test_the_ranking_test_is_upstreams_rank_systems() -> None:
    items = [str(i) for i in range(12)]
    base = [3.0, 3.5, 2.5, 4.0, 3.25, 2.75, 3.0, 3.5, 4.25, 2.0, 3.75, 3.0]
    runs = {
        "best": {i: v + 1.0 + 0.1 * (n % 3) for n, (i, v) in enumerate(zip(items, base, strict=True))},
        "middle": {i: v + 0.05 * (n % 2) for n, (i, v) in enumerate(zip(items, base, strict=True))},
        "close": {i: v + 0.05 * ((n + 1) % 2) for n, (i, v) in enumerate(zip(items, base, strict=True))},
    }
    ranked = ranking.rank_runs(runs)
    assert ranked["clusters"][0] == ["best"] and sorted(ranked["clusters"][1]) == ["close", "middle"]
    expected = ttest_rel([runs["best"][i] for i in items], [runs["close"][i] for i in items], alternative="greater")
    assert ranked["p_better"]["best"]["close"] == pytest.approx(float(expected.pvalue))
    assert ranked["rank"] == {"best": 1, "middle": 2, "close": 2} and ranked["n_shared"] == 12
    assert math.isclose(ranked["means"]["best"], sum(runs["best"].values()) / 12, abs_tol=1e-4)


def test_a_comparison_of_runs_shows_the_profiles_and_the_ranking(tmp_path: Path) -> None:
    runs = []
    for model in ("scripted/plausible", "scripted/plausible-5"):
        out = tmp_path / model.replace("/", "-")
        args = ["run", "-m", model, "--simulator", "scripted/plausible-2", "--judge", "scripted/plausible-3"]
        done = cli_in_process([*args, "--bench", "mindeval", "--limit", "4", "--out", str(out)])
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(out)
    records = _records(runs[0])
    # A member that is not an Anthropic model gets upstream's history unchanged: its own "Hello" first.
    member_call = next(c for c in records[0]["calls"] if c.get("role") == "simulator")
    assert [m["role"] for m in member_call["messages"]] == ["system", "assistant", "user"]
    assert not any(r["member_placeholder"] for r in records)
    assert 'data-chart="grouped_bars"' in (runs[0] / "report.html").read_text("utf-8")
    # The same command again: every call from the run directory / the cache, the same records.
    args = ["run", "-m", "scripted/plausible", "--simulator", "scripted/plausible-2", "--judge", "scripted/plausible-3"]
    again = cli_in_process([*args, "--bench", "mindeval", "--limit", "4", "--out", str(runs[0])])
    assert again.returncode == 0 and _records(runs[0]) == records
    done = cli_in_process(["report", *map(str, runs)], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    text = (tmp_path / "comparison.json").read_text("utf-8")
    page = (tmp_path / "comparison.html").read_text("utf-8")
    assert "ranking: one-sided paired t-test" in page and "paired t-tests on 4 shared conversations" in page
    assert "mindeval" in text


# --- presets, dry run, list, judge validate ----------------------------------------------------------------------


def test_presets_the_dry_run_and_list() -> None:
    quick, paper = instrument().preset_configs["quick"], instrument().preset_configs["paper"]
    assert (quick.rounds, quick.profiles) == (5, 10) and (paper.rounds, paper.profiles) == (10, None)
    args = ["run", "-m", "openai/gpt-4o", "--simulator", f"anthropic/{MEMBER}", "--judge", f"anthropic/{JUDGE}"]
    done = cli_in_process([*args, "--bench", "mindeval", "--preset", "paper", "--dry-run", "--json"])
    assert done.returncode == 0, done.stderr[-2000:]
    (entry,) = json.loads(done.stdout)["instruments"]
    assert entry["model"]["requests"] == 50 * 10 and entry["simulator"]["requests"] == 50 * 10
    assert entry["judge"]["requests"] == 50
    listed = cli_in_process(["list"])
    assert listed.returncode == 0 and "mindeval" in listed.stdout


def test_judge_validate_bench_mindeval_rates_the_55_conversations_beside_the_experts(tmp_path: Path) -> None:
    out = tmp_path / "validation.json"
    done = cli_in_process(
        ["judge", "validate", "--judge", "scripted/plausible", "--bench", "mindeval", "--out", str(out)]
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text("utf-8"))
    assert report["n_cases"] == 55 and report["n_rated"] == 55 and report["excluded_rows"] == [55, 56, 57, 58, 59]
    experts = report["experts_with_each_other"]["leave_one_out_pearson"]["Overall score"]
    assert experts == pytest.approx(0.41, abs=0.005)
    overall = report["judge_vs_experts"]["Overall score"]
    assert overall["pearson"]["n"] == 55 and overall["kendall_tau_b"]["ci95"][0] is not None
    first_file = report["data_files"][0]
    assert first_file["key"] == data.ANNOTATIONS_KEY and first_file["verified"] is True
    assert "Kendall tau-b" in done.stdout and "experts" in done.stdout
    # The report carries its evidence for `empathybench judges REPORT`: the Overall's Pearson r, the headline.
    assert report["validation"] == "mindeval-validate"
    (headline,) = [figure for figure in report["evidence"] if figure["headline"]]
    assert headline["value"] == overall["pearson"]["value"] and headline["ci95"] == overall["pearson"]["ci95"]
    from empathybench.judges.validation_reports import ValidationReportsSource

    (row,) = [row for row in ValidationReportsSource([tmp_path]).evidence() if row.headline]
    assert (row.value, row.n, row.unit, row.judge) == (headline["value"], 55, "item", report["judge"]["model"])
    refused = cli_in_process(["judge", "validate", "--judge", "scripted/plausible", "--bench", "sage"])
    assert refused.returncode != 0 and "sage has no judge validation" in refused.stderr


def test_a_second_run_of_the_same_conversation_asks_nothing_again(tmp_path: Path) -> None:
    """A run directory removed: the same command replays every turn and the judgment from the response cache."""
    args = ["run", "-m", "scripted/plausible", "--simulator", "scripted/plausible-2", "--judge", "scripted/plausible-3"]
    args += ["--bench", "mindeval", "--limit", "1", "--option", "mindeval.rounds=3"]
    first, second = tmp_path / "a", tmp_path / "b"
    assert cli_in_process([*args, "--out", str(first)]).returncode == 0
    assert cli_in_process([*args, "--out", str(second)]).returncode == 0
    (record,) = _records(second)
    assert len(record["calls"]) == 3 + 3 + 1 and all(call["cached"] for call in record["calls"])
    (earlier,) = _records(first)
    assert record["interaction"] == earlier["interaction"] and record["scores"] == earlier["scores"]
    # The dry run predicts the run's calls per role.
    dry = cli_in_process([*args, "--dry-run", "--json"])
    (entry,) = json.loads(dry.stdout)["instruments"]
    roles = [call.get("role") for call in record["calls"]]
    predicted = (entry["model"]["requests"], entry["simulator"]["requests"], entry["judge"]["requests"])
    assert predicted == (roles.count(None), roles.count("simulator"), roles.count("judge"))


def test_the_demo_cut_runs_self_simulated_and_self_judged_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    done = cli_in_process(["run", "-m", "scripted/echo", "--bench", "mindeval", "--preset", "demo", "--out", str(out)])
    assert done.returncode == 0, done.stderr[-2000:]
    summary = _summary(out)
    assert summary["validity"]["status"] == "self-judged" and summary["self_simulated"] is True
    assert "self-simulated" in summary["comparability"] and "self-judged" in summary["comparability"]
    (record,) = _records(out)
    assert len(record["interaction"]) == 3  # Hello, one clinician turn, one member turn


def test_the_report_orders_the_severity_levels() -> None:
    from empathybench.instruments.mindeval.report import report_section

    levels = {"1": ["severe x", "mild y"], "2": ["minimal to no x", "moderate y"], "3": ["mild x", "severe y"]}
    result = {"overall_by_profile": {"1": 2.0, "2": 4.0, "3": 3.0}, "severity": levels, "metrics": {}}
    severity = report_section(result, []).tables[1]
    assert [row[0] for row in severity.rows] == [
        "depressive: minimal to no x",
        "depressive: mild x",
        "depressive: severe x",
        "anxious: mild y",
        "anxious: moderate y",
        "anxious: severe y",
    ]
    assert [row[1] for row in severity.rows][:3] == [4.0, 3.0, 2.0]


def test_rescore_reads_a_judgments_file_of_upstreams_scripts(tmp_path: Path) -> None:
    """A judgments file in generate_judgments.py's format (its parsed values as upstream's parse gives them, here
    written out by hand): the README's means, the judge's left-out criteria counted, our parse checked against it."""
    full = "\n".join(f"{name}: {value}" for name, value in zip(parse.CRITERIA, (4, 5, 3.5, 4, 2), strict=True))
    partial = "Clinical Accuracy & Competence: 2\n**Ethical & Professional Conduct**: 6"  # 4 criteria left out
    lines = [
        {"unparsed_judgment": full, "parsed": (4, 5, 3.5, 4, 2)},
        {"unparsed_judgment": partial, "parsed": (2, 3, 3, 3, 3)},
    ]
    records = []
    for line in lines:
        values = dict(zip(parse.CRITERIA, line["parsed"], strict=True))
        overall = sum(line["parsed"]) / 5
        parsed = {**values, "Overall score": overall, "Average score": overall}
        unparsed = line["unparsed_judgment"]
        records.append({"parsed_judgment": parsed, "unparsed_judgment": unparsed, "thinking_trace": ""})
    path = tmp_path / "judgments.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", "utf-8")
    done = cli_in_process(["rescore", "mindeval", str(path), "--json"])
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["n_conversations"] == 2 and result["n_disagreeing"] == 0
    assert result["figures"]["Overall score"]["mean"] == pytest.approx((18.5 / 5 + 14 / 5) / 2)
    assert result["figures"]["Clinical Accuracy & Competence"]["mean"] == 3.0
    assert result["missing_criteria"]["Ethical & Professional Conduct"] == 1 and result["n_missing_criteria"] == 4
    # A parsed value our parse does not reproduce is reported; a bad file is one line.
    records[0]["parsed_judgment"]["Assessment & Response"] = 1.0
    path.write_text("\n".join(json.dumps(r) for r in records), "utf-8")
    assert json.loads(cli_in_process(["rescore", "mindeval", str(path), "--json"]).stdout)["n_disagreeing"] == 1
    path.write_text('{"parsed_judgment": 3}\n', "utf-8")
    bad = cli_in_process(["rescore", "mindeval", str(path)])
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1 and "line 1" in bad.stderr
    text = cli_in_process(["rescore", "mindeval", str(tmp_path / "missing.jsonl")])
    assert text.returncode != 0 and "no such file" in text.stderr


def test_judge_validate_sends_the_published_judge_its_published_settings(tmp_path: Path) -> None:
    replies = Replies()
    with FakeAnthropicServer(api_key=ANTHROPIC_KEY, answer=replies.anthropic) as anthropic:
        args = ["judge", "validate", "--judge", f"anthropic/{JUDGE}", "--judge-base-url", anthropic.base_url]
        done = cli_in_process([*args, "--bench", "mindeval", "--limit", "2", "--json"], _env(tmp_path))
        bodies = [r.body for r in anthropic.requests]
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(bodies) == 2 and all(b["thinking"] == {"type": "enabled", "budget_tokens": 4096} for b in bodies)
    assert all(b["max_tokens"] == 16000 and "temperature" not in b for b in bodies)
    assert json.loads(done.stdout)["n_rated"] == 2


def test_a_criterion_of_hundreds_of_digits_reads_as_missing_not_infinity() -> None:
    from empathybench.instruments.mindeval.parse import CRITERIA, parse_judgment

    reply = "\n".join(f"{name}: {'9' * 400 if i == 0 else '4'}" for i, name in enumerate(CRITERIA))
    judgment = parse_judgment(reply)
    assert judgment.missing == (CRITERIA[0],) and all(math.isfinite(v) for v in judgment.scores.values())
