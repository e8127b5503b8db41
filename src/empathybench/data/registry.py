"""The upstream files EmpathyBench uses, pinned by repository, commit, path and hash.

The pins are facts copied from the project's research manifest (shared/datasets/MANIFEST.json);
the content itself is never committed, it is fetched at run time (see `fetch.py`).
"""

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from urllib.parse import quote

GITHUB_RAW_PREFIX = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class DataFile:
    key: str
    repo: str
    commit: str
    path: str
    sha256: str | None
    git_blob_sha1: str | None
    size: int | None

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


def load_pins(package: str, filename: str = "pins.json", key_prefix: str = "") -> dict[str, DataFile]:
    """The pins file `filename` shipped in `package` (`{"files": {name: {repo, commit, path, sha256,
    git_blob_sha1, bytes}}}`), keyed by its names; each DataFile's key is `key_prefix + name`."""
    raw = json.loads(resources.files(package).joinpath(filename).read_text("utf-8"))
    return {
        name: DataFile(
            key=key_prefix + name,
            repo=entry["repo"],
            commit=entry["commit"],
            path=entry["path"],
            sha256=entry["sha256"],
            git_blob_sha1=entry["git_blob_sha1"],
            size=entry["bytes"],
        )
        for name, entry in raw["files"].items()
    }


@cache
def _load_registry() -> dict[str, DataFile]:
    return load_pins("empathybench.data", "registry.json")


class _Registry:
    """Read-only mapping view, loaded on first use so `import` stays cheap."""

    def __getitem__(self, key: str) -> DataFile:
        return _load_registry()[key]

    def __contains__(self, key: object) -> bool:
        return key in _load_registry()

    def __iter__(self):
        return iter(_load_registry())

    def __len__(self) -> int:
        return len(_load_registry())

    def values(self):
        return _load_registry().values()

    def items(self):
        return _load_registry().items()


REGISTRY = _Registry()
