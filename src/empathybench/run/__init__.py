"""Orchestration: one `empathybench run` (execute.py), its options (options.py), repeats, and the Python API (api.py).

`empathybench.run` is also the Python API's function: `from empathybench import run` must give a callable whether
or not this package was imported first (importing it sets the attribute `run` of `empathybench` to this module), so
the module itself is callable and forwards to `empathybench.run.api.run`.
"""

import sys
import types
from typing import Any


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from empathybench.run.api import run

        return run(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
