"""Where Spark's own output goes when the command line runs it.

Spark's JVM inherits the process's stderr: its start-up banner, and, when the JVM dies mid-run, pages of
tracebacks from py4j and from pyspark's accumulator thread, printed after the run's own one-line error. A
command-line user needs the one line. So before Spark starts, file descriptor 2 (the JVM's, and Python's
``sys.stderr``) is pointed at a log file for the rest of the process, and the command line writes its progress
bar and its error line to :func:`user_stderr`, the terminal's stderr kept aside.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

_user: TextIO | None = None
_log: Path | None = None


def divert_to(log: Path) -> Path:
    """Send everything later written to stderr (by the JVM, py4j, pyspark's threads) to ``log``; the first call
    wins. Returns the log in use."""
    global _user, _log
    if _user is None:
        sys.stderr.flush()
        _user = os.fdopen(os.dup(2), "w", buffering=1)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(fd, 2)
        os.close(fd)
        _log = log
    assert _log is not None
    return _log


def user_stderr() -> TextIO:
    """The terminal's stderr: set aside by :func:`divert_to`, else ``sys.stderr``."""
    return _user or sys.stderr
