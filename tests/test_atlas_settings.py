"""The settings of every released run as upstream recorded them, quantisation included, and the reproduction check
naming each one that differs from a run's."""

from pathlib import Path
from typing import Any

from empathybench.atlas.data import shipped_atlas
from empathybench.atlas.reproduce import NOT_RECORDED, run_quantisation, setting_differences
from empathybench.instruments.eqbench.atlas import quantisation
from empathybench.models.llamacpp_backend import gguf_quant_tag
from empathybench.rundir.reader import RunData


def _eqbench_settings() -> dict[str, dict[str, Any]]:
    return {e["model"]: e["settings"] for e in shipped_atlas()["entries"] if e["instrument"] == "eqbench"}


def test_eqbench_v2_records_each_released_runs_quantisation_from_its_file() -> None:
    settings = _eqbench_settings()
    # specs/atlas-current.md §1: the GGUF file each download pattern names in index_string
    assert settings["TheBloke/Llama-2-70B-Chat-GGUF"]["quantisation"] == "GGUF Q4_K_M"
    assert settings["TheBloke/Mixtral-8x7B-Instruct-v0.1-GGUF"]["quantisation"] == "GGUF Q3_K_M"
    assert settings["NousResearch/Nous-Hermes-2-Yi-34B-GGUF"]["quantisation"] == "GGUF Q8_0"
    assert settings["miqudev/miqu-1-70b"]["quantisation"] == "GGUF Q4_K_M"  # "*q4_k_m.gguf", lower case
    assert settings["TheBloke/Llama-2-13B-chat-AWQ"]["quantisation"] == "AWQ"  # the model path says it
    assert settings["Qwen/Qwen-72B-Chat"]["quantisation"] == "bitsandbytes 4bit"
    assert settings["gpt-4-0613"]["quantisation"] is None  # a provider's API: not recorded
    assert settings["TheBloke/Llama-2-70B-Chat-GGUF"]["ooba_params"] == "--loader llama.cpp --n-gpu-layers -1"
    values = [s["quantisation"] for s in settings.values()]
    assert sum(str(v).startswith("GGUF Q") for v in values) == 23
    assert values.count("GGUF (quantisation not recorded)") == 2  # Falcon-180B and MegaDolphin: no pattern


def test_quantisation_reads_each_field_upstream_uses() -> None:
    gguf = {"index_string": '1--v2--x----ChatML--none--ooba----include ["*Q5_K_M.gguf", "*.json"]', "model_path": "x"}
    assert quantisation(gguf) == "GGUF Q5_K_M"
    assert quantisation({"model_path": "TheBloke/x-GPTQ", "bitsandbytes_quant": "none"}) == "GPTQ"
    assert quantisation({"model_path": "org/x", "bitsandbytes_quant": "8bit"}) == "bitsandbytes 8bit"
    assert quantisation({"model_path": "org/x", "bitsandbytes_quant": "none"}) == "none"
    assert quantisation({"model_path": "gpt-4", "bitsandbytes_quant": ""}) is None
    assert gguf_quant_tag("models/qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf") == "Q4_K_M"
    assert gguf_quant_tag("model-IQ4_XS.gguf") == "IQ4_XS" and gguf_quant_tag("TheBloke/Llama-2-70B-Chat-GGUF") is None


def _run(model: str) -> RunData:
    summary = {"model": model, "benchmarks": {"eqbench": {"config": {"sigmoid_rule": "lt5"}}}}
    return RunData(Path("run"), summary, {})


def test_the_reproduction_check_names_a_quantisation_that_differs() -> None:
    published = _eqbench_settings()["TheBloke/Llama-2-70B-Chat-GGUF"]
    other = setting_differences(_run("llamacpp/models/llama-2-70b-chat.Q8_0.gguf"), "eqbench", published)
    assert other["differs"]["quantisation"] == {"run": "GGUF Q8_0", "published": "GGUF Q4_K_M"}
    same = setting_differences(_run("llamacpp/models/llama-2-70b-chat.Q4_K_M.gguf"), "eqbench", published)
    assert "quantisation" not in same["differs"] and "quantisation" not in same["not_recorded_by_the_run"]
    served = setting_differences(_run("openai/meta-llama/Llama-2-70b-chat-hf"), "eqbench", published)
    assert run_quantisation(_run("openai/x")) == NOT_RECORDED
    assert served["not_recorded_by_the_run"]["quantisation"] == "GGUF Q4_K_M"
    assert "quantisation" not in served["differs"]
    # full weights published, a quantised run: named too
    full = setting_differences(_run("llamacpp/m.Q4_K_M.gguf"), "eqbench", {"quantisation": "none"})
    assert full["differs"] == {"quantisation": {"run": "GGUF Q4_K_M", "published": "none"}}
