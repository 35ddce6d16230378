"""JSON event files as records: JSON lines (one object per line) or one JSON array of objects, told apart by the
first character that is not white space (``[``), whatever the suffix (.json, .jsonl, .ndjson).

A module of its own because an array must be read element by element: ``json.load`` of a whole file holds its
text and every object at once, and a syntax error would name a character offset, not the row to fix. Here the
text is read a MiB at a time and each element decoded as it completes, so the memory is the records plus one
chunk, and every refusal names the row (the element, from 1) and its line.
"""

from __future__ import annotations

import json
import re
from typing import IO, Any, Callable, Iterator

from explorer.errors import InputError

CHUNK = 1024**2
MAX_RECORD_CHARS = 64 * 1024**2  # one element longer than this, still not decoded, is reported as broken
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def records(open_text: Callable[[], IO[str]], where: str) -> Iterator[dict[str, Any]]:
    """The file's records, in file order; ``open_text`` opens it as text (called twice: once to look at its
    first character)."""
    with open_text() as handle:
        head = handle.read(4096)
        while head.isspace() and (more := handle.read(4096)):  # a file that starts with a lot of blank space
            head = more
    with open_text() as handle:
        if head.lstrip()[:1] == "[":
            yield from _array(_Text(handle), where)
        else:
            yield from _lines(handle, where)


def _lines(handle: IO[str], where: str) -> Iterator[dict[str, Any]]:
    for line_no, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: line {line_no} is not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise InputError(f"{where}: line {line_no} is not a JSON object")
        yield row


class _Text:
    """A text file read a chunk at a time, with a position in the part held and the line that position is on."""

    def __init__(self, handle: IO[str]):
        self.handle, self.buf, self.pos, self.lines_before = handle, "", 0, 1

    def more(self) -> bool:
        """Read another chunk, dropping what was consumed; False at the end of the file."""
        chunk = self.handle.read(CHUNK)
        if not chunk:
            return False
        self.lines_before += self.buf.count("\n", 0, self.pos)
        self.buf, self.pos = self.buf[self.pos:] + chunk, 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ("" at the end), without consuming it."""
        while True:
            match = _SPACE.match(self.buf, self.pos)
            self.pos = match.end() if match else self.pos
            if self.pos < len(self.buf) or not self.more():
                return self.buf[self.pos:self.pos + 1]

    def line(self, pos: int | None = None) -> int:
        return self.lines_before + self.buf.count("\n", 0, self.pos if pos is None else pos)

    def value(self, where: str, row: int) -> Any:
        """Decode the JSON value at the position, reading further chunks while it is incomplete."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if len(self.buf) - self.pos < MAX_RECORD_CHARS and self.more():
                    continue
                raise InputError(f"{where}: row {row} (line {self.line(exc.pos)}) of the JSON array is not valid "
                                 f"JSON ({exc.msg})") from None
            self.pos = end  # (a bare number cut by the chunk's end, 12|34, would read as 12: it is refused anyway)
            return value


def _array(text: _Text, where: str) -> Iterator[dict[str, Any]]:
    text.peek()
    text.pos += 1  # the "["
    row = 0
    if text.peek() == "]":
        text.pos += 1
    else:
        while True:
            row += 1
            if text.peek() == "":
                raise InputError(f"{where}: the JSON array ends after a ',' (line {text.line()}): is the file cut off?")
            line = text.line()
            value = text.value(where, row)
            if not isinstance(value, dict):
                raise InputError(f"{where}: row {row} (line {line}) of the JSON array is not a JSON object")
            yield value
            after = text.peek()
            text.pos += 1
            if after == "]":
                break
            if after != ",":
                raise InputError(f"{where}: the JSON array is not closed after row {row} (line {text.line()}): "
                                 + ("is the file cut off?" if after == "" else f"{after!r} where ',' or ']' belongs"))
    if text.peek() != "":
        raise InputError(f"{where}: text after the JSON array's closing ']' (line {text.line()}); a file holds one "
                         "array, or JSON lines")
