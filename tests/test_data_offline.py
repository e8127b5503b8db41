"""Preparing a machine without internet (an HPC login node for its compute nodes): `empathybench data fetch --bench X`
fetches every file X can use into the cache; then a run of X with no mirror and no network reads everything from
the cache. Checked for every built-in instrument against the fake OpenAI server."""

from pathlib import Path

import pytest

from canned_server import JUDGE, MODEL, SIMULATOR, CannedServer
from conftest import GIEBENCH_FIXTURES, MIRROR, cli_in_process
from empathybench.data import fetch as data_fetch
from empathybench.instruments.registry import BUILTIN_ENTRY_POINTS, load

pytestmark = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"the offline mirror is not at {MIRROR}")

# GIEBench's items are not public files (the mirror has its images and edge cases only): they are given with
# --option giebench.data_dir, and `data fetch` says which files it could not get.
UNAVAILABLE = {"giebench": {f"upstream/GIEBench/GIEBench/data/{c}-Prompt.json" for c in ("Raw", "ID", "COT")}}
# (the test's items, written for it, are not the pinned files: accepted as such, and recorded so in run.json)
OPTIONS = {"giebench": ["--option", f"giebench.data_dir={GIEBENCH_FIXTURES}", "--allow-unverified"]}


@pytest.mark.parametrize("name", sorted(BUILTIN_ENTRY_POINTS))
def test_fetched_data_runs_with_no_mirror_and_no_network(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    env = {"EMPATHYBENCH_CACHE_DIR": str(cache), "EMPATHYBENCH_MIRROR": str(MIRROR), "OPENAI_API_KEY": "sk-x"}
    fetched = cli_in_process(["data", "fetch", "--bench", name], env)
    missing = UNAVAILABLE.get(name, set())
    assert fetched.returncode == (2 if missing else 0), fetched.stderr
    pins = load(name).data_pins()
    assert pins and set(missing) <= set(pins)
    verified = cli_in_process(["data", "verify", "--bench", name], env)
    listed = dict(reversed(line.split(maxsplit=1)) for line in verified.stdout.splitlines() if line.strip())
    assert listed == {key: ("missing" if key in missing else "ok") for key in pins}  # every file it can use

    del env["EMPATHYBENCH_MIRROR"]

    def no_network(location: str) -> bytes:
        raise AssertionError(f"a run read {location} although its data was fetched")

    monkeypatch.setattr(data_fetch, "_read_source", no_network)
    with CannedServer(name) as server:
        args = ["run", "-m", f"openai/{MODEL}", "--base-url", server.base_url, "--bench", name, "--preset", "demo"]
        instrument = load(name)
        if "judge" in instrument.required_roles and not instrument.demo.self_judged:
            args += ["--judge", f"openai/{JUDGE}", "--judge-base-url", server.base_url]
        if "simulator" in instrument.required_roles and not instrument.demo.self_simulated:
            args += ["--simulator", f"openai/{SIMULATOR}", "--simulator-base-url", server.base_url]
        ran = cli_in_process([*args, *OPTIONS.get(name, []), "--out", str(tmp_path / "run"), "-q"], env)
        assert ran.returncode == 0, ran.stderr
        assert server.asked  # it ran against the server, its data from the cache alone
