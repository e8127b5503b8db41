"""Spiral-Bench's messages are the ones upstream's code builds, byte for byte (computed here by running the pinned
main.py and conversation_runner.py on the same inputs), and the judges' replies are read as upstream reads them."""

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import spiral_upstream as up
from conftest import MIRROR
from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import Engine, ItemContext, RetryPolicy
from empathybench.instruments.spiral import data, dialogue, parse, prompts
from empathybench.instruments.spiral.upstream import UpstreamCodeError, evaluate
from empathybench.models.base import ChatRequest
from empathybench.models.scripted import ScriptedBackend

pytestmark = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"the offline mirror is not at {MIRROR}")


@pytest.fixture(scope="module")
def protocol() -> data.SpiralProtocol:
    return data.load_protocol()[0]


@pytest.fixture(scope="module")
def released() -> dict[str, Any]:
    return json.loads(data.development_result_path().read_text("utf-8"))["1"]["eval_prompts_v0.2.json"]


def _as_dicts(messages: list[Any]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def test_the_user_agents_system_prompt_is_the_one_every_released_conversation_records(
    protocol: data.SpiralProtocol, released: dict[str, Any]
) -> None:
    openings = {o.prompt_id: o for o in protocol.openings}
    assert len(openings) == 30 and len({o.category for o in protocol.openings}) == 6
    for prompt_id, (conversation,) in released.items():
        assert prompts.user_system_prompt(protocol, openings[prompt_id]) == conversation["user_system_prompt"]
        assert conversation["transcript"][0]["content"] == openings[prompt_id].prompts[0]


def test_the_injection_schedule_of_every_released_conversation_is_drawn_again(
    protocol: data.SpiralProtocol, released: dict[str, Any]
) -> None:
    """upstream seeds random.Random with "<run id>-<prompt id>-<convo index>" (run id "1" in the released file)."""
    drawn_any = 0
    for prompt_id, (conversation,) in released.items():
        schedule = prompts.InjectionSchedule(prompts.injection_seed("1", prompt_id, 0), protocol.injections, 5)
        log = [""] + ["" if turn["role"] == "assistant" else schedule.next() for turn in conversation["transcript"][1:]]
        assert log == conversation["injections_log"], prompt_id
        drawn_any += sum(1 for injection in log if injection)
    assert drawn_any > 30  # about one user-agent move in five


def _scripted_reply(model: str, messages: list[dict[str, str]]) -> str:
    """The same answer for the same messages, upstream or ours: who is asked and how long the history is."""
    return f"{model} says {len(messages)}: " + messages[-1]["content"][-40:].replace("\n", " ")


def test_a_whole_conversation_sends_every_role_the_messages_upstreams_runner_sends(
    protocol: data.SpiralProtocol, tmp_path: Path
) -> None:
    opening = next(o for o in protocol.openings if o.prompt_id == "mp01")
    turns = 12
    seed = prompts.injection_seed("7", opening.prompt_id, 0)
    run_conversation, upstream_calls = up.run_conversation(_scripted_reply)
    result = run_conversation(
        user_model="user-agent",
        evaluated_model="model",
        user_system_prompt=prompts.user_system_prompt(protocol, opening),
        evaluated_system_prompt="",
        canned_prompts=list(opening.prompts),
        num_turns=turns,
        user_agent_api_key="k",
        user_agent_base_url="u",
        evaluated_model_api_key="k",
        evaluated_model_base_url="u",
        site_url="s",
        max_retries=1,
        backoff_factor=1,
        injections=list(protocol.injections),
        injection_frequency=5,
        seed=seed,
    )
    assert sum(1 for i in result.injections_log if i) >= 2  # the seed chosen so that injections happen

    def responder(name: str) -> Any:
        return lambda request: _scripted_reply(name, request.messages_as_dicts())

    cache = ResponseCache(tmp_path / "responses.sqlite")
    retry = RetryPolicy(max_retries=0)
    model, agent = ScriptedBackend("model", responder("model")), ScriptedBackend("user-agent", responder("user-agent"))
    ctx = ItemContext(
        Engine(model, cache=cache, retry=retry), "mp01", 0, tag="spiral",
        simulator_engine=Engine(agent, cache=cache, retry=retry),
    )  # fmt: skip
    settings = dialogue.DialogueSettings(num_turns=turns, attempts=1, injection_every_n=5, injection_seed=seed)
    ours = asyncio.run(dialogue.play_conversation(ctx, protocol, opening, settings))

    upstream_model = [c["messages"] for c in upstream_calls.calls if c["model"] == "model"]
    upstream_agent = [c["messages"] for c in upstream_calls.calls if c["model"] == "user-agent"]
    assert [r.messages_as_dicts() for r in model.calls] == upstream_model
    # upstream asks the user agent once more after the last turn; that message is never judged
    assert len(upstream_agent) == turns and len(agent.calls) == turns - 1
    assert [r.messages_as_dicts() for r in agent.calls] == upstream_agent[:-1]
    assert ours.transcript == result.transcript[:-1] and ours.injections_log == result.injections_log[:-1]
    assert all("max_tokens" not in c for c in upstream_calls.calls)  # api_client's default 3072 applies
    assert model.calls[0].sampling.max_tokens == 3072 and model.calls[0].sampling.temperature == 0.3
    assert ctx.calls[1]["role"] == "simulator"


def _upstream_chunks(
    protocol: data.SpiralProtocol, conversation: dict[str, Any], reply: str, chunk_size: int, max_chars: int
) -> tuple[list[dict[str, Any]], list[list[dict[str, str]]]]:
    functions, completion = up.main_functions(lambda model, messages: reply)
    results = up.Results()
    chunks = functions["make_chunks"](conversation["transcript"], chunk_size)
    for index, pairs in enumerate(chunks):
        task = {
            "file_key": "f",
            "prompt_key": "p",
            "convo_index": 0,
            "chunk_index": index,
            "initial_user": conversation["transcript"][0]["content"],
            "chunk_pairs": pairs,
            "expected_metrics": list(protocol.criteria),  # upstream's set, in the file's order (see data.py)
            "conversation_data": {"transcript": conversation["transcript"]},
        }
        functions["judge_worker"](task, up.judge_args(chunk_size, max_chars), up.ENV, results, "", "")
    stored = results.data["1"]["f"]["p"][0]["judgements"]
    return [stored[f"chunk{i}"] for i in range(len(chunks))], [c["messages"] for c in completion.calls]


@pytest.mark.parametrize(("chunk_size", "max_chars"), [(1, 20000), (3, 300), (2, 0)])
def test_chunk_judge_prompts_and_records_are_upstreams(
    protocol: data.SpiralProtocol, released: dict[str, Any], chunk_size: int, max_chars: int
) -> None:
    (conversation,) = released["td03"]
    reply = conversation["judgements"]["chunk4"]["raw_text"]
    upstream_records, upstream_messages = _upstream_chunks(protocol, conversation, reply, chunk_size, max_chars)
    chunks = prompts.make_chunks(conversation["transcript"], chunk_size)
    assert len(chunks) == len(upstream_records) == -(-19 // chunk_size)  # 20 turns: the first reply is not judged
    for index, pairs in enumerate(chunks):
        built = prompts.chunk_judge_prompt(
            protocol, conversation["transcript"][0]["content"], pairs, index, chunk_size=chunk_size,
            assistant_max_chars=max_chars,
        )  # fmt: skip
        assert _as_dicts(built.messages) == upstream_messages[index]
        record = parse.parse_chunk_judgement(reply).as_record(
            reply, built.assistant_turn_indexes, built.assistant_length_chars
        )
        assert record == upstream_records[index]


def test_every_released_chunk_is_rechunked_and_its_judge_reply_reread_as_stored(
    protocol: data.SpiralProtocol, released: dict[str, Any]
) -> None:
    checked = stubs = 0
    for prompt_id, (conversation,) in released.items():
        chunks = prompts.make_chunks(conversation["transcript"], 1)
        assert len(chunks) == len(conversation["judgements"]) == 19, prompt_id
        for index, pairs in enumerate(chunks):
            stored = conversation["judgements"][f"chunk{index}"]
            if "error" in stored:  # upstream kept no reply text for these: its JSON did not parse
                stubs += 1
                assert stored["error"].startswith("Expecting")
                continue
            built = prompts.chunk_judge_prompt(
                protocol, conversation["transcript"][0]["content"], pairs, index, chunk_size=1,
                assistant_max_chars=20000,
            )  # fmt: skip
            record = parse.parse_chunk_judgement(stored["raw_text"]).as_record(
                stored["raw_text"], built.assistant_turn_indexes, built.assistant_length_chars
            )
            assert record == stored, (prompt_id, index)
            checked += 1
    assert (checked, stubs) == (567, 3)


TRICKY_REPLIES = [
    "no json here",
    "# Result\n{ not json }",
    '{"pushback": [["too", "far"],]}',
    '# Result\n{"Safe_Redirection": 2, "pushback": [["  x  ", "2"], {"snippet": " y ", "strength": 9}, ["", 3], '
    '"bad", [1, 2, 3], {"strength": 2}, ["z", -4], ["w", 2.9], ["v", "two"], ["u", null]], "harmful advice": "none",'
    ' "de-escalation": 0, "sycophancy or praise": -2, "Delusion Reinforcement": true}',
    '{"pushback": [[5, 1]]}',  # a snippet that is not text: upstream's .strip() raises
    '{"pushback": [["' + "long " * 60 + '", 1]], "x": {"nested": [1]}}',
    '[{"a": 1}] and {"b": 2}',
    '{"a": 1} text {"b": 2}',
    '{"pushback": 1e999}',  # int(inf) raises
    '{"pushback": NaN}',
    '{"pushback": 3.7, "pushback_": []}',
]


@pytest.mark.parametrize("reply", TRICKY_REPLIES)
def test_a_malformed_or_odd_chunk_reply_is_read_as_upstream_reads_it(
    protocol: data.SpiralProtocol, released: dict[str, Any], reply: str
) -> None:
    (conversation,) = released["sc02"]
    upstream_records, _ = _upstream_chunks(protocol, conversation, reply, 19, 20000)  # one chunk
    ours = parse.parse_chunk_judgement(reply)
    expected = upstream_records[0]
    if "error" in expected:
        assert ours.error is not None
        if not expected["error"].startswith("Unexpected"):  # upstream's own wording of other exceptions differs
            assert ours.error == expected["error"]
    else:
        assert ours.error is None
        assert (ours.metrics, ours.full_metrics) == (expected["metrics"], expected["full_metrics"])


def test_the_final_judge_prompt_and_its_reading_are_upstreams(
    protocol: data.SpiralProtocol, released: dict[str, Any]
) -> None:
    for prompt_id in ("ec05", "eac01"):
        (conversation,) = released[prompt_id]
        reply = "Here you go:\n" + json.dumps(conversation["final_judgement"], indent=2) + "\nthanks"
        functions, completion = up.main_functions(lambda model, messages, reply=reply: reply)
        results = up.Results()
        task = {"file_key": "f", "prompt_key": "p", "convo_index": 0, "conversation_data": conversation}
        functions["final_judge_worker"](task, up.judge_args(), up.ENV, results, protocol.final_judge_template)
        (call,) = completion.calls
        assert conversation["transcript"][-1]["role"] == "user"  # upstream drops it from the prompt
        assert _as_dicts(prompts.final_judge_messages(protocol, conversation["transcript"])) == call["messages"]
        assert call["max_tokens"] == prompts.FINAL_JUDGE_SAMPLING.max_tokens
        value, error = parse.parse_final_judgement(reply)
        assert error is None and value == results.saved[0]["final_judgement"] == conversation["final_judgement"]
    assert parse.parse_final_judgement("none") == (None, "Final judge did not return JSON")
    assert parse.parse_final_judgement("{off_rails: 3}")[0] is None


def test_a_reply_of_many_braces_is_read_in_linear_time() -> None:
    import time

    started = time.perf_counter()
    assert parse.parse_chunk_judgement("{" * 200_000).error == "Judge did not return a valid JSON object."
    assert parse.parse_chunk_judgement("{" * 100_000 + "}").error is not None
    assert time.perf_counter() - started < 2.0


def test_a_number_of_incidences_is_bounded_but_scored_as_upstream() -> None:
    judged = parse.parse_chunk_judgement('{"pushback": 1000000000}')
    assert judged.metrics == {"pushback": 1e9}  # upstream's sum; scoring caps a chunk at 5 either way
    assert judged.full_metrics is not None and len(judged.full_metrics["pushback"]) == parse.MAX_LISTED_INCIDENCES


def test_the_evaluator_runs_no_code_it_does_not_know() -> None:
    import ast

    for source in ("__import__('os').system('true')", "x.upper()", "open('f').read()", "[a for a in b if a]"):
        with pytest.raises(UpstreamCodeError):
            evaluate(ast.parse(source, mode="eval").body, {"x": "s", "b": [1]})
    assert evaluate(ast.parse("f'{a}-{b[0]}' + 'c'.strip()", mode="eval").body, {"a": 1, "b": ["z"]}) == "1-zc"


def test_scripted_canned_answers_have_upstreams_formats(
    protocol: data.SpiralProtocol, released: dict[str, Any]
) -> None:
    from empathybench.instruments.spiral.canned import canned_answer
    from empathybench.models.base import Draw

    (conversation,) = released["ie02"]
    chunk = prompts.make_chunks(conversation["transcript"], 1)[3]
    built = prompts.chunk_judge_prompt(
        protocol, conversation["transcript"][0]["content"], chunk, 3, chunk_size=1, assistant_max_chars=20000
    )
    answer = canned_answer(ChatRequest(tuple(built.messages), prompts.CHUNK_JUDGE_SAMPLING, "spiral:judge"), Draw(1))
    judged = parse.parse_chunk_judgement(answer or "")
    assert judged.error is None and judged.metrics is not None
    assert set(judged.metrics) == set(prompts.criterion_keys(protocol.criteria))
    final = prompts.final_judge_messages(protocol, conversation["transcript"])
    value, error = parse.parse_final_judgement(
        canned_answer(ChatRequest(tuple(final), prompts.FINAL_JUDGE_SAMPLING, "spiral:judge"), Draw(1)) or ""
    )
    assert error is None and set(value) == {"off_rails", "safety", "social_dexterity"}
    seeker = canned_answer(ChatRequest(tuple(final), prompts.CONVERSATION_SAMPLING, "spiral:simulator"), Draw(1))
    assert seeker and seeker == seeker.lower()
