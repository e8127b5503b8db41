"""The atlas: every released per-model output scored by its instrument's own scorer, rebuilt from the mirror and
held equal to the file that ships with the package; bad files are one line; the model identity table."""

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR, cli_in_process
from empathybench.atlas.analysis import setting_effects
from empathybench.atlas.build import build_atlas, dumps, instrument_entries, score_run
from empathybench.atlas.data import check_atlas, read_atlas, shipped_atlas, shipped_path
from empathybench.data.registry import DataFile
from empathybench.errors import UserError
from empathybench.instruments.protocol import AtlasSource, ReleasedRun
from empathybench.instruments.registry import all_benchmarks, load
from empathybench.models.identity import identity_table

pytestmark = pytest.mark.slow  # the whole atlas is rebuilt from the mirror once (about 30 s)


@pytest.fixture(scope="module")
def rebuilt() -> dict[str, Any]:
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    lines: list[str] = []
    atlas = build_atlas(list(all_benchmarks().values()), report=lines.append)
    assert not lines, lines  # every released file the instruments pin is in the mirror and scores
    return atlas


def _key(entry: dict[str, Any]) -> tuple[str, str, str]:
    return entry["instrument"], entry["model"], json.dumps(entry["settings"], sort_keys=True)


def test_rebuilding_from_the_mirror_gives_the_shipped_file(rebuilt: dict[str, Any]) -> None:
    shipped = shipped_atlas()
    assert rebuilt["instruments"] == shipped["instruments"]
    by_key = {_key(entry): entry for entry in shipped["entries"]}
    recomputed = [entry for entry in rebuilt["entries"] if entry["status"] == "recomputed"]
    assert recomputed
    for entry in recomputed:  # every entry whose files are mirrored, field by field
        assert by_key.get(_key(entry)) == entry, entry["model"]
    # and the whole document, byte for byte
    assert dumps(rebuilt) == shipped_path().read_text("utf-8")


def test_eqbench_v2_reproduces_every_released_files_published_score(rebuilt: dict[str, Any]) -> None:
    entries = [e for e in rebuilt["entries"] if e["instrument"] == "eqbench"]
    assert len(entries) == 86
    for entry in entries:
        assert entry["status"] == "recomputed"
        assert entry["difference"] == 0.0, entry["model"]
        # the headline follows from the items as in a run's summary: 10 x their mean
        items = entry["items"]
        assert abs(entry["scale"] * sum(items.values()) / len(items) - entry["value"]) < 0.006
        assert entry["n"] == len(items) and entry["ci95"][0] < entry["value"] < entry["ci95"][1]
        assert entry["files"][0]["sha256"] == hashlib.sha256(_mirror_bytes(entry["files"][0])).hexdigest()
    qwen = next(e for e in entries if e["model"] == "Qwen/Qwen-72B-Chat")
    assert qwen["value"] == 80.7 and qwen["settings"]["quantisation"] == "bitsandbytes 4bit"
    site = next(e for e in entries if e["model"] == "mlabonne/phixtral-2x2_8")
    assert "54.58" in site["notes"][0]  # the eqbench.com table's other figure, named


def _mirror_bytes(record: dict[str, str]) -> bytes:
    return (Path(os.environ["EMPATHYBENCH_MIRROR"]) / record["repo"] / record["commit"] / record["path"]).read_bytes()


def test_every_entry_has_a_canonical_id_from_the_identity_table() -> None:
    table = identity_table()
    for entry in shipped_atlas()["entries"]:
        assert entry["model_id"] in table.models, (entry["instrument"], entry["model"])
        assert table.match(entry["model"], instrument=entry["instrument"]).id == entry["model_id"]
        assert entry["family"] == table.family_of(entry["model_id"])


def test_a_run_spec_matches_the_same_checkpoint_never_a_sibling() -> None:
    table = identity_table()
    for spec in ("openai/gpt-4o-2024-08-06", "gpt-4o-0808", "gpt-4o-0806", "GPT-4o-2024-08-06"):
        match = table.match(spec)
        assert match is not None and match.relation == "same checkpoint" and match.id == "gpt-4o-2024-08-06", spec
    assert table.match("openai-o1").id == table.match("o1-2024-12-17").id == "o1-2024-12-17"
    assert table.match("anthropic/claude-3-7-sonnet-20250219").id == table.match("claude3.7").id
    assert table.match("anthropic/claude-3-7-sonnet-latest").id == "claude-3-7-sonnet-20250219"  # Anthropic's alias
    assert table.match("claude3.7-think").id != table.match("claude3.7").id  # same weights, thinking on: another run
    # Quantised copies name their original weights; an organisation prefix is optional when unambiguous.
    assert table.match("meta-llama/Llama-2-70b-chat-hf").id == table.match("TheBloke/Llama-2-70B-Chat-GGUF").id
    assert table.match("openai/Qwen-72B-Chat").id == "qwen/qwen-72b-chat"
    # Dropping a date would merge distinct checkpoints: they stay apart, in one family.
    first, second = table.match("gpt-4-0314"), table.match("gpt-4-0613")
    assert first.id != second.id and first.family == second.family == "gpt-4"
    assert table.match("deepseek-v3-1227").id != table.match("deepseek-v3-0324").id
    # A family's name alone is a family, not a checkpoint; an unknown name is nothing.
    family = table.match("openai/grok-3")
    assert family is not None and family.id is None and family.relation == "same family"
    assert table.match("nobody/no-such-model-7b") is None
    assert table.match("x" * 10_000) is None
    # One name, two checkpoints: an instrument's own published name resolves its entries only, never a user's run.
    assert table.match("Gemini2.5-Pro", instrument="sage").id == "gemini-2.5-pro-preview-03-25"
    assert table.match("gemini-2.5-pro", instrument="spiral").id == table.match("google/gemini-2.5-pro").id
    # for a user's run it is only its family (every instrument's GPT-4o-Latest is a gpt-4o)
    assert table.match("GPT-4o-Latest").id is None and table.match("GPT-4o-Latest", instrument="sage") is not None


def test_every_alias_names_its_source_and_no_name_means_two_checkpoints() -> None:
    table = identity_table()
    seen: dict[tuple[str, str], str] = {}
    from empathybench.models.identity import normalise

    for model in table.models.values():
        assert model.aliases
        for alias in model.aliases:
            assert alias.source.strip()
            key = (alias.instrument or "", normalise(alias.name))
            assert seen.setdefault(key, model.id) == model.id, alias.name


def _bad_source(tmp_path: Path, content: bytes) -> tuple[AtlasSource, ReleasedRun]:
    """EQ-Bench's own atlas scorer over one pinned file of `content` in a mirror of our own."""
    digest = hashlib.sha256(content).hexdigest()
    target = tmp_path / "mirror" / "owner" / "repo" / "c0ffee" / "results" / "x_eqbench_v2_results.json"
    target.parent.mkdir(parents=True)
    target.write_bytes(content)
    pin = DataFile("bad", "owner/repo", "c0ffee", "results/x_eqbench_v2_results.json", digest, None, len(content))
    real = load("eqbench").atlas
    assert real is not None
    source = AtlasSource(metric=real.metric, pins=lambda: {"bad": pin}, runs=lambda: [], score=real.score)
    return source, ReleasedRun(model="x", files=("bad",))


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe not utf-8", b"[1, 2, 3]", b'{"raw_results": 7}', b'{"model_path": "x", "raw_results": {"1": 5}}', b""],
)
def test_a_bad_released_file_is_one_line_not_a_traceback(tmp_path: Path, monkeypatch, content: bytes) -> None:
    source, run = _bad_source(tmp_path, content)
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    source = AtlasSource(metric=source.metric, pins=source.pins, runs=lambda: [run], score=source.score)
    lines: list[str] = []
    entries = instrument_entries("eqbench", source, identity_table(), lines.append)
    assert entries == [] and len(lines) == 1 and "\n" not in lines[0] and lines[0].startswith("eqbench x: not scored")


def test_a_file_that_does_not_match_its_pin_is_refused(tmp_path: Path, monkeypatch) -> None:
    source, run = _bad_source(tmp_path, b"{}")
    (tmp_path / "mirror" / "owner" / "repo" / "c0ffee" / "results" / "x_eqbench_v2_results.json").write_bytes(b"{ }")
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(Exception, match="checksum mismatch"):
        score_run(source, run)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[]", "not an EmpathyBench atlas"),
        ('{"format": "empathybench-atlas", "format_version": 99}', "format version 99"),
        ('{"format": "empathybench-atlas", "format_version": 1, "entries": [{}], "instruments": {}}', "entries.0"),
        ("not json", "not a JSON file"),
    ],
)
def test_a_bad_atlas_file_is_one_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "atlas.json"
    path.write_text(content)
    with pytest.raises(UserError, match=message):
        read_atlas(path)
    with pytest.raises(UserError, match="no such file"):
        read_atlas(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["entries"][0].update(value="abc"), "entries.0.value"),
        (lambda d: d["entries"][0].update(items={"1": "x"}), "entries.0.items.1"),
        (lambda d: d["instruments"].update(x="not an object"), "instruments.x"),
        (lambda d: d["entries"][0].update(ci95=[1.0]), "entries.0.ci95"),
        (lambda d: d["entries"][0].update(instrument="nowhere"), "names an instrument the atlas does not describe"),
    ],
    ids=["value", "items", "instrument", "interval", "unknown instrument"],
)
def test_an_atlas_file_of_wrong_types_is_one_line_on_the_command_line(
    tmp_path: Path, change: Any, message: str
) -> None:
    document = json.loads(shipped_path().read_text("utf-8"))
    change(document)
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(document), "utf-8")
    done = cli_in_process(["atlas", "--atlas", str(path), "--json"])
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert message in line


def test_the_shipped_atlas_passes_its_own_check() -> None:
    document = json.loads(shipped_path().read_text("utf-8"))
    assert check_atlas(document, "shipped") is document


def test_atlas_build_on_the_command_line(tmp_path: Path, mirror: Path) -> None:
    env = {**os.environ, "EMPATHYBENCH_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "200"}
    result = cli_in_process(["atlas", "build", "--bench", "eqbench", "--out", "built.json"], env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "eqbench: 86 recomputed, 0 published-only; 86 of 86 reproduce" in result.stdout
    built = read_atlas(tmp_path / "built.json")
    shipped_eqbench = [e for e in shipped_atlas()["entries"] if e["instrument"] == "eqbench"]
    assert built["entries"] == shipped_eqbench
    refused = cli_in_process(["atlas", "build", "--bench", "nope", "--out", "x.json"], env, cwd=tmp_path)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr and len(refused.stderr.splitlines()) == 1


def test_sage_reproduces_the_readme_and_keeps_the_other_simulators_apart(rebuilt: dict[str, Any]) -> None:
    entries = [e for e in rebuilt["entries"] if e["instrument"] == "sage"]
    primary = [e for e in entries if e["status"] == "recomputed" and e["primary"]]
    others = [e for e in entries if e["status"] == "recomputed" and not e["primary"]]
    only = [e for e in entries if e["status"] == "published-only"]
    assert (len(primary), len(others), len(only)) == (12, 7, 6)
    from empathybench.instruments.sage.score import published_score

    for entry in primary + others:  # the value is the mean final emotion itself, as a run's sentient_score
        assert abs(sum(entry["items"].values()) / entry["n"] - entry["value"]) < 1e-6, entry["model"]
    # the README's figure is that mean rounded half up to one decimal (specs/atlas.md, "Traps": 68.15 -> 68.2)
    assert all(published_score(e["value"]) == e["published"]["value"] for e in primary)
    gpt41 = next(e for e in primary if e["model"] == "gpt-4.1")
    assert (gpt41["value"], gpt41["published"]["value"], gpt41["difference"]) == (68.15, 68.2, -0.05)
    assert {e["settings"]["simulator"] for e in primary} == {"deepseek-v3-2024-12-26"}
    assert all(e["published"] is None and e["settings"]["simulator"] != "deepseek-v3-2024-12-26" for e in others)
    for entry in primary + others:
        # a person's final emotion by the run's item id (the person's line in the pinned profile file)
        assert set(entry["items"]) <= {str(n) for n in range(1, 101)} and entry["n"] == len(entry["items"])
    assert {e["model"] for e in only} >= {"Gemini2.5-Pro", "o3"}
    arena = rebuilt["instruments"]["sage"]["capability"]
    assert len(arena["models"]) == 18 and all(m["model_id"] for m in arena["models"])
    assert next(m for m in arena["models"] if m["model"] == "Gemini2.5-Pro")["value"] == 1439.0


def test_spiral_is_recomputed_from_its_judgements_not_its_stale_summaries(rebuilt: dict[str, Any]) -> None:
    entries = {e["model"]: e for e in rebuilt["entries"] if e["instrument"] == "spiral" and e["primary"]}
    recomputed = {m: e["value"] for m, e in entries.items() if e["status"] == "recomputed"}
    # the leaderboard's figures, not the stale stored ones (44.6, 37.5, 71.7, 45.8): specs/atlas.md, "Traps"
    assert recomputed == {"claude-3.5-sonnet": 47.7, "claude-sonnet-4": 41.1, "kimi-k2": 73.0, "llama-4-maverick": 48.1}
    assert sum(e["status"] == "published-only" for e in entries.values()) == 8
    assert entries["kimi-k2"]["items"] is None and entries["kimi-k2"]["ci95"][0] < 73.0 < entries["kimi-k2"]["ci95"][1]
    assert entries["gemini-2.5-pro"]["model_id"] == "gemini-2.5-pro"  # June's model, not SAGE's March preview


def test_eqbench3_ratings_are_re_solved_from_the_released_verdicts(rebuilt: dict[str, Any]) -> None:
    entries = {e["model"]: e for e in rebuilt["entries"] if e["instrument"] == "eqbench3" and e["primary"]}
    assert len(entries) == 27 and all(e["status"] == "recomputed" for e in entries.values())
    assert entries["o3"]["value"] == 1500.0 and entries["meta-llama/llama-3.2-1b-instruct"]["value"] == 200.0  # anchors
    # re-solved, not copied: within a few points of the stored ratings, and not all equal to them
    differences = [abs(e["difference"]) for e in entries.values()]
    assert max(differences) < 5 and sum(d > 0.05 for d in differences) > 10
    assert all(
        e["items"] is None and e["n"] > 200 and e["ci95"][0] < e["value"] < e["ci95"][1] for e in entries.values()
    )
    # a run's rubric score is another scale than these Elos: it is placed on the published boards instead
    assert rebuilt["instruments"]["eqbench3"]["board_placement"]["figure"] == "rubric_0_100"


SPECS = MIRROR.parent / "specs"  # beside the mirror, as the instruments' spec tests find them


def test_emotionbench_answer_sheets_give_the_papers_overall_shift(rebuilt: dict[str, Any]) -> None:
    entries = {e["model"]: e for e in rebuilt["entries"] if e["instrument"] == "emotionbench"}
    recomputed = {m: e for m, e in entries.items() if e["status"] == "recomputed"}
    assert set(recomputed) == {
        "davinci-003",
        "gpt-3.5-turbo",
        "gpt-4",
        "llama2-13b",
        "llama2-7b",
        "llama3.1-8b",
        "mixtral-8x22b",
    }
    gpt4 = entries["gpt-4"]
    assert gpt4["value"] == 22.1777 and gpt4["n"] == 1750 and gpt4["ci95"][0] < 22.1777 < gpt4["ci95"][1]
    assert entries["llama2-7b"]["model_id"] == "llama-2-7b-chat"  # the same weights EQ-Bench v2 scored
    assert rebuilt["instruments"]["emotionbench"]["higher_is_better"] is None


def test_emotionbench_shows_the_leaderboards_22_models_and_llama_2_7bs_difference(rebuilt: dict[str, Any]) -> None:
    """data.json on gh-pages a7e95ec4: 22 rows (overall minus Control Negative Affect); 6 of them are released sheets
    (5 equal the recomputation, LLaMA-2-7B does not), 16 are published-only. Figures: specs/atlas-current.md."""
    entries = [e for e in rebuilt["entries"] if e["instrument"] == "emotionbench"]
    published = {e["model"]: e for e in entries if e["published"] is not None}
    assert len(published) == 22 and all("data.json" in e["published"]["source"] for e in published.values())
    only = {m: e for m, e in published.items() if e["status"] == "published-only"}
    assert len(only) == 16 and all(e["value"] is None and e["files"] == [] for e in only.values())
    for model, figure in {
        "GPT-5": 18.3011,
        "Claude-Sonnet-4.5": 17.6977,
        "GPT-4.1": 18.6794,
        "Kimi-K2-Instruct-0905": 21.0137,
    }.items():
        assert only[model]["published"]["value"] == figure
    recomputed = {m: e for m, e in published.items() if e["status"] == "recomputed"}
    assert {m: e["difference"] for m, e in recomputed.items() if e["difference"] != 0.0} == {"llama2-7b": -0.0116}
    llama = recomputed["llama2-7b"]
    assert (llama["published"]["value"], llama["value"]) == (3.3064, 3.2948)
    assert any("Jealousy" in note for note in llama["notes"])  # where the leaderboard and the sheet part
    assert all(not any("Jealousy" in n for n in e["notes"]) for m, e in recomputed.items() if m != "llama2-7b")
    assert next(e for e in entries if e["model"] == "llama3.1-8b")["published"] is None  # a sheet, no row
    # an undated name on the site is its own checkpoint within its family, never another upstream's dated one
    assert only["GPT-4o"]["model_id"] == "gpt-4o@emotionbench" and only["GPT-4o"]["family"] == "gpt-4o"


def _emobench_spec_table() -> dict[tuple[str, str, str], float]:
    """specs/emobench.md section 6.2 (4 orders x majority of 5, checked there by two implementations): (model, task,
    language) -> accuracy."""
    section = (SPECS / "emobench.md").read_text("utf-8").split("### 6.2 ")[1].split("\n\n\\*")[0]
    columns = [("EU", "en"), ("EU", "zh"), None, None, ("EA", "en"), ("EA", "zh"), None, None]
    table = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[1][:1].isdigit():
            for column, cell in zip(columns, cells[1:], strict=True):
                if column is not None:
                    table[(cells[0], *column)] = float(cell.split()[0].rstrip("*"))
    return table


def test_emobench_scores_every_released_model_in_both_tasks_and_languages(rebuilt: dict[str, Any]) -> None:
    entries = [e for e in rebuilt["entries"] if e["instrument"] == "emobench"]
    found = {(e["model"], e["settings"]["task"], e["settings"]["language"]): e for e in entries}
    assert len(entries) == len(found) == 48 and all(e["status"] == "recomputed" for e in entries)
    assert "random" not in {model for model, _, _ in found}  # the random baseline is not a model
    if (SPECS / "emobench.md").is_file():
        table = {key: value for key, value in _emobench_spec_table().items() if key[0] != "random"}
        assert len(table) == 48 and {key: e["value"] for key, e in found.items()} == table
    # a third-party harness quotes GPT-4's as published (specs/emobench.md, S5)
    quoted = {("EA", "en"): 75.50, ("EA", "zh"): 73.75, ("EU", "en"): 59.75, ("EU", "zh"): 54.12}
    assert {key: found[("gpt-4", *key)]["value"] for key in quoted} == quoted
    for (model, task, language), entry in found.items():
        assert entry["primary"] is ((task, language) == ("EU", "en")), (model, task, language)
        assert entry["settings"]["orders"] == 4 and len(entry["files"]) == 4 and entry["n"] == 200
        assert entry["model_id"] is not None and entry["ci95"][0] <= entry["value"] <= entry["ci95"][1]
        if task == "EU":  # a run's item ids: pairs item by item
            assert all(key.startswith(f"EU-{language}-") for key in entry["items"])
            assert abs(100 * sum(entry["items"].values()) / entry["n"] - entry["value"]) < 0.006
        else:  # EA rows of the older files are not aligned with the item ids
            assert entry["items"] is None


def _published_tactfultom_table() -> dict[str, tuple[float, ...]]:
    """Upstream's pooled table (cases/main_table.txt @a5e86358, mirrored), read here on its own: run -> categories."""
    path = MIRROR / "nii-cl/tactful-tom/a5e86358edf16e2d280bcf7fb852d13b8ac54c2c/cases/main_table.txt"
    rows = [line.strip().strip("|").split("|") for line in path.read_text("utf-8").splitlines() if "|" in line]
    return {cells[0].strip(): tuple(float(c) for c in cells[1:]) for cells in rows[1:]}


def test_tactfultom_enters_with_every_released_model_reproducing_the_published_table(
    rebuilt: dict[str, Any],
) -> None:
    from empathybench.instruments.tactfultom.score import CATEGORIES
    from test_tactfultom_rescore import EXPECTED  # specs/tactfultom.md section 10, checked against the spec there

    published = _published_tactfultom_table()
    assert len(published) == 12
    # the spec's rows of the development models are the table's rows
    assert all(published[model] == row[2:] for model, row in EXPECTED.items())
    entries = [e for e in rebuilt["entries"] if e["instrument"] == "tactfultom"]
    assert len({e["model"] for e in entries}) == 8  # the table's 8 models
    recomputed = [e for e in entries if e["status"] == "recomputed"]
    only = {e["model"]: e for e in entries if e["status"] == "published-only"}
    assert len(recomputed) == 10 and set(only) == {"DeepSeek-R1-Turbo", "QwQ-32B"}  # sets 0/3/4 absent
    for model, entry in only.items():
        assert entry["published"]["value"] == round(sum(published[model]) / 11, 2) and entry["value"] is None
    for entry in recomputed:
        cot = entry["settings"]["cot"] == [True]
        name = entry["model"] + ("-cot" if cot else "")
        # every category of the published row, to 2 decimals
        assert tuple(entry["figures"][c] for c in CATEGORIES) == published[name], name
        assert entry["published"]["value"] == round(sum(published[name]) / 11, 2) and abs(entry["difference"]) < 0.006
        assert "main_table.txt" in entry["published"]["source"] and entry["model_id"] is not None
        assert entry["primary"] is not cot  # with CoT: the same model under another setting, not ranked
        api_default = entry["model"].startswith(("o1", "o3"))  # sent with the API's default sampling
        assert (entry["settings"]["temperature"] == "API default") is api_default
        assert entry["settings"]["dataset"].startswith("legacy") and len(entry["files"]) == 5
        # the headline is 100 x the mean of the questions' shares, over the legacy dataset's scored questions
        items = entry["items"]
        assert entry["n"] == len(items) == sum(entry["figures"][f"n_{c}"] for c in CATEGORIES)
        assert abs(entry["scale"] * sum(items.values()) / len(items) - entry["value"]) < 1e-3
        assert entry["ci95"][0] < entry["value"] < entry["ci95"][1]
        # the released files' question ids, apart from a run's (another version of the dataset): never paired
        assert all(key.startswith("legacy/") for key in items)
        shares = {0.0} | {round(len(items) / (11 * entry["figures"][f"n_{c}"]), 6) for c in CATEGORIES}
        assert {round(v, 6) for v in items.values()} <= shares
    development = [e for e in recomputed if e["model"] in ("gpt-4o-2024-08-06", "Llama-3.3-70B-Instruct")]
    assert len(development) == 4 and all(e["n"] == 3544 for e in development)
    # CoT's effect, paired question by question over the same released questions
    effects = {e["model"]: e for e in setting_effects(rebuilt) if e["instrument"] == "tactfultom"}
    assert set(effects) == {"gpt-4o-2024-08-06", "Llama-3.3-70B-Instruct", "DeepSeek-V3-0324", "Qwen2.5-72B-Instruct"}
    gpt = effects["gpt-4o-2024-08-06"]
    assert gpt["settings_changed"] == {"cot": [[False], [True]]} and gpt["n"] == 3544
    assert abs(gpt["difference"] - (55.99 - 62.30)) < 0.01 and gpt["ci95"][1] < 0


def test_a_tactfultom_run_is_checked_against_the_published_figure_not_paired_item_by_item() -> None:
    """A run asks the final set; the released outputs answered the legacy one: the check is the weaker one (the
    published figure within the run's interval), and the setting that differs and the dataset are named."""
    from empathybench.atlas.reproduce import check_run
    from empathybench.rundir.reader import RunData

    run_items = {"0-1-0-0-comprehension-0": 3.776, "0-1-0-0-fact_reason-0": 0.0, "0-1-0-0-belief-0": 0.1873}
    metric = {"value": 61.0, "ci95": [57.5, 64.5], "n": 4154, "items": run_items, "scale": 100.0}
    config = {"cot": [False, True], "temperature": 0.2, "max_tokens": 8192, "freeform": False}
    summary = {
        "model": "openai/gpt-4o-2024-08-06",
        "benchmarks": {"tactfultom": {"config": config, "metrics": {"overall_macro": metric}}},
    }
    check = check_run(shipped_atlas(), RunData(Path("run"), summary, {}))["instruments"]["tactfultom"]
    assert check["matched"]["model_id"] == "gpt-4o-2024-08-06" and check["published_value"] == 62.3
    assert check["comparison"]["kind"] == "published figure against the run's interval"
    # run - published: [57.5, 64.5] - 62.30 = [-4.80, 2.20], beyond TactfulToM's margin of 2 on one side only
    assert check["comparison"]["ci95"] == pytest.approx([-4.8, 2.2], abs=0.01) and check["margin"]["value"] == 2.0
    assert check["verdict"] == "inconclusive"
    metric["ci95"] = [61.0, 63.5]  # a run precise enough: [-1.3, 1.2] lies within ±2
    assert check_run(shipped_atlas(), RunData(Path("run"), summary, {}))["instruments"]["tactfultom"]["verdict"] == (
        "consistent"
    )
    assert check["settings"]["differs"] == {"cot": {"run": [False, True], "published": [False]}}
    assert check["settings"]["not_recorded_by_the_run"]["dataset"].startswith("legacy")
    llama = identity_table().match("meta-llama/Llama-3.3-70B-Instruct")
    assert llama is not None and llama.id == identity_table().match("llama3.3-70b").id  # SAGE's model, the same weights


def _garbage_mirror(tmp_path: Path) -> Path:
    """A mirror of the real one (linked) plus a repository of our own for bad files."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for child in MIRROR.iterdir():
        (mirror / child.name).symlink_to(child)
    return mirror


@pytest.mark.parametrize("name", ["eqbench", "sage", "spiral", "emotionbench", "emobench", "eqbench3", "tactfultom"])
@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage", b'{"a": [1, 2, {"b": null}]}\n[1]\n', b""])
def test_every_instruments_scorer_takes_a_bad_file_as_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, content: bytes
) -> None:
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    real = load(name).atlas
    assert real is not None
    run = real.runs()[0]
    mirror = _garbage_mirror(tmp_path)
    digest = hashlib.sha256(content).hexdigest()
    fake: dict[str, DataFile] = {}
    for number, key in enumerate(run.files):
        path = f"bad/{number}/{real.pins()[key].filename}"
        (mirror / "owner" / "repo" / "c0ffee" / path).parent.mkdir(parents=True, exist_ok=True)
        (mirror / "owner" / "repo" / "c0ffee" / path).write_bytes(content)
        fake[key] = DataFile(key, "owner/repo", "c0ffee", path, digest, None, len(content))
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", str(mirror))
    source = AtlasSource(metric=real.metric, pins=lambda: fake, runs=lambda: [run], score=real.score)
    lines: list[str] = []
    entries = instrument_entries(name, source, identity_table(), lines.append)
    assert len(lines) == 1 and "\n" not in lines[0] and lines[0].startswith(f"{name} {run.model}: not scored")
    assert [e["status"] for e in entries] == (["published-only"] if run.published else [])


def test_loading_the_instruments_imports_no_scorer_of_the_atlas() -> None:
    """An instrument's atlas source is declared at load; its rescore code (EQ-Bench 3's imports scipy.stats, ~0.6 s)
    is imported by a build only, never by a run."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom empathybench.instruments.registry import all_benchmarks\nall_benchmarks()\n"
        "print(sorted(m for m in sys.modules if m == 'scipy.stats' or m.endswith('.rescore')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(result.stdout.replace("'", '"'))
    assert "scipy.stats" not in loaded and "empathybench.instruments.eqbench3.rescore" not in loaded


@pytest.mark.parametrize(
    ("package", "manifest", "prefix"),
    [
        ("emobench", "emobench-results.manifest.json", "emobench/2024/"),
        ("tactfultom", "tactfultom-heldout-released.manifest.json", "tactfultom/"),
    ],
)
def test_the_atlas_pins_are_the_specs_manifests(package: str, manifest: str, prefix: str) -> None:
    """Every released file the spec's manifest lists is pinned for the atlas with its sha256, and nothing else."""
    from empathybench.data.registry import load_pins

    if not (SPECS / manifest).is_file():
        pytest.skip(f"specs/{manifest} is not beside the repository")
    listed = json.loads((SPECS / manifest).read_text("utf-8"))["files"]
    pins = load_pins(f"empathybench.instruments.{package}", "atlas_pins.json")
    assert {(p.key, p.repo, p.commit, p.path, p.sha256, p.size) for p in pins.values()} == {
        (prefix + f["path"], f["repo"], f["commit"], f["path"], f["sha256"], f["bytes"]) for f in listed
    }
