"""Instruments are found through the entry-point group `empathybench.instruments`, built-ins and plugins alike."""

import os
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from empathybench.errors import UserError
from empathybench.instruments import registry

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = REPO / "pyproject.toml"

PLUGIN = """
class Example:
    name = "example"
    title = "Example: a third-party instrument"
    presets = {"quick": "all of it"}
    options = {}

    def prepare(self, preset, *, options, limit, seed, allow_unverified):
        raise NotImplementedError


instrument = Example()
"""


def _install_plugin(where: Path, entry_points: str) -> None:
    """A minimal installed distribution (what pip leaves in site-packages) with its own entry points."""
    (where / "example_plugin.py").write_text(PLUGIN, "utf-8")
    (where / "broken_plugin.py").write_text("raise ImportError('needs a package that is not installed')\n", "utf-8")
    info = where / "example_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: example-plugin\nVersion: 0.1\n", "utf-8")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), "utf-8")


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    _install_plugin(
        tmp_path,
        """
        [empathybench.instruments]
        example = example_plugin:instrument
        broken = broken_plugin:instrument
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._entry_points.cache_clear()
    registry.load.cache_clear()
    yield tmp_path
    registry._entry_points.cache_clear()
    registry.load.cache_clear()


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
    assert {"example", "broken"} <= set(registry.names())
    listed = registry.all_benchmarks()
    assert list(listed)[-1] == "example"  # after the built-ins
    assert "broken" not in listed
    assert "instrument broken (package example-plugin) failed to load" in capsys.readouterr().err
    assert [b.name for b in registry.resolve_benchmarks(["example"])] == ["example"]
    with pytest.raises(UserError, match=r"^instrument broken \(package example-plugin\) failed to load: ImportError"):
        registry.load("broken")
    with pytest.raises(UserError, match=r"unknown benchmark 'nope'; available: eqbench, giebench, .*example"):
        registry.resolve_benchmarks(["nope"])


def test_the_cli_lists_a_plugin(plugin_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), *sys.path])}
    listed = subprocess.run(
        [sys.executable, "-m", "empathybench", "list"], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    assert "example — Example: a third-party instrument" in listed.stdout
    assert "eqbench — " in listed.stdout


def test_a_run_of_one_instrument_imports_only_that_one() -> None:
    code = (
        "import sys; from empathybench.instruments import registry;"
        "chosen = registry.resolve_benchmarks(['seceu']);"
        "print(sorted({m.split('.')[2] for m in sys.modules if m.startswith('empathybench.instruments.')"
        " and m.count('.') > 2}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "['seceu']"


def test_checking_a_runs_options_imports_only_the_named_instrument(tmp_path: Path) -> None:
    # The options check loaded every instrument for every run (~0.3 s of start-up), --option or not.
    code = (
        "import sys; from pathlib import Path; from empathybench.run.options import RunOptions, check_run_options;"
        f"check_run_options(RunOptions(model='openai/x', benchmarks=['seceu'], out=Path({str(tmp_path / 'run')!r}),"
        " options={'seceu.headline': 'best'}, use_cache=False));"
        "print(sorted({m.split('.')[2] for m in sys.modules if m.startswith('empathybench.instruments.')"
        " and m.count('.') > 2}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "['seceu']"


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


def test_every_instrument_is_seen_through_the_typed_protocol() -> None:
    from empathybench.instruments.protocol import Instrument

    for instrument in registry.all_benchmarks().values():
        assert isinstance(instrument, Instrument), instrument.name
    # EQ-Bench and SECEU speak it themselves; the others go through the adapter until they are migrated.
    assert not isinstance(registry.load("eqbench"), registry.LegacyInstrument)
    seceu = registry.load("seceu")
    assert not isinstance(seceu, registry.LegacyInstrument)
    assert seceu.rescore is not None and seceu.canned is not None and seceu.report_section is not None
    with pytest.raises(UserError, match="seceu"):
        seceu.configure("quick", {"no_such_option": "1"})
