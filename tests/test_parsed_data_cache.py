"""What a parser read from a fetched data file is kept by the file's hash: the next run neither parses nor imports the
parser again, and reads exactly what parsing gives (SECEU's .docx files, read through the mirror)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from empathybench.data import parsed
from empathybench.data.fetch import FetchedFile, fetch_pinned, sha256_of
from empathybench.errors import DataError
from empathybench.instruments.seceu import data as seceu_data

PINS = "empathybench.instruments.seceu"


@pytest.fixture
def cache(tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _counting_parser(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []
    real = seceu_data.docx_paragraphs

    def counted(path: Path) -> list[str]:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(seceu_data, "docx_paragraphs", counted)
    return calls


def test_the_second_read_is_the_kept_text_of_the_first_parse(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_parser(monkeypatch)
    fetched = fetch_pinned(PINS, seceu_data.NORM_KEY)
    first = seceu_data.fetched_docx_paragraphs(fetched)
    second = seceu_data.fetched_docx_paragraphs(fetched)
    assert first == second == seceu_data.docx_paragraphs(fetched.path)
    assert len(calls) == 2  # the first read and the reference above; the second read parsed nothing
    kept = list((cache / parsed.PARSED_DIR).iterdir())
    assert [p.name.split(".", 1)[0] for p in kept] == [fetched.sha256]
    # The checks on the text still run on the kept text: the norm and the items load as they did.
    items, norm, _ = seceu_data.load_items()
    assert len(items) == seceu_data.N_ITEMS and len(norm.template) == seceu_data.N_ITEMS


@pytest.mark.parametrize("damage", ["not json", json.dumps({"lines": []}), json.dumps(["ok", 3])])
def test_a_damaged_kept_file_means_parsing_again(cache: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    fetched = fetch_pinned(PINS, seceu_data.NORM_KEY)
    expected = seceu_data.fetched_docx_paragraphs(fetched)
    (kept,) = (cache / parsed.PARSED_DIR).iterdir()
    kept.write_text(damage, "utf-8")
    calls = _counting_parser(monkeypatch)
    assert seceu_data.fetched_docx_paragraphs(fetched) == expected
    assert len(calls) == 1
    assert json.loads(kept.read_text("utf-8")) == expected  # written again, whole


def test_another_parser_version_or_other_bytes_parse_again(tmp_path: Path, cache: Path) -> None:
    fetched = fetch_pinned(PINS, seceu_data.NORM_KEY)
    seen: list[str] = []

    def parse(path: Path) -> list[str]:
        seen.append(path.name)
        return [path.name]

    assert parsed.parsed_lines(fetched, "reader-1", parse) == [fetched.path.name]
    assert parsed.parsed_lines(fetched, "reader-1", parse) == [fetched.path.name]
    assert parsed.parsed_lines(fetched, "reader-2", parse) == [fetched.path.name]
    other = tmp_path / "other.docx"
    other.write_bytes(fetched.path.read_bytes() + b"\0")
    changed = FetchedFile(fetched.key, other, sha256_of(other.read_bytes()), False, str(other))
    assert parsed.parsed_lines(changed, "reader-1", parse) == ["other.docx"]
    assert seen == [fetched.path.name, fetched.path.name, "other.docx"]


def test_a_file_the_parser_refuses_is_refused_every_time_and_nothing_is_kept(tmp_path: Path, cache: Path) -> None:
    damaged = tmp_path / "damaged.docx"
    damaged.write_bytes(b"not a zip file")
    fetched = FetchedFile("seceu/damaged.docx", damaged, sha256_of(damaged.read_bytes()), False, str(damaged))
    for _ in range(2):
        with pytest.raises(DataError, match=r"is not a readable \.docx file"):
            seceu_data.fetched_docx_paragraphs(fetched)
    assert not (cache / parsed.PARSED_DIR).exists()


def test_a_cache_that_cannot_be_written_still_gives_the_text(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: Path, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(parsed, "write_atomically", refuse)
    fetched = fetch_pinned(PINS, seceu_data.NORM_KEY)
    assert seceu_data.fetched_docx_paragraphs(fetched) == seceu_data.docx_paragraphs(fetched.path)
    assert not (cache / parsed.PARSED_DIR).exists()


def test_a_later_process_does_not_import_python_docx(cache: Path) -> None:
    code = (
        "import sys; from empathybench.instruments.seceu.data import load_items; items, _, _ = load_items();"
        "print(len(items), 'docx' in sys.modules)"
    )
    env = {**os.environ}
    outputs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=True)
        for _ in range(2)
    ]
    assert [o.stdout.split() for o in outputs] == [["40", "True"], ["40", "False"]]
