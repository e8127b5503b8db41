"""The suite's own scheduling: the embedded model's test files are known to conftest.py, which puts them on one
worker together (see EMBEDDED_MODEL_FILES)."""

import re
from pathlib import Path

from conftest import EMBEDDED_MODEL_FILES

TESTS = Path(__file__).parent


def test_the_embedded_model_files_are_the_files_with_the_model_mark() -> None:
    marked = {path.name for path in TESTS.glob("test_*.py") if re.search(r"pytest\.mark\.model\b", path.read_text())}
    assert marked == EMBEDDED_MODEL_FILES
