"""hedge.stream: read and write hedge tensor streams (formats/stream.md) from Python.

Standard library, msgpack and numpy only (Debian: python3-msgpack, python3-numpy; elsewhere
`pip install msgpack`); msgpack is imported when a stream is first read or written, so that
`import hedge` (hedge.evaluate on arrays) never needs it; pandas only for to_dataframe, imported
when it is called. python/hedge_stream.py is this module under its former name.

    import hedge.stream as hs                # or, as before: import hedge_stream as hs
    header, a = hs.read("emb.hs")            # a["mu"]: float32 [n, C, D], a["class"]: int32 [n]
    for rec in hs.records("big.hs"):         # one record at a time, constant memory
        print(rec["id"], rec["mu"].shape)
    hs.write("mine.hs", "embeddings", {"mu": mu, "class": labels}, {"dataset": "mine"})
    df = hs.to_dataframe("knn.hs")           # scalar fields as columns, vectors as name[i]

A path is a file name, "-" (stdin or stdout) or an open binary file object. Readers check what
the C readers check: the header's format and version, each tensor's dtype and byte count, the
fields against the header, the end marker and nothing after it; a stream cut short raises
ValueError, never returns part of it.
"""

import os
import stat
import sys

import numpy as np

VERSION = 1
DTYPES = ("uint8", "int32", "int64", "float32", "float64")

__all__ = ["read", "records", "write", "to_dataframe", "Reader"]


def _msgpack():
    """msgpack, imported on first use, or an ImportError that says how to install it."""
    try:
        import msgpack
    except ImportError as e:
        raise ImportError("hedge.stream needs the msgpack module to read or write streams (%s): "
                          "pip install msgpack, or on Debian apt install python3-msgpack" % e) from None
    return msgpack


def _open(path, mode):
    if hasattr(path, "read" if "r" in mode else "write"):
        return path, False
    if path == "-":
        return (sys.stdin.buffer if "r" in mode else sys.stdout.buffer), False
    return open(path, mode), True


def _bytes_left(f):
    """The bytes left in f when it is a regular file, else None: no array or map in it can claim
    more elements than that (each takes a byte at least), so the unpacker is told so, and a
    count beyond it is a stream cut short, not an allocation of gigabytes (a MemoryError)."""
    try:
        st = os.fstat(f.fileno())
        return max(st.st_size - f.tell(), 0) if stat.S_ISREG(st.st_mode) else None
    except (AttributeError, OSError, ValueError):
        return None


def _shape(s):
    """s as a tuple of dimensions, or None when it is not a list of integers >= 0"""
    if not isinstance(s, (list, tuple)) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                   for d in s):
        return None
    return tuple(s)


def _tensor(t, where):
    if not isinstance(t, dict) or set(("dtype", "shape", "data")) - set(t):
        raise ValueError("%s: not a tensor (a map of dtype, shape and data)" % where)
    if not isinstance(t["dtype"], str) or t["dtype"] not in DTYPES:
        raise ValueError("%s: unknown dtype %r" % (where, t["dtype"]))
    dt = np.dtype(t["dtype"]).newbyteorder("<")
    shape = _shape(t["shape"])
    if shape is None or not isinstance(t["data"], bytes):
        raise ValueError("%s: shape %r and data of %s: expected a list of sizes and bytes"
                         % (where, t["shape"], type(t["data"]).__name__))
    if len(t["data"]) != int(np.prod(shape, dtype=np.int64)) * dt.itemsize:
        raise ValueError("%s: %d bytes of data for %s %s" % (where, len(t["data"]), t["dtype"], list(shape)))
    return np.frombuffer(t["data"], dtype=dt).reshape(shape).astype(dt.newbyteorder("="), copy=False)


class Reader:
    """Iterates over the records of one stream: dicts of numpy arrays, one item each (a batched
    stream: one batch each). `header` is the header map; `count` the records read so far."""

    def __init__(self, path):
        msgpack = _msgpack()
        self._f, self._close = _open(path, "rb")
        self.name = path if isinstance(path, str) else getattr(path, "name", "stream")
        left = _bytes_left(self._f)
        limits = {} if left is None else {"max_array_len": max(left, 1), "max_map_len": max(left, 1)}
        self._u = msgpack.Unpacker(self._f, raw=False, max_buffer_size=2**32 - 1, **limits)
        # (a count the memory cannot hold, where the input's size is not known: a pipe)
        self._bad = (ValueError, MemoryError, msgpack.exceptions.UnpackException)
        try:
            h = next(self._u)
        except StopIteration:
            raise ValueError("%s: truncated stream: input ends inside the header" % self.name) from None
        except self._bad as e:
            if isinstance(e, MemoryError) or (left is not None and "exceeds max_" in str(e)):
                raise ValueError("%s: truncated stream: input ends inside the header (an array or map in it claims "
                                 "more elements than %s)" % (self.name, "memory holds" if left is None else
                                                             "the input's %d bytes" % left)) from None
            raise ValueError("%s: not a hedge stream (the header is not valid msgpack: %s)" % (self.name, e)) from None
        if not isinstance(h, dict) or h.get("format") != "hedge-stream":
            raise ValueError("%s: not a hedge stream" % self.name)
        if h.get("version") != VERSION:
            raise ValueError("%s: stream version %s is not supported (this reads version %d)"
                             % (self.name, h.get("version"), VERSION))
        self.header = h
        self.fields = {}
        fields = h.get("fields")
        if not isinstance(fields, list):
            raise ValueError("%s: corrupt stream header: fields is %r, expected an array of fields"
                             % (self.name, fields))
        for i, f in enumerate(fields):
            if (not isinstance(f, dict) or not isinstance(f.get("name"), str) or f.get("dtype") not in DTYPES
                    or _shape(f.get("shape")) is None or f["name"] in self.fields):
                raise ValueError("%s: corrupt stream header: field %d is %r, expected a map of a new name, a "
                                 "dtype (%s) and a shape" % (self.name, i, f, ", ".join(DTYPES)))
            self.fields[f["name"]] = f
        self.count = 0
        self._done = False

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        try:
            obj = next(self._u)
        except StopIteration:
            self.close()
            raise ValueError("%s: truncated stream: no end marker after %d records"
                             % (self.name, self.count)) from None
        except self._bad as e:
            self.close()
            why = "an array or map in it claims more elements than memory holds" if isinstance(e, MemoryError) else e
            raise ValueError("%s: corrupt stream: record %d is not valid msgpack (%s)"
                             % (self.name, self.count, why)) from None
        if isinstance(obj, dict) and "end" in obj:
            self._done = True
            if obj["end"] != self.count:
                self.close()
                raise ValueError("%s: corrupt stream: end marker says %s records, read %d"
                                 % (self.name, obj["end"], self.count))
            extra = self._u.read_bytes(1)  # the end marker is the last byte: nothing may follow
            self.close()
            if extra:
                raise ValueError("%s: data after the end marker" % self.name)
            raise StopIteration
        where = "%s: record %d" % (self.name, self.count)
        if not isinstance(obj, dict) or set(obj) != set(self.fields):
            raise ValueError("%s: fields %s, the header declares %s"
                             % (where, sorted(obj) if isinstance(obj, dict) else obj, sorted(self.fields)))
        rec = {}
        for name, t in obj.items():
            a = _tensor(t, "%s, field '%s'" % (where, name))
            f = self.fields[name]
            item = list(a.shape[1:] if self.header.get("batched") else a.shape)
            if a.dtype.name != f["dtype"] or item != list(f["shape"]):
                raise ValueError("%s, field '%s': %s %s, the header declares %s %s"
                                 % (where, name, a.dtype.name, list(a.shape), f["dtype"], f["shape"]))
            rec[name] = a
        self.count += 1
        return rec

    def close(self):
        if self._close:
            self._f.close()
            self._close = False


def records(path):
    """An iterator over the records of the stream at path (its header: .header)."""
    return Reader(path)


def read(path):
    """The whole stream: (header, {field: array}), each field's records stacked: [n, *item
    shape] (a batched stream: its batches concatenated)."""
    r = Reader(path)
    cols = {name: [] for name in r.fields}
    for rec in r:
        for name, a in rec.items():
            cols[name].append(a if r.header.get("batched") else a[None])
    out = {}
    for name, parts in cols.items():
        f = r.fields[name]
        out[name] = (np.concatenate(parts) if parts
                     else np.zeros([0] + list(f["shape"]), dtype=np.dtype(f["dtype"])))
    return r.header, out


def _as_stream_array(name, a, kind):
    """The array as the stream holds it: floats float32, uint8 and bool uint8, class int32, id
    int64, other integers int32 (int64 when a value needs it); an embedding's mu and var
    float32 whatever their dtype, [n, D] made [n, 1, D]."""
    if not isinstance(name, str) or not name:
        raise ValueError("array name %r: expected a non-empty string (the field's name)" % (name,))
    a = np.asarray(a)
    if a.ndim < 1:
        raise ValueError("array '%s' is %s %s: expected one row per item" % (name, a.dtype, a.shape))
    if kind == "embeddings" and name in ("mu", "var") and a.dtype.kind in "iub":
        a = a.astype(np.float64)  # an embedding's numbers are floats, as fromnpz takes any dtype
    if a.dtype.kind == "f":
        a = a.astype(np.float32)
        if kind == "embeddings" and name in ("mu", "var") and a.ndim == 2:
            a = a[:, None, :]
    elif a.dtype.kind == "b" or a.dtype == np.uint8:
        a = a.astype(np.uint8)
    elif a.dtype.kind in "iu":
        fits = a.size == 0 or (a.min() >= -2**31 and a.max() < 2**31)
        if name == "class" and not fits:
            raise ValueError("array 'class' has values beyond int32")
        a = a.astype(np.int32 if fits and name != "id" else np.int64)
    else:
        raise ValueError("array '%s' is %s %s: expected numbers" % (name, a.dtype, a.shape))
    if kind == "embeddings" and name in ("mu", "var") and a.ndim != 3:
        raise ValueError("array '%s' is %s: expected [n, D] or [n, C, D]" % (name, list(a.shape)))
    return np.ascontiguousarray(a)


def write(path, kind, arrays, meta=None, program="hedge_stream.py", args=None):
    """Writes an unbatched stream of `kind`, one record per item: arrays maps field names to
    arrays of n rows (see _as_stream_array for the dtypes); meta maps keys to int, float, str,
    bool or numpy arrays (written as tensors). An embedding stream without an id gets id =
    0..n-1, as fromnpz gives it."""
    cols = {name: _as_stream_array(name, a, kind) for name, a in arrays.items()}
    ns = {name: len(a) for name, a in cols.items()}
    if len(set(ns.values())) > 1:
        raise ValueError("the arrays have different numbers of rows: %s" % ns)
    n = next(iter(ns.values())) if ns else 0
    if "id" not in cols:
        cols["id"] = np.arange(n, dtype=np.int64)
    if "end" in cols:
        raise ValueError("a field may not be called 'end'")

    def tensor(a):
        a = np.asarray(a)  # a 0-d item stays 0-d (np.ascontiguousarray would make it [1])
        return {"dtype": a.dtype.name, "shape": list(a.shape),
                "data": a.astype(a.dtype.newbyteorder("<")).tobytes(order="C")}

    m = {}
    for k, v in (meta or {}).items():
        m[k] = tensor(np.asarray(v)) if isinstance(v, np.ndarray) else v.item() if isinstance(v, np.generic) else v
    header = {"format": "hedge-stream", "version": VERSION, "kind": kind, "batched": False,
              "fields": [{"name": k, "dtype": a.dtype.name, "shape": list(a.shape[1:])} for k, a in cols.items()],
              "meta": m, "provenance": {"program": program, "args": list(args or []), "input": []}}
    msgpack = _msgpack()
    f, close = _open(path, "wb")
    try:
        pack = msgpack.Packer(use_bin_type=True).pack
        f.write(pack(header))
        names = list(cols)
        for i in range(n):
            f.write(pack({k: tensor(cols[k][i]) for k in names}))
        f.write(pack({"end": n}))
        f.flush()
    finally:
        if close:
            f.close()


def to_dataframe(source):
    """A pandas DataFrame of a stream (a path, a file object, or read()'s (header, arrays)): one
    row per item, scalar fields as columns, other fields flattened into name[i] columns (as
    totsv names them), images (uint8 fields of two or more dimensions) left out."""
    import pandas as pd  # optional: only this function needs it

    header, arrays = source if isinstance(source, tuple) else read(source)
    cols = {}
    for name, a in arrays.items():
        if a.dtype == np.uint8 and a.ndim >= 3:
            continue
        if a.ndim == 1:
            cols[name] = a
        else:
            flat = a.reshape(len(a), -1)
            for i in range(flat.shape[1]):
                cols["%s[%d]" % (name, i)] = flat[:, i]
    return pd.DataFrame(cols)
