"""EmoBench prompts of both protocols, built from the upstream files fetched from the mirror (specs/emobench.md §2)."""

import hashlib
import json
from pathlib import Path

import pytest

from conftest import MIRROR
from empathybench.errors import DataError
from empathybench.instruments.emobench.data import (
    PROMPTS_2025_KEY,
    RESPONSE_2025_KEY,
    load_ea_items,
    load_eu_items,
    load_paper_order,
    read_pinned_text,
)
from empathybench.instruments.emobench.prompts import (
    emotion_for_cause_question,
    load_paper2024_prompts,
    load_repo2025_prompts,
)
from empathybench.instruments.emobench.yamlblocks import parse_block_yaml

# specs/emobench_prompt_hashes.json: sha256 of the rendered repo2025 system messages (PyYAML + upstream code).
SYSTEM_SHA256 = {
    "EU-en-base": "a0e219cf8520895480298517cc9091336d46f74564af933e0add98a096e0c9f7",
    "EU-en-base-qwen": "4367d0be9eba263117ea1373b03bb0e4e646af93fc7857fa9bb2d7e6e9087482",
    "EU-en-cot": "06da8ffd6c9453b78d850eb824a95897d0004db483b20afe361ee0fecb038155",
    "EU-zh-base": "a7db1440e9b54424aaa1e1c18b3a461f65ddeade9bf62f7d1072b6fa6153ad84",
    "EU-zh-base-qwen": "1a798acf01ad96c6048e7b6b51684a7763c2117cc2aaad8acc08046b6fbc943a",
    "EU-zh-cot": "1e6c822dd48d1f69b31147a96118fd67e7200eb77cc08b626fe1f99bb939297e",
    "EA-en-base": "a5365a9323199e29ef56441727737edcac853e7f9aa1cfbf8c1577f3773d0dc2",
    "EA-en-base-qwen": "6017e4fb692e281a7c6e2c191f9cfad4280865b789d45c80ceabfeb29e220343",
    "EA-en-cot": "aebab3737b4f62a51818df24b64f8c24eb6835a5befb64bf97db71c614156f46",
    "EA-zh-base": "164e04cf39858f1b6a60d56fda33177608beb431bafd8cb5a84504ea0b106afb",
    "EA-zh-base-qwen": "97c87b3f7a2d6e5e4f9a4dfea2824e21dd3d421ca973fa935098cdc720851d4a",
    "EA-zh-cot": "c8b1e613b149032fc2065b8b2bab1db627cbe7eaecd04983caf8400723d9489b",
}
SPEC_HASHES = MIRROR.parent / "specs" / "emobench_prompt_hashes.json"


def test_embedded_hashes_equal_the_spec_file() -> None:
    if not SPEC_HASHES.is_file():
        pytest.skip("specs/emobench_prompt_hashes.json is not beside the repository")
    spec = json.loads(SPEC_HASHES.read_text("utf-8"))["system"]
    assert {key: value["sha256"] for key, value in spec.items()} == SYSTEM_SHA256


@pytest.mark.parametrize("key", sorted(SYSTEM_SHA256))
def test_repo2025_system_messages_are_byte_identical(mirror: Path, key: str) -> None:
    task, language, mode, *qwen = key.split("-")
    model = "Qwen/Qwen3-8B" if qwen else "meta-llama/Llama-3.1-8B-Instruct"
    text = load_repo2025_prompts().system(task, language, cot=mode == "cot", model_name=model)
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == SYSTEM_SHA256[key]


def test_no_think_is_keyed_on_the_last_name_component_and_only_without_cot(mirror: Path) -> None:
    prompts = load_repo2025_prompts()
    assert prompts.system("EA", "en", cot=False, model_name="qwen-org/llama").startswith("# Instructions")
    assert prompts.system("EA", "en", cot=False, model_name="org/QwQ-qwen").startswith("/no_think\n\n")
    assert prompts.system("EA", "en", cot=True, model_name="Qwen3").startswith("# Instructions")


def test_block_reader_equals_pyyaml_on_the_upstream_files(mirror: Path) -> None:
    yaml = pytest.importorskip("yaml")
    for key in (PROMPTS_2025_KEY, RESPONSE_2025_KEY):
        text = read_pinned_text(key)
        assert parse_block_yaml(text, key) == yaml.safe_load(text)


def test_block_reader_keeps_yaml_rules_and_refuses_other_shapes() -> None:
    text = "a:\n  en: >\n    one \n    two\n\n    three\n  zh: |\n    x\n\n    y\n\n\nb:\n  en: |\n    end"
    parsed = parse_block_yaml(text, "t")
    assert parsed == {"a": {"en": "one  two\nthree\n", "zh": "x\n\ny\n"}, "b": {"en": "end"}}
    with pytest.raises(DataError):
        parse_block_yaml("a:\n  en: plain\n", "t")


def test_repo2025_user_messages_follow_the_template_in_file_order(mirror: Path) -> None:
    prompts = load_repo2025_prompts()
    eu = next(i for i in load_eu_items() if i.language == "zh" and i.qid == "74")
    ea = next(i for i in load_ea_items() if i.language == "zh" and i.qid == "1")
    eu_messages = prompts.messages(eu, cot=False)
    assert [m.role for m in eu_messages] == ["system", "user"]
    user = eu_messages[1].content
    letters = [chr(ord("A") + n) for n in range(len(eu.cause_choices))]
    assert user.endswith("\n".join(f"{letter}) {c}" for letter, c in zip(letters, eu.cause_choices, strict=True)))
    assert "G) " in user  # the 7-option zh item keeps all its options, unshuffled
    template = read_pinned_text(PROMPTS_2025_KEY)
    assert "{cause_choices}" in template and "{" not in user.replace(eu.scenario, "")
    ea_user = prompts.messages(ea, cot=True)[1].content
    assert ea_user.endswith(f"D) {ea.choices[3]}\n")
    assert "Action" in ea_user  # zh EA carries the English type word (spec §8.4)


def test_paper2024_two_call_eu_and_lower_case_options(mirror: Path) -> None:
    prompts = load_paper2024_prompts()
    item = next(i for i in load_eu_items() if i.language == "en" and i.qid == "1")
    order = load_paper_order("EU", 1, "en")[0]
    first = prompts.emotion_question("en", item.scenario, item.subject, order.choices, cot=False)
    assert first.startswith("Scenario:\n" + item.scenario + "\n")
    assert f"(a) {order.choices[0].strip()}\n(b) " in first
    assert first.endswith("Answer (Only reply with the corresponding letter numbering):\n")
    # the cause call names the model's own emotion; unparsed (-1) names the LAST option, as upstream did
    assert emotion_for_cause_question(order.choices, -1) == order.choices[-1]
    second = prompts.cause_question(
        "en", item.scenario, item.subject, emotion_for_cause_question(order.choices, 2), order.cause_choices, cot=True
    )
    assert f"feel {order.choices[2]} in this situation?" in second
    assert second.endswith("Answer:\nLet's think step by step\n")
    messages = prompts.messages("zh", "x", cot=True)
    assert messages[0].content == prompts.dicts["System_cot"]["zh"] and messages[1].content == "x"
    ea = prompts.action_question("zh", "s", "n", "行动", ("p", "q"), cot=False)
    assert "(a) p\n(b) q\n" in ea and ea.endswith("答案:（仅回复相应的字母编号）:\n")
