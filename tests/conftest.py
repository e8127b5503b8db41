"""Shared fixtures: every test reads upstream data through the project's fetch code from the offline mirror."""

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("EMPATHYBENCH_TEST_MIRROR", REPO_ROOT.parent / "shared" / "mirror")).resolve()


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache_and_mirror(tmp_path_factory: pytest.TempPathFactory):
    """A fresh cache for the whole session and the offline mirror in place of the web."""
    saved = {k: os.environ.get(k) for k in ("EMPATHYBENCH_CACHE_DIR", "EMPATHYBENCH_MIRROR")}
    os.environ["EMPATHYBENCH_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    os.environ["EMPATHYBENCH_MIRROR"] = str(MIRROR)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def mirror() -> Path:
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    return MIRROR


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if MIRROR.is_dir():
        return
    skip = pytest.mark.skip(reason=f"the offline mirror is not at {MIRROR}")
    for item in items:
        if "mirror" in getattr(item, "fixturenames", ()):
            item.add_marker(skip)
