"""Pinned data: fetched through a directory or http mirror, verified, cached; tampering refused."""

import hashlib
import http.server
import json
import shutil
import threading
from functools import partial
from importlib import resources
from pathlib import Path

import pytest

from empathybench.data.fetch import cached_path, fetch_entry, fetch_pinned, git_blob_sha1_of, source_url, verify_cached
from empathybench.data.registry import DataFile, load_pins, pin
from empathybench.errors import DataError
from empathybench.instruments.registry import all_benchmarks

EQBENCH = "empathybench.instruments.eqbench"
EMOTIONBENCH = "empathybench.instruments.emotionbench"
EQBENCH_V2 = "eqbench/v2/eq_bench_v2_questions_171.json"


def fetch(key: str, **options: bool) -> object:
    """EQ-Bench's (or, for an emotionbench/ key, EmotionBench's) pinned file `key`."""
    return fetch_pinned(EMOTIONBENCH if key.startswith("emotionbench/") else EQBENCH, key, **options)


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(cache))
    return cache


def _copy_into_mirror(entry: DataFile, mirror: Path, target_root: Path) -> Path:
    source = mirror / entry.repo / entry.commit / entry.path
    target = target_root / entry.repo / entry.commit / entry.path
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


def test_every_instrument_pins_its_files_in_its_own_folder_with_a_hash() -> None:
    found = {name: instrument.data_pins() for name, instrument in all_benchmarks().items()}
    assert sum(len(pins) for pins in found.values()) >= 150
    for name, pins in found.items():
        if name == "example":
            continue  # the example plugin ships its items in its package
        assert pins, f"{name} pins no file"
        for entry in pins.values():
            assert len(entry.commit) == 40
            assert entry.sha256 or entry.git_blob_sha1
    assert found["eqbench"][EQBENCH_V2].url == (
        "https://raw.githubusercontent.com/EQ-bench/EQ-Bench/0ce2726614517485eee300a2424f0ee581322b29/"
        "data/eq_bench_v2_questions_171.json"
    )


@pytest.mark.parametrize(
    "name", ["emotionbench", "eqbench", "seceu", "giebench", "empathetic", "emobench", "eqbench3", "sage"]
)
def test_load_pins_reads_every_field_of_a_pins_file(name: str) -> None:
    package = f"empathybench.instruments.{name}"
    raw = json.loads(resources.files(package).joinpath("pins.json").read_text("utf-8"))["files"]
    pins = load_pins(package)
    assert list(pins) == list(raw)  # keyed by the file's own names, in its order
    for name, entry in pins.items():
        assert entry.key == name
        assert (entry.repo, entry.commit, entry.path) == (raw[name]["repo"], raw[name]["commit"], raw[name]["path"])
        assert (entry.sha256, entry.git_blob_sha1, entry.size) == (
            raw[name]["sha256"],
            raw[name]["git_blob_sha1"],
            raw[name]["bytes"],
        )
        assert entry.url == raw[name].get("url", entry.url)  # where the file names its URL, it is the same


def test_paths_with_spaces_are_quoted_in_urls_and_kept_in_mirror_paths(mirror: Path) -> None:
    entry = pin(EMOTIONBENCH, "emotionbench/results/panas/crowd.xlsx")
    assert "PANAS%20Test/crowd.xlsx" in entry.url
    assert source_url(entry, str(mirror)).endswith("PANAS Test/crowd.xlsx")


def test_fetch_from_directory_mirror_verifies_and_caches(mirror: Path, fresh_cache: Path) -> None:
    fetched = fetch(EQBENCH_V2)
    assert fetched.verified
    assert fetched.path == cached_path(pin(EQBENCH, EQBENCH_V2))
    assert fetched.path.is_relative_to(fresh_cache)
    assert hashlib.sha256(fetched.path.read_bytes()).hexdigest() == pin(EQBENCH, EQBENCH_V2).sha256
    assert verify_cached(pin(EQBENCH, EQBENCH_V2)) == ("ok", None)
    again = fetch(EQBENCH_V2)
    assert again.source == str(fetched.path)  # served from the cache, not the mirror


def test_fetch_over_http_mirror(mirror: Path, fresh_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(mirror))
    handler.log_message = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("EMPATHYBENCH_MIRROR", f"http://127.0.0.1:{server.server_address[1]}/")
        fetched = fetch("emotionbench/results/panas/crowd.xlsx")  # a path with a space, URL-quoted
        assert fetched.verified
        assert fetched.source.startswith("http://127.0.0.1:")
    finally:
        server.shutdown()
        server.server_close()


def test_tampered_mirror_is_refused_naming_file_and_both_hashes(
    mirror: Path, fresh_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = pin(EQBENCH, EQBENCH_V2)
    tampered_root = tmp_path / "mirror"
    target = _copy_into_mirror(entry, mirror, tampered_root)
    data = bytearray(target.read_bytes())
    data[100] ^= 0x01
    target.write_bytes(bytes(data))
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", str(tampered_root))
    with pytest.raises(DataError) as excinfo:
        fetch(EQBENCH_V2)
    message = str(excinfo.value)
    assert EQBENCH_V2 in message
    assert entry.sha256 in message
    assert hashlib.sha256(bytes(data)).hexdigest() in message
    assert not cached_path(entry).exists()  # nothing half-accepted
    accepted = fetch(EQBENCH_V2, allow_unverified=True)
    assert not accepted.verified
    assert accepted.sha256 == hashlib.sha256(bytes(data)).hexdigest()


def test_tampered_cache_is_refused(mirror: Path, fresh_cache: Path) -> None:
    path = fetch(EQBENCH_V2).path
    path.write_bytes(path.read_bytes() + b" ")
    status, detail = verify_cached(pin(EQBENCH, EQBENCH_V2))
    assert status == "mismatch" and detail and pin(EQBENCH, EQBENCH_V2).sha256 in detail
    with pytest.raises(DataError, match="checksum mismatch"):
        fetch(EQBENCH_V2)
    assert fetch_entry(pin(EQBENCH, EQBENCH_V2), refresh=True).verified  # a refresh restores the pinned content


def test_git_blob_sha1_matches_git(mirror: Path) -> None:
    entry = pin(EQBENCH, EQBENCH_V2)
    data = (mirror / entry.repo / entry.commit / entry.path).read_bytes()
    assert git_blob_sha1_of(data) == entry.git_blob_sha1
    assert git_blob_sha1_of(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's empty blob


def test_missing_file_and_unknown_key_are_clear_errors(tmp_path: Path, monkeypatch, fresh_cache: Path) -> None:
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", str(tmp_path / "empty-mirror"))
    with pytest.raises(DataError, match="not found in the mirror"):
        fetch(EQBENCH_V2)
    with pytest.raises(DataError, match=r"unknown data file 'nosuch/file\.json'"):
        fetch("nosuch/file.json")


def test_unreachable_http_source_is_a_clear_error(fresh_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", f"http://127.0.0.1:{port}")
    with pytest.raises(DataError, match="cannot download"):
        fetch(EQBENCH_V2)
