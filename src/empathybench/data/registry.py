"""The upstream files an instrument uses, pinned by repository, commit, path and hash.

Every instrument keeps its pins in one file of one format in its own folder, `pins.json`:
`{"about": "...", "files": {KEY: {"repo", "commit", "path", "sha256", "git_blob_sha1", "bytes"}}}`, keyed by names
of its own choosing (conventionally prefixed with its name). A pin may hold one block of a file instead of the whole
file: `"extract": NAME` pins the text of the JavaScript template literal assigned to NAME in it (stripped, one
final newline; its sha256 is the block's), and `"mirror_copy"` names where a directory mirror keeps that block when
it does not hold the whole file (a path under the mirror's root: a repository too large to mirror). The pins are
facts (from the project's research manifest, shared/datasets/MANIFEST.json); the content itself is never committed,
it is fetched at run time (see `fetch.py`). `empathybench data fetch|verify|where` reads them through
`Instrument.data_pins()`.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import import_module, resources
from urllib.parse import quote

from empathybench.errors import DataError

GITHUB_RAW_PREFIX = "https://raw.githubusercontent.com"
PINS_FILE = "pins.json"


@dataclass(frozen=True)
class DataFile:
    key: str
    repo: str
    commit: str
    path: str
    sha256: str | None
    git_blob_sha1: str | None
    size: int | None
    extract: str | None = None  # the template literal of the file that is pinned (None: the whole file)
    mirror_copy: str | None = None  # where a directory mirror keeps the extract (relative to its root)

    @property
    def relative_url(self) -> str:
        """`<owner>/<repo>/<commit>/<path>`: the part after the raw-content prefix, and the mirror layout."""
        return f"{self.repo}/{self.commit}/{quote(self.path)}"

    @property
    def url(self) -> str:
        return f"{GITHUB_RAW_PREFIX}/{self.relative_url}"

    @property
    def filename(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@cache
def load_pins(package: str, file_name: str = PINS_FILE) -> Mapping[str, DataFile]:
    """The pins of `package` (its `pins.json`, or a sibling pins file of the same format such as the released
    outputs its atlas scores), keyed by their names; {} when the package has none."""
    source = resources.files(package).joinpath(file_name)
    if not source.is_file():
        return {}
    raw = json.loads(source.read_text("utf-8"))
    return {
        name: DataFile(
            key=name,
            repo=entry["repo"],
            commit=entry["commit"],
            path=entry["path"],
            sha256=entry.get("sha256"),
            git_blob_sha1=entry.get("git_blob_sha1"),
            size=entry.get("bytes"),
            extract=entry.get("extract"),
            mirror_copy=entry.get("mirror_copy"),
        )
        for name, entry in raw["files"].items()
    }


def package_of(module: str) -> str:
    """The package a module belongs to (a package's own __init__ belongs to itself)."""
    return import_module(module).__package__ or module


def pin(package: str, key: str) -> DataFile:
    """The pinned file `key` of `package`; an unknown key is a DataError naming it."""
    try:
        return load_pins(package)[key]
    except KeyError:
        raise DataError(f"unknown data file {key!r} (not in {package}'s {PINS_FILE})") from None
