"""One exception type for everything a user can get wrong, so front ends print words, not tracebacks."""


class InputError(ValueError):
    """Bad input or configuration; the message names the file, column and row where it can."""
