"""The package's version, in a module of its own at the bottom of the layers (run/ records it in run.json)."""

__version__ = "0.1.0"
