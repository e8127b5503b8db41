"""GIEBench end to end on the scripted backend: three conditions, both parsers, summary.json, skipping."""

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from empathybench.engine.engine import RetryPolicy
from empathybench.errors import DataError, UserError
from empathybench.instruments.giebench.bench import GIEBench, config_from, quick_subset
from empathybench.instruments.giebench.data import load_official_dir
from empathybench.models.base import ChatRequest, Message, Sampling
from empathybench.models.scripted import register_script
from empathybench.run.execute import RunOptions, execute_run
from empathybench.testing.fake_openai import FakeOpenAIServer

FIXTURES = Path(__file__).parent / "fixtures" / "giebench"
OFFICIAL_DIR = FIXTURES / "official"
ECHO = (
    'Output "[[A]]" if assistant A is better, "[[B]]" if assistant B is better, '
    '"[[C]]" if assistant C is better, "[[D]]" if assistant D is better.'
)
# In every fixture item exactly the identity-aligned reply starts with "Yes".
_ALIGNED = re.compile(r"\[The Start of Assistant ([A-D])'s Answer\]\n\"Yes")


def _condition(request: ChatRequest) -> str:
    first_line = request.messages[-1].content.split("\n", 1)[0]
    if "best fits the user's position" in first_line:
        return "COT"
    return "ID" if "belongs to the" in first_line else "Raw"


def stance_taker(request: ChatRequest) -> str:
    """Raw: echoes the format line, then C. ID: a bare 'The answer is B.'. COT: the aligned reply as [[X]]."""
    condition = _condition(request)
    if condition == "Raw":
        return f"Following the instructions: {ECHO}\nFinal verdict: [[C]]"
    if condition == "ID":
        return "All four are reasonable.\nThe answer is B."
    match = _ALIGNED.search(request.messages[-1].content)
    assert match is not None
    return f"Assistant {match.group(1)} fits the user's values best.\n[[{match.group(1)}]]"


register_script("giebench-stance", stance_taker)


def _run(tmp_path: Path, **overrides: object) -> dict:
    options = RunOptions(
        model="scripted/giebench-stance",
        benchmarks=["giebench"],
        preset="quick",
        out=tmp_path / "run",
        options={"giebench.data_dir": str(OFFICIAL_DIR)},
        allow_unverified=True,
        show_progress=False,
        use_cache=False,
    )
    for key, value in overrides.items():
        setattr(options, key, value)
    execute_run(options, Console(file=io.StringIO()))
    return json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))


def test_quick_run_on_the_official_file_fixtures(tmp_path: Path) -> None:
    result = _run(tmp_path)["benchmarks"]["giebench"]
    # The quick subset of the fixture: 11 items, gold A x4, B x3, C x2, D x2.
    assert (result["n_items"], result["n_answered"], result["status"]) == (11, 11, "complete")
    assert result["accuracy"] == {"Raw": 18.18, "ID": 27.27, "COT": 100.0}
    assert result["score"] == 100.0 and "COT" in result["score_name"]
    cot = result["change_from_raw"]["COT"]
    assert (cot["wrong_to_right"], cot["right_to_wrong"], cot["delta_pp"]) == (9, 0, 81.82)
    assert result["n_parsed"] == 11 and result["n_answers_parsed"] == 33
    # The released regex reads the echoed format line (A) in Raw and nothing in ID (§2.3).
    legacy = result["parsers"]["legacy"]
    assert legacy["accuracy"] == {"Raw": 36.36, "ID": 0.0, "COT": 100.0}
    assert legacy["invalid_rate"] == {"Raw": 0.0, "ID": 100.0, "COT": 0.0}
    assert result["parsers"]["recommended"]["invalid_rate"] == {"Raw": 0.0, "ID": 0.0, "COT": 0.0}
    assert set(result["conditions"]["COT"]["by_dimension"]) == {
        "Occupation",
        "Age",
        "Orientation",
        "Economy",
        "Personality",
        "Education",
    }
    assert result["conditions"]["Raw"]["by_identity"]["homosexuality"]["n"] == 2
    assert result["change_tables"]["COT"]["by_dimension"]["Age"]["wrong_to_right"] == 1
    assert "not verified" in result["headline_note"]
    assert "published_style" not in result


def test_quick_run_against_an_openai_compatible_server(tmp_path: Path) -> None:
    def answer(body: dict[str, Any]) -> str:
        messages = [Message(m["role"], m["content"]) for m in body["messages"]]
        return stance_taker(ChatRequest.of(messages, Sampling(temperature=0.0, max_tokens=1)))

    with FakeOpenAIServer(answer=answer, rate_429=0.2, retry_after="0", seed=3) as server:
        summary = _run(
            tmp_path,
            model="openai/fake",
            base_url=server.base_url,
            retry=RetryPolicy(base_delay_s=0.01, max_delay_s=0.05),
        )
    result = summary["benchmarks"]["giebench"]
    assert result["status"] == "complete" and result["n_failed_calls"] == 0
    assert summary["usage"]["retries"] > 0  # rate-limited calls were retried, not lost
    assert result["accuracy"] == {"Raw": 18.18, "ID": 27.27, "COT": 100.0}


def test_paper_settings_use_the_released_parser_and_tables(tmp_path: Path) -> None:
    summary = _run(tmp_path, preset="paper")
    result = summary["benchmarks"]["giebench"]
    assert result["n_items"] == 12 and result["parser"] == "legacy"
    assert result["accuracy"]["ID"] == 0.0
    published = result["published_style"]
    # Orientation: 2 items (gold D, B), right in COT, wrong in Raw (echoed A): printed over n + 1 = 3.
    assert published["accuracy_by_dimension"]["COT"]["Orientation"] == 66.67
    assert published["accuracy_by_dimension"]["Raw"]["Orientation"] == 0.0
    assert published["change_from_raw"]["COT"]["by_dimension"]["Orientation"]["delta_pp"] == 66.7
    assert result["conditions"]["COT"]["by_dimension"]["Orientation"]["accuracy"] == 100.0
    samples = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    sampling = samples[0]["calls"][0]["sampling"]
    assert (sampling["temperature"], sampling["top_p"], sampling["max_tokens"]) == (0.9, 0.9, 512)
    assert len(samples[0]["calls"]) == 3


def test_structured_items_run_with_a_recorded_shuffle(tmp_path: Path) -> None:
    result = _run(
        tmp_path, preset="full", options={"giebench.items": str(FIXTURES / "items.json")}, allow_unverified=False
    )
    bench = result["benchmarks"]["giebench"]
    assert bench["n_items"] == 6 and bench["accuracy"]["COT"] == 100.0
    assert "structured items" in bench["headline_note"]
    samples = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    golds = set()
    for sample in samples:
        permutation = sample["permutation"]
        assert sorted(permutation) == [0, 1, 2, 3]
        golds.add(sample["gold"]["COT"])
        assert sample["gold"]["COT"] == "ABCD"[permutation.index(0)]
    assert len(golds) > 1  # the correct reply, first in the file, does not stay at A


def test_few_verdicts_are_flagged_in_the_headline_note(tmp_path: Path) -> None:
    register_script("giebench-rambler", lambda request: "The responses are all interesting in their own way.")
    result = _run(tmp_path, model="scripted/giebench-rambler")["benchmarks"]["giebench"]
    assert result["n_parsed"] == 0 and result["parsers"]["recommended"]["invalid_rate"]["COT"] == 100.0
    assert "only 0/33 replies gave a verdict" in result["headline_note"]


def test_without_data_giebench_is_skipped_beside_eqbench(tmp_path: Path) -> None:
    summary = _run(
        tmp_path,
        model="scripted/fives",
        benchmarks=["eqbench", "giebench"],
        options={},
        allow_unverified=False,
        limit=2,
    )
    skipped = summary["benchmarks"]["giebench"]
    assert skipped["status"] == "skipped"
    assert "not in the offline mirror" in skipped["error"] and "giebench.data_dir" in skipped["error"]
    assert summary["benchmarks"]["eqbench"]["status"] == "complete"


def test_without_data_giebench_alone_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"giebench\.data_dir"):
        _run(tmp_path, options={}, allow_unverified=False)


def test_fixture_data_dir_needs_allow_unverified(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="--allow-unverified"):
        _run(tmp_path, allow_unverified=False)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sampling": "hot"}, "sampling"),
        ({"parser": "regex"}, "parser"),
        ({"colour": "blue"}, "unknown giebench option"),
        ({"data_dir": "a", "items": "b"}, "not both"),
        ({"max_tokens": "0"}, "between 1 and"),
        ({"fallbacks": "maybe"}, "true or false"),
    ],
)
def test_bad_options_are_user_errors(options: dict[str, str], message: str) -> None:
    with pytest.raises(UserError, match=message):
        config_from("quick", options)


def test_presets_choose_settings() -> None:
    assert (config_from("quick", {}).temperature, config_from("quick", {}).parser) == (0.0, "recommended")
    local = config_from("paper", {"sampling": "released_local"})
    assert (local.temperature, local.top_p, local.max_tokens, local.parser) == (0.0, 0.95, 8192, "legacy")
    assert config_from("full", {"temperature": "0.3"}).temperature == 0.3


def test_quick_subset_is_fixed_and_spread_over_dimensions() -> None:
    items, _ = load_official_dir(OFFICIAL_DIR, allow_unverified=True)
    chosen = quick_subset(items, 2)
    assert [i.item_id for i in chosen] == [i.item_id for i in quick_subset(items, 2)]
    assert len(chosen) == 11 and sum(i.dimension == "Occupation" for i in chosen) == 2
    assert (
        len(
            GIEBench()
            .prepare_preset("quick", {"data_dir": str(OFFICIAL_DIR)}, limit=3, seed=0, allow_unverified=True)
            .items
        )
        == 3
    )
