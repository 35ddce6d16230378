"""The exported job's files are JSON lines (the output contract, docs/export.md): each read the same way, every
line checked, and a missing file or a line that is not JSON one EngineError naming the file and the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from explorer.errors import EngineError


def json_lines(path: Path, what: str) -> Iterator[tuple[int, Any]]:
    """(line number, the line's JSON) for each non-blank line of ``path``; ``what`` names a line in errors."""
    try:
        with path.open() as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    try:
                        yield number, json.loads(line)
                    except ValueError as error:
                        raise EngineError(f"{path}: line {number} is not {what} ({error.__class__.__name__})") from None
    except FileNotFoundError:
        raise EngineError(f"the exported job wrote no {path.name}; it should be in {path.parent}") from None
