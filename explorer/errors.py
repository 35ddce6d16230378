"""The errors a user can meet, by what went wrong, so front ends print words, not tracebacks, and the CLI's exit
status says which (:data:`EXIT_STATUS`): 2 for bad input, 1 for an engine that failed on valid input, 130 for
a run the user stopped."""


class ExplorerError(Exception):
    """Anything the explorer reports in one line; the subclass says whose fault it is."""


class InputError(ExplorerError, ValueError):
    """Bad input or configuration; the message names the file, column and row where it can."""


class EngineError(ExplorerError, RuntimeError):
    """An engine failed on valid input (the JVM died, Spark's reports do not add up); the message says where
    and what resumes the run."""


class Interrupted(ExplorerError):
    """The user stopped a run (a cancel button, Ctrl-C); the message says what resumes it."""


EXIT_STATUS: dict[type[ExplorerError], int] = {InputError: 2, EngineError: 1, Interrupted: 130}


def exit_status(error: ExplorerError) -> int:
    """The CLI's exit status for ``error``: by its type, never by its words."""
    return next(status for kind, status in EXIT_STATUS.items() if isinstance(error, kind))
