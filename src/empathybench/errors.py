"""Errors meant for people: each carries one line that says what went wrong and how to fix it."""


class UserError(Exception):
    """A problem the user can fix (bad option, missing key, tampered data...). Shown as one line, exit 2."""

    exit_code = 2


class DataError(UserError):
    """A dataset file could not be fetched or failed verification."""


class ModelConfigError(UserError):
    """A model spec cannot be used: unknown provider, missing API key, missing extra."""


class BackendUnavailableError(UserError):
    """The model server cannot be reached or refuses our credentials; the run cannot go on."""


class BudgetStopError(UserError):
    """`--max-cost` stopped the run: finished items are kept; a larger budget continues it. Exit 3."""

    exit_code = 3


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an interrupt so that a run ends the way Ctrl-C ends it: run.json says so (exit 143)."""
