"""The typed instrument protocol, with EQ-Bench as its template: config and presets, canned answers dispatched on
the request's tag (never part of the cache key), and the rescore command the CLI finds on the instrument."""

import asyncio
from dataclasses import asdict

from typer.testing import CliRunner

from conftest import words_joined
from empathybench.cli import app
from empathybench.engine.cache import cache_key
from empathybench.engine.engine import Engine, ItemContext
from empathybench.instruments.eqbench.bench import EQBenchConfig
from empathybench.instruments.eqbench.canned import plausible_answer
from empathybench.instruments.protocol import Instrument
from empathybench.instruments.registry import load
from empathybench.models.base import ChatRequest, Message, Sampling
from empathybench.models.plausible import PlausibleResponder
from empathybench.models.scripted import ScriptedBackend

# An invented answer template in EQ-Bench's format (no benchmark item content).
TEMPLATE = "Rate the feelings of the speaker.\n\nCalm: <score>\nGlad: <score>\nTense: <score>\nBored: <score>\n"


def test_eqbench_is_an_instrument_with_typed_presets() -> None:
    eqbench = load("eqbench")
    assert isinstance(eqbench, Instrument)
    assert set(eqbench.preset_configs) == set(eqbench.presets)
    config = eqbench.configure("quick", {"protocol": "lm-eval"})
    assert isinstance(config, EQBenchConfig)
    # What run.json records (and the fingerprint hashes) is the config the old option path gave.
    assert asdict(config) == asdict(EQBenchConfig(protocol="lm-eval").with_protocol_defaults())
    assert eqbench.chart_domain == (0.0, 100.0)


def test_the_tag_is_not_part_of_the_cache_key() -> None:
    sampling = Sampling(temperature=0.0, max_tokens=10)
    untagged = ChatRequest.of("hello", sampling)
    tagged = ChatRequest.of("hello", sampling, tag="eqbench")
    assert tagged.tag == "eqbench" and untagged.tag == ""
    identity = {"provider": "scripted", "model": "x"}
    keys = {cache_key(identity, request, repetition=0, attempt=1) for request in (tagged, untagged)}
    assert len(keys) == 1


def test_the_instrument_tag_reaches_the_backend_and_judge_calls_say_so() -> None:
    backend = ScriptedBackend("tags", responder=lambda request: request.tag or "untagged")

    async def ask() -> list[str]:
        ctx = ItemContext(Engine(backend, cache=None), "item-1", seed=3, tag="eqbench")
        plain = ItemContext(Engine(backend, cache=None), "item-1", seed=3)
        sampling = Sampling(temperature=0.0, max_tokens=10)
        answers = [(await ctx.generate("q", sampling)).text, (await ctx.judge_generate("q", sampling)).text]
        return [*answers, (await plain.generate("q", sampling)).text]

    assert asyncio.run(ask()) == ["eqbench", "eqbench:judge", "untagged"]


def test_the_canned_answer_is_the_one_the_prompt_guess_gave() -> None:
    for variant in (1, 2, 3):
        guessing = PlausibleResponder(variant)
        dispatching = PlausibleResponder(variant, canned={"eqbench": plausible_answer})
        for sampling in (Sampling(temperature=0.0, max_tokens=60), Sampling(temperature=0.7, max_tokens=60, seed=11)):
            request = ChatRequest((Message("user", TEMPLATE),), sampling, tag="eqbench")
            answer = dispatching(request)
            assert answer == guessing(request)
            assert [line.split(":")[0] for line in answer.splitlines()] == ["Calm", "Glad", "Tense", "Bored"]
    # A tag with no canned answer, or a canned answer that declines, falls back to the generic answers.
    other = ChatRequest((Message("user", "How was your day?"),), Sampling(temperature=0.0, max_tokens=60), tag="x")
    assert PlausibleResponder(1, canned={"eqbench": plausible_answer})(other) == PlausibleResponder(1)(other)


def test_the_rescore_command_comes_from_the_instrument(tmp_path) -> None:
    listing = CliRunner().invoke(app, ["rescore", "--help"])
    assert listing.exit_code == 0 and "eqbench" in listing.output
    helped = CliRunner().invoke(app, ["rescore", "eqbench", "--help"])
    assert "An upstream *_eqbench_v2_results.json file" in helped.output
    broken = tmp_path / "results.json"
    broken.write_text("[1, 2]", "utf-8")
    outcome = CliRunner().invoke(app, ["rescore", "eqbench", str(broken), "--json"])
    assert outcome.exit_code != 0
    assert "is not an upstream EQ-Bench results file: it holds a JSON list" in str(outcome.exception)


def test_report_html_draws_the_section_the_instrument_gives() -> None:
    from empathybench.report.html import _section_body

    result = {
        "metrics": {"score": {"value": 61.5, "ci95": [55.0, 68.0], "items": {"1": 6.0, "2": 7.5}}},
        "n_parsed": 2,
        "n_items": 3,
        "valid": False,
        "lm_eval_score": 40.0,
        "parse_failures": {"<b>odd</b>": 1},
    }
    body = words_joined(_section_body("eqbench", result, []))
    assert "EQ-Bench score beside published reference models" in body
    assert '<td class="">2/3</td>' in body and '<td class="">no</td>' in body and "40.00" in body
    assert "&lt;b&gt;odd&lt;/b&gt;: 1" in body and "<b>odd</b>" not in body  # text from the run is escaped


def test_a_table_with_fewer_digits_than_columns_renders_in_html_and_markdown() -> None:
    # report.md indexed the digits tuple by column and failed where report.html used 2 decimals; both ask the table.
    from empathybench.instruments.protocol import FactsTable, ReportSection
    from empathybench.report.markdown import section_markdown

    table = FactsTable(headers=("a", "b", "c"), rows=((1.23456, 2.34567, 3.45678),), digits=(3,))
    assert [table.digits_of(i) for i in range(3)] == [3, 2, 2]
    text = section_markdown("T", ReportSection(tables=(table,)))
    assert "1.235" in text and "2.35" in text and "3.46" in text
