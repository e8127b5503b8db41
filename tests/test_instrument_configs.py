"""Instrument configs are frozen pydantic dataclasses: the dataclass API stays (fields, replace, asdict), values are
validated by the model (types, bounded ranges), each has a JSON schema, and every preset dumps exactly as 0.1 did
(run.json's config and the run fingerprint hash that dump: a changed dump would lose every resume)."""

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from empathybench.errors import UserError
from empathybench.instruments.registry import all_benchmarks
from empathybench.instruments.support import config_schema, field_range

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "configs-0.1.json").read_text("utf-8"))["configs"]


def _preset_configs() -> list[tuple[str, str, Any]]:
    return [
        (name, preset, instrument.configure(preset, {}))
        for name, instrument in sorted(all_benchmarks().items())
        for preset in instrument.presets
    ]


# Fields added since 0.1, with the default that leaves a run as it was (kept out of its recorded config).
ADDED_SINCE_0_1 = {"eqbench3": {"self_judge": False, "max_turns": None, "max_tokens": None}}


def test_every_preset_config_dumps_as_in_0_1() -> None:
    dumped = {
        f"{name}/{preset}": json.loads(json.dumps(dataclasses.asdict(config), default=str))
        for name, preset, config in _preset_configs()
    }
    for key, fields in dumped.items():
        for field, default in ADDED_SINCE_0_1.get(key.split("/")[0], {}).items():
            assert fields.pop(field) == default, (key, field)
    built_in = {key: value for key, value in dumped.items() if key in RECORDED}
    assert built_in == RECORDED
    assert set(RECORDED) <= set(dumped)


def test_a_config_field_added_since_0_1_stays_out_of_the_recorded_config_at_its_default() -> None:
    from empathybench.instruments.eqbench3.bench import recorded_config

    instrument = all_benchmarks()["eqbench3"]
    plain = recorded_config(instrument.configure("quick", {}))
    assert plain == RECORDED["eqbench3/quick"]  # the run's fingerprint is the one 0.1 computed
    demo = recorded_config(instrument.configure("quick", {"self_judge": "true", "max_turns": "1"}))
    assert demo["self_judge"] is True and demo["max_turns"] == 1 and "max_tokens" not in demo


@pytest.mark.parametrize(
    "name",
    sorted(
        {"emobench", "emotionbench", "empathetic", "eqbench", "eqbench3", "giebench", "mindeval", "sage", "seceu"}
        | {"tombench", "tactfultom"}
    ),
)
def test_config_is_a_validated_dataclass_with_a_schema(name: str) -> None:
    config = all_benchmarks()[name].configure("quick", {})
    config_type = type(config)
    assert dataclasses.is_dataclass(config) and hasattr(config_type, "__pydantic_fields__")
    schema = config_schema(config_type)
    fields = dataclasses.fields(config_type)
    assert set(schema["properties"]) == {entry.name for entry in fields}
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(config, fields[0].name, getattr(config, fields[0].name))
    for entry in fields:
        accepted = field_range(config_type, entry.name)
        if accepted is None:
            continue
        # The range is in the schema (on the number, or on the number branch of an optional one) ...
        text = json.dumps(schema["properties"][entry.name])
        assert f'"minimum": {json.dumps(accepted[0])}' in text and f'"maximum": {json.dumps(accepted[1])}' in text
        # ... and the model refuses a value outside it, whoever builds the config.
        with pytest.raises(ValidationError):
            dataclasses.replace(config, **{entry.name: accepted[1] + 1})


def test_a_wrong_type_is_refused_by_the_model() -> None:
    config = all_benchmarks()["eqbench"].configure("quick", {})
    with pytest.raises(ValidationError):
        dataclasses.replace(config, attempts="many")
    with pytest.raises(ValidationError):
        dataclasses.replace(config, revise=[1, 2])


def test_option_mistakes_stay_one_line_user_errors() -> None:
    """apply_options checks a range before the model does, so the message still names the option."""
    emotionbench = all_benchmarks()["emotionbench"]
    with pytest.raises(UserError, match=r"^emotionbench.orders must be between 1 and 100, not '1000'$"):
        emotionbench.configure("quick", {"orders": "1000"})
