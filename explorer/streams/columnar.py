"""Whole columns read at once (pyarrow compute and numpy), so a file of ten million events loads in seconds, not
the minutes a Python loop over its cells takes (issue 31).

Every function here is a fast path for the common, clean case, and says ``None`` (or leaves the column alone)
whenever a column is anything else: a blank, a duplicate, a cell of another type, a spelling it does not know.
The careful per-cell code in ``times``, ``columns`` and ``loading`` then reads the column as before and writes
the message that names the row. So the fast path never has to reproduce a message, and a value is never read
two ways: it accepts only what the careful code reads to the same value (integers Arrow parses, ISO-8601 of one
strict shape that pandas and Arrow read alike).

Text columns arrive as Arrow strings when the file was CSV or Parquet (``files``), and as Python strings from
JSON, Avro, uploads and generators; :func:`strings` gives both as one Arrow array.
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

# what Python's str.strip() removes (every character whose isspace() is true), so that trimming here and there agree
WHITESPACE = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())
BLANK_WORDS = pa.array(["", "nan", "null", "none", "nat"])  # is_blank's words, after strip and lower
# the one ISO-8601 shape read here: seconds present, up to 9 fractional digits, Z or ±hh:mm or no zone, and years
# well inside datetime64[ns] (1678-2261), which both Arrow and pandas read to the same nanosecond
ISO = (r"^(1(6(7[89]|[89][0-9])|[7-9][0-9][0-9])|2([01][0-9][0-9]|2[0-5][0-9]|26[01]))-[0-9]{2}-[0-9]{2}"
       r"[T ]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})?$")


def strings(series: pd.Series) -> pa.ChunkedArray | None:
    """The column as Arrow strings, when every cell is a string (Arrow nulls allowed); None for anything else (a
    number, a dict, a None among Python strings), which the per-cell code reads."""
    dtype = series.dtype
    if isinstance(dtype, pd.ArrowDtype):
        if pa.types.is_string(dtype.pyarrow_dtype) or pa.types.is_large_string(dtype.pyarrow_dtype):
            chunked: pa.ChunkedArray = series.array.__arrow_array__()
            return chunked
        return None
    if pd.api.types.is_object_dtype(dtype) and len(series) and pd.api.types.infer_dtype(series, skipna=False) == "string":
        try:
            return pa.chunked_array([pa.array(series.to_numpy(dtype=object), type=pa.string())])
        except (UnicodeEncodeError, pa.ArrowInvalid):  # a lone surrogate (JSON's "\ud800"): not UTF-8, per cell
            return None
    return None


def objects(series: pd.Series) -> pd.Series:
    """An Arrow-backed column as the Python objects pandas' own readers give (None for a null), for the per-cell
    code: it was written for, and quotes, exactly those."""
    if not isinstance(series.dtype, pd.ArrowDtype):
        return series
    values = series.array.__arrow_array__().to_numpy(zero_copy_only=False)
    return pd.Series(np.asarray(values, dtype=object), index=series.index, name=series.name)


def trimmed(values: pa.ChunkedArray) -> pa.ChunkedArray:
    """Each string with Python's whitespace stripped from both ends (what ``str.strip()`` does). A column where
    no cell can begin or end with whitespace (nearly every file) is returned as it is, not copied: trimming ten
    million ISO times took 0.6 s."""
    if not _may_need_trim(values):
        return values
    out: pa.ChunkedArray = pc.utf8_trim(values, characters=WHITESPACE)
    return out


# a cell's first or last byte that may be whitespace: ASCII whitespace, or any byte of a character beyond ASCII
# (every such character Python strips is several bytes, each at least 0x80)
_MAY_BE_SPACE = np.zeros(256, dtype=bool)
_MAY_BE_SPACE[[ord(c) for c in WHITESPACE if ord(c) < 0x80]] = True
_MAY_BE_SPACE[0x80:] = True


def _may_need_trim(values: pa.ChunkedArray) -> bool:
    """Whether some cell's first or last byte may be whitespace, read off each chunk's offsets and bytes."""
    for chunk in values.chunks:
        if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)):
            return True
        _, offset_buffer, data_buffer = chunk.buffers()
        if len(chunk) == 0 or data_buffer is None:
            continue
        width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(offset_buffer, dtype=width)[chunk.offset:chunk.offset + len(chunk) + 1].astype(np.int64)
        data = np.frombuffer(data_buffer, dtype=np.uint8)
        starts, ends = offsets[:-1], offsets[1:]
        filled = ends > starts
        if _MAY_BE_SPACE[data[starts[filled]]].any() or _MAY_BE_SPACE[data[ends[filled] - 1]].any():
            return True
    return False


def blank(values: pa.ChunkedArray, stripped: pa.ChunkedArray) -> npt.NDArray[np.bool_]:
    """Which cells ``times.is_blank`` calls blank: a null, or text that is empty, nan, null, none or nat. Only
    cells of at most four bytes are lowercased and looked up: a cell that lowercases to one of those words is
    ASCII (no other character lowercases to n, a, u, l, o, e or t), so no longer than the word. Ten million ids
    are rarely that short, and looking every one up took 0.4 s; a length is read off the offsets."""
    out = np.asarray(pc.is_null(values).to_numpy(zero_copy_only=False), dtype=bool)
    short = np.asarray(pc.binary_length(stripped).to_numpy(zero_copy_only=False)) <= 4
    short &= ~out
    if short.any():
        words = pc.is_in(pc.utf8_lower(stripped.filter(pa.array(short))), value_set=BLANK_WORDS)
        out[short] |= np.asarray(pc.fill_null(words, False).to_numpy(zero_copy_only=False), dtype=bool)
    return out


def all_distinct(values: pa.ChunkedArray) -> bool:
    """Whether no two strings are equal (nulls aside: ids have none by now). Hashing ten million strings in
    Arrow's hash table takes seconds; here each string's bytes are mixed into a 64-bit hash eight at a time,
    the hashes are sorted, and only strings whose hashes meet are compared, as text."""
    if sum(chunk.type != pa.string() for chunk in values.chunks) or len(values) < 2:
        return len(values) < 2 or len(pc.unique(values)) == len(values)
    hashes = np.concatenate([_hashes(chunk) for chunk in values.chunks if len(chunk)])
    ranked = np.sort(hashes)
    twins = ranked[1:][ranked[1:] == ranked[:-1]]
    if not len(twins):
        return True
    suspects = values.filter(pa.array(np.isin(hashes, twins)))  # the same hash: the same text, or a collision
    return len(pc.unique(suspects)) == len(suspects)


_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [2**64 - 1], dtype=np.uint64)  # a word's first k bytes


def _hashes(chunk: pa.Array) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each string's length and bytes, read as little-endian words from Arrow's own buffers."""
    offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset:chunk.offset + len(chunk) + 1]
    base, end = int(offsets[0]), int(offsets[-1])
    data = np.concatenate([np.frombuffer(chunk.buffers()[2], dtype=np.uint8, count=end - base, offset=base)
                           if end > base else np.zeros(0, dtype=np.uint8), np.zeros(8, dtype=np.uint8)])
    words = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))  # a word at every byte
    start = offsets[:-1].astype(np.int64) - base
    lengths = np.diff(offsets).astype(np.int64)
    mixed = lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for at in range(0, int(lengths.max()), 8):  # a round per word the string has (so not per chunk's longest)
        step = mixed ^ (words[np.minimum(start + at, len(words) - 1)] & _MASKS[np.clip(lengths - at, 0, 8)])
        step *= np.uint64(0xBF58476D1CE4E5B9)
        step ^= step >> np.uint64(31)
        mixed = np.where(lengths > at, step, mixed)
    return mixed


def integers(values: pa.ChunkedArray) -> npt.NDArray[np.int64] | None:
    """Text that all spells int64 integers (an optional minus, digits) as int64, or None. Arrow reads no
    spelling that ``times.integer_text`` reads otherwise; anything else (1.5, +5, 1e3, past int64) is None."""
    if values.null_count:
        return None
    try:
        ints = pc.cast(values, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return np.asarray(ints.to_numpy(), dtype=np.int64)


def iso_instants(values: pa.ChunkedArray) -> tuple[npt.NDArray[np.datetime64], bool] | None:
    """ISO-8601 text of :data:`ISO`'s shape, all with a zone or all without: the instants (UTC; naive text as
    written) and whether they had a zone. None for any other text (a mixture, another shape, 2026-02-30).
    Microseconds when no cell has more than six fractional digits (Arrow refuses the cast then, it never cuts
    digits), so they need no rounding from ns (0.2 s a column of 10M); nanoseconds otherwise."""
    if values.null_count or len(values) == 0:
        return None
    if not _one_shape(values) and not pc.all(pc.match_substring_regex(values, ISO)).as_py():
        return None
    for zone in ("UTC", None):
        for unit in ("us", "ns"):
            try:
                stamps = pc.cast(values, pa.timestamp(unit, zone))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue
            ticks = np.asarray(stamps.cast(pa.int64()).to_numpy(), dtype=np.int64)
            return ticks.view(f"datetime64[{unit}]"), zone is not None
    return None


# where ISO puts the year, hour, minute and second (its date and time have fixed widths), and the ranges it allows
_ISO_FIELDS = ((0, 4, 1678, 2261), (11, 13, 0, 23), (14, 16, 0, 59), (17, 19, 0, 59))
_ROWS_AT_ONCE = 1 << 20  # rows compared at a time: a 24-byte ISO column's temporaries stay at 25 MB


def _one_shape(values: pa.ChunkedArray) -> bool:
    """Whether every cell is spelled as the first, which :data:`ISO` reads, digit for digit: the same length,
    digits where it has digits and its other characters elsewhere, and the year, hour, minute and second in ISO's
    ranges. Each cell then matches ISO, as the regex would say, at a fifth of its cost (0.1 s a column of 10M
    against 0.55 s). False says only that the cells differ in shape (a T and a space, a fraction cut short):
    the regex decides then."""
    first = values[0].as_py()
    if values.type != pa.string() or not first.isascii() or not re.fullmatch(ISO, first):
        return False
    width = len(first)
    if pc.min_max(pc.binary_length(values)).as_py() != {"min": width, "max": width}:
        return False
    template = np.frombuffer(first.encode(), dtype=np.uint8)
    digit = (template >= ord("0")) & (template <= ord("9"))
    low = np.where(digit, ord("0"), template).astype(np.uint8)
    span = np.where(digit, 9, 0).astype(np.uint8)
    for chunk in values.chunks:
        if not len(chunk):
            continue
        start = int(np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=1, offset=4 * chunk.offset)[0])
        cells = np.frombuffer(chunk.buffers()[2], dtype=np.uint8, count=len(chunk) * width, offset=start)
        cells = cells.reshape(-1, width)
        for at in range(0, len(cells), _ROWS_AT_ONCE):
            digits = cells[at:at + _ROWS_AT_ONCE] - low  # a digit's value; 0 for a character as the first's
            if not (digits <= span).all():  # (uint8: a byte below its low wraps round, past the span)
                return False
            for begin, end, least, most in _ISO_FIELDS:
                number = digits[:, begin].astype(np.int16)
                for column in range(begin + 1, end):
                    number = number * 10 + digits[:, column]
                if number.min() < least or number.max() > most:
                    return False
    return True


def text_codes(series: pd.Series) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.object_]] | None:
    """A text column (keys, partitions, kinds) as codes into its sorted distinct values, each cell read as
    ``columns.text_cell`` reads it (blank to "", the rest stripped), but once per distinct cell, in Arrow. For
    strings and signed integers (whose cells are their decimal text); None for other columns. Every name is
    some row's, as ``pd.factorize`` gives them."""
    values = strings(series)
    if values is not None:
        encoded = pc.dictionary_encode(values)  # one dictionary, shared by every chunk
        cells = encoded.chunks[0].dictionary if encoded.num_chunks else pa.array([], type=pa.string())
        if values.null_count:  # a null cell: a code of its own, the last
            cells = pa.concat_arrays([cells.cast(pa.string()), pa.array([None], type=pa.string())])
        stripped = trimmed(pa.chunked_array([cells]))
        read = pc.if_else(pa.chunked_array([blank(pa.chunked_array([cells]), stripped)]), "", stripped)
        names = pc.unique(read)
        names = names.take(pc.sort_indices(names))  # code point order, as Python sorts str
        rank = np.asarray(pc.index_in(read, value_set=names).to_numpy(zero_copy_only=False), dtype=np.int64)
        indices = np.concatenate([pc.fill_null(chunk.indices, len(cells) - 1).to_numpy(zero_copy_only=False)
                                  for chunk in encoded.chunks])
        return rank[indices], np.asarray(names.to_numpy(zero_copy_only=False), dtype=object)
    if pd.api.types.is_signed_integer_dtype(series.dtype):  # never blank, and distinct integers read distinct
        found, uniques = pd.factorize(series.to_numpy())
        text = np.asarray(uniques).astype(str)
        order = np.argsort(text, kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        return rank[found], np.asarray(text[order].tolist(), dtype=object)
    return None


def used_codes(codes: npt.NDArray[np.int64], names: npt.NDArray[np.object_]) -> tuple[npt.NDArray[np.int64],
                                                                                       npt.NDArray[np.object_]]:
    """Codes renumbered over the names that some row still uses (rows were dropped: the watermark rows), as
    ``pd.factorize(sort=True)`` of the remaining rows gives them."""
    if len(names) == 1 and len(codes):  # (a column the file does not have: one "" for every row)
        return codes, names
    present = np.bincount(codes, minlength=len(names)) > 0
    if present.all():
        return codes, names
    renumber = np.cumsum(present) - 1
    return renumber[codes].astype(np.int64), names[present]


def first(mask: npt.NDArray[np.bool_]) -> int:
    """The first True's row, counted from 1."""
    return int(np.flatnonzero(mask)[0]) + 1
