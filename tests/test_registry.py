"""Instruments are found through the entry-point group `empathybench.instruments`, built-ins and plugins alike."""

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import empathybench
from empathybench.errors import UserError
from empathybench.instruments import registry

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = REPO / "pyproject.toml"

PLUGIN = """
from empathybench.instruments.protocol import Instrument


class ThirdParty(Instrument):
    name = "thirdparty"
    title = "Third party: an instrument of another package"
    presets = {"quick": "all of it"}
    options = {}

    def configure(self, preset, options):
        return dict(options)

    def prepare(self, config, *, preset, limit, seed, allow_unverified):
        raise NotImplementedError


instrument = ThirdParty()
"""
# Written against the contract before it was a base class: a structural protocol, prepare(preset, options=...).
OLD_STYLE_PLUGIN = """
class OldStyle:
    name = "oldstyle"
    title = "An instrument of the old protocol"
    presets = {"quick": "all of it"}
    options = {}

    def prepare(self, preset, *, options, limit, seed, allow_unverified):
        raise NotImplementedError


instrument = OldStyle()
"""
# A subclass that kept the old prepare(preset, *, options, ...) signature.
OLD_PREPARE_PLUGIN = (
    PLUGIN.replace("oldprepare", "x")
    .replace('"thirdparty"', '"oldprepare"')
    .replace(
        "def prepare(self, config, *, preset, limit, seed, allow_unverified)",
        "def prepare(self, preset, *, options, limit, seed, allow_unverified)",
    )
)


def install_package(where: Path, distribution: str, modules: dict[str, str], entry_points: str) -> None:
    """A minimal installed distribution (what pip leaves in site-packages): its modules and its entry points."""
    for module, code in modules.items():
        (where / f"{module}.py").write_text(textwrap.dedent(code), "utf-8")
    info = where / f"{distribution.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n", "utf-8")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), "utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path where a test installs packages; the registry reads the metadata afresh around it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.clear_caches()
    yield tmp_path
    registry.clear_caches()


@pytest.fixture
def plugin_path(site: Path) -> Path:
    install_package(
        site,
        "example-plugin",
        {"example_plugin": PLUGIN, "broken_plugin": "raise ImportError('needs a package that is not installed')\n"},
        """
        [empathybench.instruments]
        thirdparty = example_plugin:instrument
        broken = broken_plugin:instrument
        """,
    )
    registry.clear_caches()
    return site


def test_the_builtin_entry_points_are_the_ones_pyproject_declares() -> None:
    declared = tomllib.loads(PYPROJECT.read_text("utf-8"))["project"]["entry-points"][registry.GROUP]
    assert declared == registry.BUILTIN_ENTRY_POINTS
    assert set(declared) <= set(registry.names())


def test_builtins_keep_their_order_so_run_fingerprints_do_not_change() -> None:
    # The order of the instruments in a run is part of its fingerprint (run/execute._fingerprint).
    assert list(registry.all_benchmarks())[:5] == ["eqbench", "giebench", "seceu", "empathetic", "emotionbench"]
    # A run without --bench runs the same instruments as before (instruments that need a judge opt out of it).
    assert [b.name for b in registry.resolve_benchmarks(None)] == [
        "eqbench",
        "giebench",
        "seceu",
        "empathetic",
        "emotionbench",
    ]


def test_a_third_party_plugin_registers_through_its_metadata(plugin_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert {"thirdparty", "broken"} <= set(registry.names())
    listed = registry.all_benchmarks()
    assert list(listed)[-1] == "thirdparty"  # after the built-ins
    assert "broken" not in listed
    assert "instrument broken (package example-plugin) failed to load" in capsys.readouterr().err
    assert [b.name for b in registry.resolve_benchmarks(["thirdparty"])] == ["thirdparty"]
    with pytest.raises(UserError, match=r"^instrument broken \(package example-plugin\) failed to load: ImportError"):
        registry.load("broken")
    with pytest.raises(UserError, match=r"unknown benchmark 'nope'; available: eqbench, giebench, .*thirdparty"):
        registry.resolve_benchmarks(["nope"])


def test_the_cli_lists_a_plugin(plugin_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), *sys.path])}
    listed = subprocess.run(
        [sys.executable, "-m", "empathybench", "list"], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    assert "thirdparty — Third party: an instrument of another package" in listed.stdout
    assert "plugin: package example-plugin 0.1" in listed.stdout
    assert "eqbench — " in listed.stdout


def _instruments_imported_by(code: str) -> list[str]:
    """The instruments whose code (a module below their package) a fresh process running `code` imported."""
    code += (
        "\nimport sys, json; print(json.dumps(sorted({m.split('.')[2] for m in sys.modules"
        " if m.startswith('empathybench.instruments.') and m.count('.') > 2})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(out.splitlines()[-1])


def test_a_run_of_one_instrument_imports_only_that_one() -> None:
    code = "from empathybench.instruments import registry; registry.resolve_benchmarks(['seceu'])"
    assert _instruments_imported_by(code) == ["seceu"]


def test_checking_a_runs_options_imports_only_the_named_instrument(tmp_path: Path) -> None:
    # The options check loaded every instrument for every run (~0.3 s of start-up), --option or not.
    code = (
        "from pathlib import Path; from empathybench.run.options import RunOptions;"
        "from empathybench.run.plan import plan_run;"
        f"plan_run(RunOptions(model='openai/x', benchmarks=['seceu'], out=Path({str(tmp_path / 'run')!r}),"
        " options={'seceu.headline': 'best'}, use_cache=False))"
    )
    assert _instruments_imported_by(code) == ["seceu"]


def test_a_run_without_bench_imports_only_the_instruments_it_runs() -> None:
    # The built-ins that stay out of such a run (their packages say so) took ~0.1 s of its start-up to import.
    code = "from empathybench.instruments import registry; registry.resolve_benchmarks(None)"
    chosen = [b.name for b in registry.resolve_benchmarks(None)]
    assert (
        _instruments_imported_by(code)
        == sorted(chosen)
        == sorted(["eqbench", "giebench", "seceu", "empathetic", "emotionbench"])
    )


def test_every_builtin_out_of_the_default_run_says_so_in_its_package() -> None:
    # What the registry reads unloaded is what the instrument says, for every built-in.
    for name in registry.BUILTIN_ENTRY_POINTS:
        instrument = registry.load(name)
        declared = registry._declared_in_default_run(name)
        assert declared is (False if not instrument.in_default_run else None), name


def test_a_package_declaring_otherwise_than_its_instrument_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_declared_in_default_run", lambda name: name == "seceu")
    registry.load.cache_clear()
    try:
        with pytest.raises(UserError, match=r"^instrument eqbench .*: its package declares in_default_run = False"):
            registry.load("eqbench")
    finally:
        registry.load.cache_clear()


def test_naming_the_instruments_imports_none_of_them() -> None:
    code = (
        "import sys; from empathybench.instruments import registry; names = registry.names();"
        "print(len(names), sorted(m for m in sys.modules if m.startswith('empathybench.instruments.')"
        " and m.count('.') > 2))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    count, imported = out.split(" ", 1)
    assert int(count) >= 5
    assert imported.strip() == "[]"


def test_every_instrument_keeps_the_contract() -> None:
    from empathybench.instruments.protocol import Instrument

    for instrument in registry.all_benchmarks().values():
        assert isinstance(instrument, Instrument), instrument.name
        assert type(instrument).prepare is not Instrument.prepare, instrument.name
    seceu = registry.load("seceu")
    assert seceu.rescore is not None and seceu.canned is not None
    with pytest.raises(UserError, match="seceu"):
        seceu.configure("quick", {"no_such_option": "1"})


def test_an_instrument_of_the_old_protocol_fails_with_one_line_saying_what_to_add(site: Path) -> None:
    install_package(
        site,
        "old-plug",
        {"old_plug": OLD_STYLE_PLUGIN, "old_prepare": OLD_PREPARE_PLUGIN},
        "[empathybench.instruments]\noldstyle = old_plug:instrument\noldprepare = old_prepare:instrument\n",
    )
    registry.clear_caches()
    with pytest.raises(UserError) as old:
        registry.load("oldstyle")
    assert "\n" not in str(old.value)
    assert "does not subclass empathybench.instruments.protocol.Instrument" in str(old.value)
    assert "package old-plug" in str(old.value)
    with pytest.raises(UserError) as prepare:
        registry.load("oldprepare")
    assert "prepare(self, config, *, preset, limit, seed, allow_unverified)" in str(prepare.value)


# --- trust: no plugin shadows a built-in; a contested name is nobody's; a broken plugin stops nothing else -------

NOT_AN_INSTRUMENT = "instrument = object()\n"
FAKE_EQBENCH = """
class FakeEQBench:
    name = "eqbench"
    title = "not EQ-Bench"
    presets = {"quick": "q"}
    options = {}

    def prepare(self, preset, *, options, limit, seed, allow_unverified):
        raise RuntimeError("the plugin's eqbench ran")


instrument = FakeEQBench()
"""


def _cli_with(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    command = [sys.executable, "-m", "empathybench", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, cwd=cwd)


def test_a_plugin_claiming_a_builtin_name_is_ignored_with_one_warning(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install_package(
        site, "badplug", {"badplug": NOT_AN_INSTRUMENT}, "[empathybench.instruments]\neqbench = badplug:instrument\n"
    )
    install_package(
        site, "sneaky", {"sneaky": FAKE_EQBENCH}, "[empathybench.instruments]\neqbench = sneaky:instrument\n"
    )
    registry.clear_caches()
    eqbench = registry.load("eqbench")
    assert type(eqbench).__module__.startswith("empathybench.instruments.eqbench")  # the built-in, always
    assert registry.provider("eqbench")["distribution"] == "empathybench"
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(warnings) == 2 and all(line.startswith("warning: plugin instrument 'eqbench' of ") for line in warnings)
    assert any("badplug" in line for line in warnings) and any("sneaky" in line for line in warnings)
    assert {r.packages for r in registry.refused()} == {("package badplug",), ("package sneaky",)}
    registry.names()
    assert capsys.readouterr().err == ""  # once per process


def test_two_plugins_claiming_one_name_are_both_refused(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entry = "[empathybench.instruments]\nshared = {module}:instrument\n"
    install_package(
        site,
        "first-plug",
        {"first_plug": PLUGIN.replace('"thirdparty"', '"shared"')},
        entry.format(module="first_plug"),
    )
    install_package(
        site,
        "second-plug",
        {"second_plug": PLUGIN.replace('"thirdparty"', '"shared"')},
        entry.format(module="second_plug"),
    )
    registry.clear_caches()
    assert "shared" not in registry.names()
    (line,) = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert "first-plug" in line and "second-plug" in line and "'shared'" in line
    with pytest.raises(UserError, match="first-plug and package second-plug"):
        registry.resolve_benchmarks(["shared"])


def test_list_shows_refused_plugins_and_a_broken_one_stops_no_other_command(site: Path, tmp_path: Path) -> None:
    install_package(
        site, "badplug", {"badplug": NOT_AN_INSTRUMENT}, "[empathybench.instruments]\neqbench = badplug:instrument\n"
    )
    install_package(
        site,
        "brokenplug",
        {"brokenplug": "raise ImportError('a dependency is missing')\n"},
        "[empathybench.instruments]\nbrokenthing = brokenplug:instrument\n",
    )
    listed = _cli_with(site, "list")
    assert listed.returncode == 0, listed.stderr
    assert "Refused plugin registrations" in listed.stdout and "eqbench: package badplug" in listed.stdout
    assert "eqbench — EQ-Bench" in listed.stdout
    run_dir = tmp_path / "run"
    ran = _cli_with(
        site,
        "run",
        "-m",
        "scripted/plausible",
        "--bench",
        "eqbench",
        "--limit",
        "2",
        "--no-cache",
        "-q",
        "-o",
        str(run_dir),
    )
    assert ran.returncode == 0, ran.stderr
    assert "badplug" in ran.stderr and "Traceback" not in ran.stderr
    info = json.loads((run_dir / "run.json").read_text("utf-8"))
    assert info["benchmarks"]["eqbench"]["provider"] == {
        "distribution": "empathybench",
        "version": empathybench.__version__,
    }
    named = _cli_with(
        site, "run", "-m", "scripted/plausible", "--bench", "brokenthing", "-q", "-o", str(tmp_path / "b")
    )
    assert named.returncode != 0
    errors = [line for line in named.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        "error: instrument brokenthing (package brokenplug) failed to load: ImportError: a dependency is missing"
    ]
