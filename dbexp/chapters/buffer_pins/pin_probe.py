"""Pins held by one backend, counted where they are taken: bpftrace uprobes on the buffer manager.

A backend tracks its own pins privately (bufmgr.c: the first 8 in ``PrivateRefCountArray``, the rest
in a hash table). Every new pin of a shared buffer passes ``PinBuffer`` or ``PinBuffer_Locked``, every
release ``UnpinBuffer`` (``UnpinBuffer.constprop.N`` on 12 to 15; on 17 and 18 the release that drops
the count is ``UnpinBufferNoOwner``), a second pin of a buffer already held ``PinBuffer`` again or
``IncrBufferRefCount``. The probe keeps, per backend thread and buffer (the descriptor's ``buf_id``, at
offset 20 of ``BufferDesc`` in 12 to 18, behind the 20-byte buffer tag), the backend's own count of
references, and per thread the number of distinct buffers pinned:

- at each new pin (a buffer's count going from 0 to 1), how many distinct buffers the backend then
  holds, this one included (``@held``: exact from 1 to 63, then one bucket);
- at each release that drops a buffer's count to 0, how many content locks (``LockBuffer`` share or
  exclusive, ``ConditionalLockBuffer``, ``LockBufferForCleanup``) the backend took on that buffer
  while it held it (``@locks``: the source's Pin, (Lock, Unlock)+, Unpin);
- at each new pin, whether another buffer the backend holds has the same number modulo 32 (``@slot32``: the
  pins that an array of 32 entries indexed by buffer number, the thread's v2 layout, could not keep in their
  slot, the held buffers per slot kept in ``@slot``);
- every call of ``StartBufferIO``, the function that marks a buffer's I/O in progress (and, from 16 on,
  remembers it in the resource owner: ``ResourceOwnerRememberBufferIO``, inlined from 17), for a read
  (``@io_in``) or a write (``@io_out``): the thread's io-in-progress resource owner, which it says hits never use.

Only the measured backend is counted (its host pid), not the server's other processes. Nothing in
the server is patched; each probe costs a trap into the kernel, so probe runs are not timed runs.
The npm builds keep their full symbol table; Debian's 19~rc1 is stripped (no ``PinBuffer``): pins
are counted on 12 to 18 only.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbexp.metrics import uprobe

BUF_ID_OFFSET = 20  # offsetof(BufferDesc, buf_id) in 12 to 18: after the 20-byte BufferTag
HELD_MAX = 64  # @held is exact below it; the last bucket holds HELD_MAX and more
LOCKS_MAX = 16
UNPIN = ("UnpinBufferNoOwner", "UnpinBuffer", "UnpinBuffer.constprop.12", "UnpinBuffer.constprop.11")
LOCKS = ("LockBuffer", "ConditionalLockBuffer", "LockBufferForCleanup")

SCRIPT = """
uprobe:{path}:PinBuffer, uprobe:{path}:PinBuffer_Locked /pid == {backend}/ {{
  $id = *(int32 *)(arg0 + {offset});
  @ref[tid, $id] = @ref[tid, $id] + 1;
  if (@ref[tid, $id] == 1) {{
    @n[tid] = @n[tid] + 1;
    @held = lhist(@n[tid], 1, {held_max}, 1);
    @pins = count();
    @lk[tid, $id] = 0;
    if (@slot[tid, $id % {slots}] > 0) {{ @slot32 = count(); }}
    @slot[tid, $id % {slots}] = @slot[tid, $id % {slots}] + 1;
  }}
}}
uprobe:{path}:StartBufferIO /pid == {backend}/ {{
  if ((uint8)arg1) {{ @io_in = count(); }} else {{ @io_out = count(); }}
}}
uprobe:{path}:IncrBufferRefCount /pid == {backend} && (int32)arg0 > 0/ {{
  @ref[tid, (int32)arg0 - 1] = @ref[tid, (int32)arg0 - 1] + 1;
}}
uprobe:{path}:LockBuffer /pid == {backend} && (int32)arg0 > 0 && (int32)arg1 != 0/ {{
  @lk[tid, (int32)arg0 - 1] = @lk[tid, (int32)arg0 - 1] + 1; @lockcalls = count();
}}
{other_locks} /pid == {backend} && (int32)arg0 > 0/ {{
  @lk[tid, (int32)arg0 - 1] = @lk[tid, (int32)arg0 - 1] + 1; @lockcalls = count();
}}
uprobe:{path}:{unpin} /pid == {backend}/ {{
  $id = *(int32 *)(arg0 + {offset});
  if (@ref[tid, $id] > 0) {{
    @ref[tid, $id] = @ref[tid, $id] - 1;
    if (@ref[tid, $id] == 0) {{
      @n[tid] = @n[tid] - 1;
      @slot[tid, $id % {slots}] = @slot[tid, $id % {slots}] - 1;
      @locks = lhist(@lk[tid, $id], 0, {locks_max}, 1);
      @released = count();
      delete(@ref[tid, $id]);
      delete(@lk[tid, $id]);
    }}
  }} else {{ @unmatched = count(); }}
}}
BEGIN {{ printf("ready\\n"); }}
END {{ clear(@ref); clear(@lk); clear(@n); clear(@slot); }}
"""
PROBES = 2 + 1 + len(LOCKS) + 1 + 1 + 2  # pin x2, incr, locks, unpin, StartBufferIO, BEGIN, END
SLOTS = 32  # the direct-mapped array's entries (the thread's v2): a new pin's slot is its buf_id modulo this


def unpin_symbol(path: str) -> str:
    """The release function that drops a buffer's private count, as this binary names it."""
    return uprobe.exported(path, UNPIN)


def script(path: str, backend: int) -> str:
    others = ", ".join(f"uprobe:{path}:{s}" for s in LOCKS[1:])  # LockBuffer: its mode 0 is an unlock
    return SCRIPT.format(path=path, backend=backend, offset=BUF_ID_OFFSET, held_max=HELD_MAX,
                         locks_max=LOCKS_MAX, other_locks=others, unpin=unpin_symbol(path), slots=SLOTS)


@dataclass
class PinCounts:
    pins: int  # new pins (a buffer's count from 0 to 1)
    released: int  # releases that dropped a count to 0
    lock_calls: int  # content locks taken (share, exclusive, conditional, cleanup)
    unmatched: int  # releases of a pin taken before the probe attached
    held: dict[int, int]  # distinct buffers held at a new pin -> pins (HELD_MAX: that many or more)
    locks: dict[int, int]  # content locks taken during one pin -> pins (LOCKS_MAX: that many or more)
    slot32: int = 0  # new pins whose buf_id modulo 32 a buffer already held had
    io_in: int = 0  # StartBufferIO calls for a read
    io_out: int = 0  # StartBufferIO calls for a write


def _buckets(hist, low: int, top: int) -> dict[int, int]:
    """bpftrace lhist buckets [(min, max, count)] -> {value: count}; the overflow bucket is ``top``."""
    out: dict[int, int] = {}
    for lo, _hi, count in hist or []:
        if count:
            key = min(max(lo, low), top)
            out[key] = out.get(key, 0) + count
    return out


def counts(lines: list[str]) -> PinCounts:
    m = uprobe.maps(lines)
    return PinCounts(pins=int(m.get("@pins", 0)), released=int(m.get("@released", 0)),
                     lock_calls=int(m.get("@lockcalls", 0)), unmatched=int(m.get("@unmatched", 0)),
                     held=_buckets(m.get("@held"), 1, HELD_MAX), locks=_buckets(m.get("@locks"), 0, LOCKS_MAX),
                     slot32=int(m.get("@slot32", 0)), io_in=int(m.get("@io_in", 0)), io_out=int(m.get("@io_out", 0)))


class PinProbe(uprobe.Bpftrace):
    """``with PinProbe(path, backend_host_pid) as p: ...`` then ``p.result`` (PinCounts)."""

    def __init__(self, path: str, backend: int, pin: str | None = None):
        super().__init__(script(path, backend), PROBES, f"buffer pins of backend {backend} in {path}", pin)
        self.result: PinCounts | None = None

    def finished(self) -> None:
        self.result = counts(self.lines)
