"""Reading a PyTorch profiler trace (Chrome trace JSON, as Kineto writes it) with bounded memory.

A trace is read as a stream: the file (gzip-compressed or not, told by its first two bytes)
is decompressed and decoded in chunks of ``READ_BYTES``, and each entry of ``traceEvents`` is
decoded on its own by the C scanner of ``json`` (``JSONDecoder.raw_decode`` on a sliding buffer),
checked, reduced to the few fields roofcalc reads (:mod:`roofcalc.trace.model`) and dropped. So
memory grows with the kernels and ops kept, not with the file: the JSON text of a 200 MB trace
is never held at once, nor the dicts of its events.

Everything is bounded before it can hurt, as in :mod:`roofcalc.specfile` (whose ``MAX_DEPTH``
and depth check are reused here):

* only regular files are opened (a FIFO or a device is refused without reading: the file is
  opened non-blocking), of at most ``MAX_TRACE_BYTES`` bytes of JSON, after decompression
  (a gzip bomb stops there: ``MAX_TRACE_BYTES`` is 2 GiB);
* one event (or one top-level value) is at most ``MAX_VALUE_CHARS`` characters;
* nesting is at most ``MAX_DEPTH`` levels (counted cheaply on each event's text, exactly only
  where that count is over the limit); deeper input the C scanner meets first is refused too;
* every field read is type-checked: times finite and in range, durations not negative, ids
  integers, shapes lists of non-negative integers; a field of the wrong type, a NaN, an
  infinity (1e400), a missing time is one line naming the file and the event;
* at most ``MAX_KEPT`` ops, launches and kernels are kept.

Anything malformed raises :class:`TraceError` (an InputError: exit 2) with one line,
``FILE: what is wrong``. Chrome's array format (a bare list of events, whose closing ``]`` is
optional) is accepted; a ``{"traceEvents": [...]}`` object that ends early is refused as
truncated, with the number of events read.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import zlib
from typing import IO, Any, NoReturn

from ..errors import InputError
from ..specfile import MAX_DEPTH, _check_json_depth, open_regular
from ..units import clip, fmt_binary
from .model import Comm, CpuOp, Kernel, Launch, ThreadKey, Trace

MAX_TRACE_BYTES = 2 * 1024**3  # bytes of JSON text, after decompression
MAX_VALUE_CHARS = 16 * 1024**2  # characters of one event or one top-level value
MAX_KEPT = 4_000_000  # cpu ops + launches + GPU activities kept (about 300 bytes each: 1.2 GB at most)
MAX_NAME_CHARS = 4096  # characters of a kept name (longer C++ kernel names are cut)
READ_BYTES = 1 << 20  # bytes read (and decompressed) at a time
MAX_TIME_US = 1e17  # |ts| in microseconds (3,000 years)
MAX_DUR_US = 1e12  # a duration of 11.6 days
MAX_ID = 2**63 - 1  # ids, counts and sizes
MAX_DIM = 2**48  # one dimension of a tensor shape
GZIP_MAGIC = b"\x1f\x8b"

_WS = re.compile(r"[ \t\n\r]*")
_COMMA = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")  # between two events
# what each event category becomes: cpu ops, runtime calls (launches), GPU activities, annotations
_CPU, _RUNTIME, _GPU, _ANNOTATION = 1, 2, 3, 4
_CATS = {
    "cpu_op": _CPU,
    "operator": _CPU,  # torch 1.x
    "cuda_runtime": _RUNTIME,
    "cuda_driver": _RUNTIME,
    "runtime": _RUNTIME,
    "kernel": _GPU,
    "gpu_memcpy": _GPU,
    "gpu_memset": _GPU,
    "Kernel": _GPU,
    "Memcpy": _GPU,
    "Memset": _GPU,
    "Runtime": _RUNTIME,
    "user_annotation": _ANNOTATION,
}
_GPU_CAT = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "gpu_memcpy", "Memcpy": "gpu_memcpy"}


class TraceError(InputError):
    """A trace file that cannot be read: malformed, truncated, too large. Exit code 2."""


def _label(path: str) -> str:
    return path if len(path) <= 120 else path[:50] + "..." + path[-50:]


def _jtype(v: Any) -> str:
    """A JSON value's kind, for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, float) and v != v:
        return "NaN"
    if isinstance(v, float) and v - v != 0.0:
        return "infinite"
    if isinstance(v, (int, float)):
        return f"the number {clip(v)}"
    if isinstance(v, str):
        return f"the string {clip(v)!r}"
    if isinstance(v, list):
        return "a list"
    return "an object"


# ------------------------------------------------------------------ bytes


class _Bytes:
    """The file's bytes, inflated when they are gzip, at most MAX_TRACE_BYTES of them."""

    def __init__(self, f: IO[bytes], label: str) -> None:
        self.f = f
        self.label = label
        self.total = 0
        self.pending = f.read(2)
        self.gzip = self.pending == GZIP_MAGIC
        self.z: Any = zlib.decompressobj(16 + zlib.MAX_WBITS) if self.gzip else None
        self.done = False

    def _read_file(self) -> bytes:
        data = self.pending + self.f.read(READ_BYTES)
        self.pending = b""
        return data

    def read(self) -> bytes:
        """The next chunk; b'' at the end."""
        if self.done:
            return b""
        out = self._inflate() if self.gzip else self._read_file()
        if not out:
            self.done = True
        self.total += len(out)
        if self.total > MAX_TRACE_BYTES:
            what = "decompresses to" if self.gzip else "is"
            raise TraceError(
                f"{self.label}: {what} more than {fmt_binary(MAX_TRACE_BYTES)} of JSON, the limit for a trace"
                + (" (a gzip bomb?)" if self.gzip else "; profile fewer steps")
            )
        return out

    def _inflate(self) -> bytes:
        try:
            while True:
                z = self.z
                if z.unconsumed_tail:
                    out: bytes = z.decompress(z.unconsumed_tail, READ_BYTES)
                elif z.eof:  # the end of a gzip member: another member, zero padding, or the end
                    rest = z.unused_data or self._read_file()
                    while rest and not rest.strip(b"\0"):
                        rest = self._read_file()
                    if not rest:
                        return b""
                    if not rest.startswith(GZIP_MAGIC[: len(rest)]):
                        raise TraceError(f"{self.label}: data after the end of the gzip stream")
                    self.z = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    out = self.z.decompress(rest, READ_BYTES)
                else:
                    data = self._read_file()
                    if not data:
                        raise TraceError(
                            f"{self.label}: the gzip stream is truncated (after {self.total:,} bytes of JSON)"
                        )
                    out = z.decompress(data, READ_BYTES)
                if out:
                    return out
        except zlib.error as e:
            raise TraceError(f"{self.label}: corrupt gzip data ({clip(e, 60)})") from None


# ------------------------------------------------------------------ JSON text


class _Parser:
    """A sliding window over the decoded text: whitespace, punctuation and one value at a time."""

    def __init__(self, src: _Bytes, label: str) -> None:
        self.src = src
        self.label = label
        self.utf8 = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.dropped = 0  # characters before buf
        self.lines = 0  # newlines before buf
        self.eof = False
        self.started = False
        self.raw_decode = json.JSONDecoder().raw_decode

    def more(self, at_least: int = 1) -> bool:
        """Append at least ``at_least`` characters (fewer at the end); False when none came."""
        parts: list[str] = []
        n = 0
        while n < at_least and not self.eof:
            data = self.src.read()
            try:
                text = self.utf8.decode(data, final=not data)
            except UnicodeDecodeError as e:
                at = self.src.total - len(data) + e.start
                raise TraceError(
                    f"{self.label}: not UTF-8 text (byte {e.object[e.start]:#04x} at byte {at:,})"
                ) from None
            if not data:
                self.eof = True
            if text:
                parts.append(text)
                n += len(text)
        if not parts:
            return False
        self.lines += self.buf.count("\n", 0, self.pos)
        self.dropped += self.pos
        self.buf = self.buf[self.pos :] + "".join(parts)
        self.pos = 0
        if not self.started:
            self.started = True
            if self.buf.startswith("\ufeff"):  # a byte-order mark
                self.pos = 1
        return True

    def ws(self) -> str:
        """Skip whitespace; the next character, '' at the end of the text."""
        while True:
            m = _WS.match(self.buf, self.pos)
            self.pos = m.end() if m else self.pos
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def line(self, pos: int) -> int:
        return self.lines + self.buf.count("\n", 0, pos) + 1

    def fail(self, what: str, problem: str, pos: int) -> NoReturn:
        raise TraceError(f"{self.label}: not JSON ({problem} at line {self.line(pos):,}, in {what})")

    def value(self, depth: int, what: Any) -> Any:
        """Decode the value at pos (whitespace already skipped). ``depth``: the levels around it;
        ``what``: a string, or a callable giving one, naming the value in messages."""
        while True:
            buf, pos = self.buf, self.pos
            try:
                obj, end = self.raw_decode(buf, pos)
            except json.JSONDecodeError as e:
                unterminated = e.msg.startswith("Unterminated string")
                if self.eof:  # the buffer holds the rest of the file: an error at its end is the end
                    if unterminated or e.pos >= len(buf.rstrip()):
                        raise TraceError(f"{self.label}: the file ends inside {_name(what)} (truncated?)") from None
                    self.fail(_name(what), e.msg, e.pos)
                if not unterminated and e.pos < len(buf) - 16:  # not where the next chunk would go on
                    self.fail(_name(what), e.msg, e.pos)
                self._grow(what)
                continue
            except RecursionError:
                raise TraceError(f"{self.label}: {_name(what)}: nested deeper than {MAX_DEPTH} levels") from None
            except ValueError:  # an integer past Python's 4,300 digits
                raise TraceError(f"{self.label}: {_name(what)}: a number with too many digits") from None
            if end == len(buf) and not self.eof:  # a number may go on in the next chunk
                self._grow(what)
                continue
            if buf.count("[", pos, end) + buf.count("{", pos, end) + depth > MAX_DEPTH:
                try:  # exact: brackets inside strings do not count
                    _check_json_depth("[" * depth + buf[pos:end], self.label)
                except InputError:
                    raise TraceError(f"{self.label}: {_name(what)}: nested deeper than {MAX_DEPTH} levels") from None
            self.pos = end
            return obj

    def _grow(self, what: Any) -> None:
        if len(self.buf) - self.pos > MAX_VALUE_CHARS:
            raise TraceError(
                f"{self.label}: {_name(what)} is over {MAX_VALUE_CHARS:,} characters, the limit for one value"
            )
        self.more(max(READ_BYTES, len(self.buf) - self.pos))


def _name(what: Any) -> str:
    return str(what() if callable(what) else what)


# ------------------------------------------------------------------ events


class _Collector:
    """Checks each event and keeps what the analysis reads."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.label = trace.label
        self.strings: dict[str, str] = {}
        self.lists: dict[tuple[str, ...], list[str]] = {}
        self.shape_lists: dict[str, Any] = {}
        self.kept = 0
        self.n = 0

    # -- messages
    def bad(self, problem: str) -> TraceError:
        return TraceError(f"{self.label}: event {self.n:,}: {problem}")

    def wrong(self, key: str, v: Any, want: str) -> TraceError:
        if v is None:
            return self.bad(f"{key!r} is missing")
        return self.bad(f"{key!r} is {_jtype(v)}, not {want}")

    # -- fields
    def time(self, v: Any, key: str) -> float:
        t = type(v)
        if ((t is float and v - v == 0.0) or t is int) and -MAX_TIME_US <= v <= MAX_TIME_US:  # v - v: nan for inf
            return float(v)
        raise self.wrong(key, v, "a finite time in microseconds")

    def duration(self, v: Any) -> float:
        t = type(v)
        if (t is float and v - v == 0.0) or t is int:
            if 0 <= v <= MAX_DUR_US:
                return float(v)
            raise self.bad(f"'dur' is {clip(v)}: a duration must be between 0 and {MAX_DUR_US:g} us")
        raise self.wrong("dur", v, "a finite duration in microseconds")

    def integer(self, v: Any, key: str, hi: int = MAX_ID) -> int | None:
        if v is None:
            return None
        if type(v) is int and 0 <= v <= hi:
            return v
        if type(v) is int:
            raise self.bad(f"{key!r} is {clip(v)}, out of range (0..{hi})")
        raise self.wrong(key, v, "an integer")

    def ident(self, v: Any, key: str) -> int | str:
        """pid and tid: integers, or strings (some exporters name their threads)."""
        t = type(v)
        if t is int:
            if -MAX_ID <= v <= MAX_ID:
                return int(v)
        elif t is str:
            return self.intern(v)
        elif t is float and v.is_integer() and abs(v) <= MAX_ID:
            return int(v)
        raise self.wrong(key, v, "an integer or a string")

    def intern(self, s: str) -> str:
        got = self.strings.get(s)
        if got is None:
            got = s if len(s) <= MAX_NAME_CHARS else s[:MAX_NAME_CHARS] + "..."
            self.strings[s] = got
        return got

    def name(self, ev: dict[str, Any]) -> str:
        v = ev.get("name")
        if type(v) is not str:
            raise self.wrong("name", v, "a string")
        got = self.strings.get(v)
        return got if got is not None else self.intern(v)

    def strings_list(self, v: Any, key: str) -> list[str] | None:
        if v is None:
            return None
        if type(v) is not list:
            raise self.wrong(key, v, "a list of strings")
        for i, s in enumerate(v):
            if s is None:  # null for an input with no type or value, as ""
                v[i] = ""
            elif type(s) is not str:
                raise self.bad(f"{key!r} holds {_jtype(s)}, not a string")
        key_t = tuple(v)
        got = self.lists.get(key_t)
        if got is None:
            got = [self.intern(s) for s in v]
            self.lists[key_t] = got
        return got

    def dims(self, v: Any, key: str = "Input Dims") -> Any:
        """Input Dims (or Input Strides): per input a list of integers, or of lists of them (a TensorList)."""
        if type(v) is not list:
            raise self.wrong(key, v, "a list of shapes")
        for i, shape in enumerate(v):
            if shape is None:  # an input with no shape, written as null instead of []
                v[i] = []
                continue
            if type(shape) is not list:
                raise self.bad(f"{key!r} holds {_jtype(shape)}, not a list of integers")
            for x in shape:
                if type(x) is int:
                    if not 0 <= x <= MAX_DIM:
                        raise self.bad(f"{key!r} holds {clip(x)}, out of range (0..2**48)")
                elif type(x) is list:  # a TensorList: one shape per tensor
                    for y in x:
                        if type(y) is not int or not 0 <= y <= MAX_DIM:
                            raise self.bad(f"{key!r} holds {_jtype(y)} in a list of shapes, not an integer")
                else:
                    raise self.bad(f"{key!r} holds {_jtype(x)} in a shape, not an integer")
        return v

    def shapes(self, v: Any, key: str) -> Any:
        """Checked and shared: a layer's shapes repeat in every layer, one list is kept for them."""
        text = str(v) if type(v) is list else None
        got = self.shape_lists.get(text) if text is not None else None
        if got is None:
            got = self.dims(v, key)
            if text is not None:
                self.shape_lists[text] = got
        return got

    def triple(self, v: Any, key: str) -> tuple[int, int, int] | None:
        if v is None:
            return None
        if type(v) is list and len(v) == 3:
            a, b, c = v
            if (
                type(a) is int
                and type(b) is int
                and type(c) is int
                and 0 <= a <= 2**32
                and 0 <= b <= 2**32
                and 0 <= c <= 2**32
            ):
                return (a, b, c)
        raise self.wrong(key, v, "a list of 3 integers from 0 to 2**32")

    def comm(self, args: dict[str, Any]) -> Comm:
        coll = args.get("Collective name")
        if type(coll) is not str:
            raise self.wrong("Collective name", coll, "a string")
        dtype = args.get("dtype")
        if dtype is not None and type(dtype) is not str:
            raise self.wrong("dtype", dtype, "a string")
        return Comm(
            collective=self.intern(coll),
            in_nelems=self.integer(args.get("In msg nelems"), "In msg nelems"),
            out_nelems=self.integer(args.get("Out msg nelems"), "Out msg nelems"),
            dtype=None if dtype is None else self.intern(dtype),
            group_size=self.integer(args.get("Group size"), "Group size", 2**31),
        )

    def keep(self) -> None:
        self.kept += 1
        if self.kept > MAX_KEPT:
            raise TraceError(
                f"{self.label}: over {MAX_KEPT:,} ops, launches and kernels, the limit for one trace; "
                "profile fewer steps (torch.profiler.schedule)"
            )

    # -- events
    def add(self, ev: Any) -> None:
        if type(ev) is not dict:
            raise self.bad(f"is {_jtype(ev)}, not an object")
        ph = ev.get("ph")
        if ph != "X":
            if type(ph) is not str:
                raise self.wrong("ph", ph, "a string")
            return  # instants, counters, flows (ac2g), metadata: not read
        ts = self.time(ev.get("ts"), "ts")
        dur = self.duration(ev.get("dur"))
        tr = self.trace
        end = ts + dur
        if tr.first_us is None or ts < tr.first_us:
            tr.first_us = ts
        if tr.last_us is None or end > tr.last_us:
            tr.last_us = end
        cat = ev.get("cat")
        kind = _CATS.get(cat) if type(cat) is str else None
        if kind is None:
            if cat is not None and type(cat) is not str:
                raise self.wrong("cat", cat, "a string")
            return
        args = ev.get("args")
        if args is None:
            args = {}
        elif type(args) is not dict:
            raise self.wrong("args", args, "an object")
        if kind == _GPU:
            self.gpu(ev, args, str(cat), ts, dur)
        elif kind == _CPU:
            self.cpu(ev, args, ts, end)
        elif kind == _RUNTIME:
            self.runtime(ev, args, ts)
        elif self.name(ev).startswith("ProfilerStep#"):
            tr.steps += 1

    def thread(self, ev: dict[str, Any]) -> ThreadKey:
        return (self.ident(ev.get("pid"), "pid"), self.ident(ev.get("tid"), "tid"))

    def cpu(self, ev: dict[str, Any], args: dict[str, Any], ts: float, end: float) -> None:
        name = self.name(ev)
        thread = self.thread(ev)
        dims = args.get("Input Dims")
        if dims is None:
            dims = args.get("Input dims")
        strides = args.get("Input Strides")
        op = CpuOp(
            ts,
            end,
            name,
            self.integer(args.get("External id"), "External id"),
            None if dims is None else self.shapes(dims, "Input Dims"),
            self.strings_list(args.get("Input type"), "Input type"),
            self.strings_list(args.get("Concrete Inputs"), "Concrete Inputs"),
            self.comm(args) if "Collective name" in args else None,
            None if strides is None else self.shapes(strides, "Input Strides"),
        )
        ops = self.trace.cpu_ops.get(thread)
        if ops is None:
            self.trace.cpu_ops[thread] = [op]
        else:
            ops.append(op)
        self.keep()

    def runtime(self, ev: dict[str, Any], args: dict[str, Any], ts: float) -> None:
        corr = self.integer(args.get("correlation"), "correlation")
        name = self.name(ev)
        thread = self.thread(ev)
        if corr is None:
            return
        launches = self.trace.launches
        if corr in launches:
            self.trace.duplicate_correlations += 1
            return
        launches[corr] = Launch(thread, ts, name, self.integer(args.get("External id"), "External id"))
        self.keep()

    def gpu(self, ev: dict[str, Any], args: dict[str, Any], cat: str, ts: float, dur: float) -> None:
        name = self.name(ev)
        device = self.integer(args.get("device"), "device", 2**31)
        stream = self.integer(args.get("stream"), "stream")
        if device is None or stream is None:
            pid, tid = ev.get("pid"), ev.get("tid")
            if device is None and type(pid) is int and 0 <= pid <= 2**31:
                device = pid
            if stream is None and type(tid) is int and 0 <= tid <= MAX_ID:
                stream = tid
        self.trace.kernels.append(
            Kernel(
                ts,
                dur,
                name,
                _GPU_CAT.get(cat, "gpu_memset"),
                device,
                stream,
                self.integer(args.get("correlation"), "correlation"),
                self.integer(args.get("External id"), "External id"),
                self.triple(args.get("grid"), "grid"),
                self.triple(args.get("block"), "block"),
                self.integer(args.get("registers per thread"), "registers per thread", 65536),
                self.integer(args.get("shared memory"), "shared memory", 2**31),
                self.comm(args) if "Collective name" in args else None,
            )
        )
        self.keep()

    def top_level(self, key: str, v: Any) -> None:
        if key == "deviceProperties":
            if type(v) is not list:
                raise TraceError(f"{self.label}: 'deviceProperties' is {_jtype(v)}, not a list")
            for d in v:
                if type(d) is not dict:
                    raise TraceError(f"{self.label}: 'deviceProperties' holds {_jtype(d)}, not an object")
                name = d.get("name")
                if name is not None:
                    if type(name) is not str:
                        raise TraceError(f"{self.label}: deviceProperties: 'name' is {_jtype(name)}, not a string")
                    self.trace.device_names.append(clip(name, 200))


# ------------------------------------------------------------------ the document


def _events(p: _Parser, c: _Collector, depth: int, bare: bool) -> None:
    """The entries of traceEvents (p.pos is just after its '[')."""

    def what() -> str:
        return f"event {c.n:,}"

    ch = p.ws()
    if ch == "]":
        p.pos += 1
        return
    value, add, ws, comma = p.value, c.add, p.ws, _COMMA.match
    while True:
        if ch == "":
            if bare:  # the array format may end without its ']'
                return
            raise TraceError(f"{p.label}: the file ends inside traceEvents after {c.n:,} events (truncated?)")
        add(value(depth, what))
        c.n += 1
        m = comma(p.buf, p.pos)
        if m is not None and m.end() < len(p.buf) and p.buf[m.end()] != "]":  # the usual ",\n  {"
            p.pos = m.end()
            ch = "{"
            continue
        ch = ws()
        if ch == ",":
            p.pos += 1
            ch = ws()
            if ch == "]":
                p.fail("traceEvents", "a comma before ']'", p.pos)
            if ch == "" and bare:  # a writer's trailing comma, in the array format
                return
        elif ch == "]":
            p.pos += 1
            return
        elif ch != "":
            p.fail("traceEvents", f"expecting ',' or ']' after event {c.n - 1:,}", p.pos)


def _document(p: _Parser, c: _Collector) -> None:
    ch = p.ws()
    if ch == "":
        raise TraceError(f"{p.label}: empty file" if p.src.total == 0 else f"{p.label}: no JSON (only whitespace)")
    if ch == "[":
        c.trace.layout = "array"
        p.pos += 1
        _events(p, c, 1, bare=True)
    elif ch == "{":
        p.pos += 1
        seen: set[str] = set()
        ch = p.ws()
        if ch == "}":
            p.pos += 1
        while ch != "}":
            if ch != '"':
                if ch == "":
                    raise TraceError(f"{p.label}: the file ends inside the top-level object (truncated?)")
                p.fail("the top-level object", "expecting a key", p.pos)
            key = p.value(1, "a top-level key")
            if key in seen:
                raise TraceError(f"{p.label}: the top-level key {clip(key, 40)!r} appears twice")
            seen.add(key)
            if p.ws() != ":":
                p.fail(f"the top-level key {clip(key, 40)!r}", "expecting ':'", p.pos)
            p.pos += 1
            ch = p.ws()
            if key == "traceEvents":
                if ch != "[":
                    v = p.value(1, "traceEvents")
                    raise TraceError(f"{p.label}: 'traceEvents' is {_jtype(v)}, not a list")
                p.pos += 1
                _events(p, c, 2, bare=False)
            else:
                c.top_level(key, p.value(1, lambda k=key: f"the top-level value {clip(k, 40)!r}"))
            ch = p.ws()
            if ch == ",":
                p.pos += 1
                ch = p.ws()
                if ch == "}":
                    p.fail("the top-level object", "a comma before '}'", p.pos)
            elif ch == "}":
                p.pos += 1
            elif ch == "":
                raise TraceError(f"{p.label}: the file ends inside the top-level object (truncated?)")
            else:
                p.fail("the top-level object", "expecting ',' or '}'", p.pos)
        if "traceEvents" not in seen:
            raise TraceError(f"{p.label}: a JSON object with no 'traceEvents' list: not a Chrome trace")
    else:
        shown = p.buf[p.pos : p.pos + 12]
        raise TraceError(f"{p.label}: not a Chrome trace (a JSON object or list); it starts with {clip(shown, 12)!r}")
    if p.ws() != "":
        p.fail("the end of the file", "extra data after the trace", p.pos)


def _open(path: str, label: str) -> IO[bytes]:
    f, st = open_regular(path, label, TraceError)
    if st.st_size == 0 or st.st_size > MAX_TRACE_BYTES:
        f.close()
        if st.st_size == 0:
            raise TraceError(f"{label}: empty file")
        raise TraceError(
            f"{label}: file is {st.st_size:,} bytes, over the {fmt_binary(MAX_TRACE_BYTES)} limit for a trace"
        )
    return f


def read_trace(path: str | os.PathLike[str]) -> Trace:
    """Read a PyTorch profiler trace (``.json`` or gzip-compressed ``.json.gz``, told by content).

    Raises :class:`TraceError` (exit 2, one line) for anything that is not a readable trace.
    """
    full = os.fspath(path)
    label = _label(full)
    with _open(full, label) as f:
        src = _Bytes(f, label)
        trace = Trace(label=label, layout="object", compressed=src.gzip, text_chars=0)
        parser = _Parser(src, label)
        collector = _Collector(trace)
        try:
            _document(parser, collector)
        except OSError as e:
            raise TraceError(f"{label}: cannot read: {e.strerror or e}") from None
        except MemoryError:
            raise TraceError(f"{label}: out of memory reading the trace; profile fewer steps") from None
        trace.text_chars = parser.dropped + len(parser.buf)
        trace.events = collector.n
    return trace


__all__ = ["MAX_DEPTH", "MAX_KEPT", "MAX_TRACE_BYTES", "MAX_VALUE_CHARS", "TraceError", "read_trace"]
