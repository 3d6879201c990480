-- pinbench 1.0: each timing function returns nanoseconds per operation, timed inside the backend, and what
-- its timed loop touched (the witness stored with every run):
--   held_buffers             distinct buffers among the pins held through the timed loop
--   touched_blocks           distinct blocks the timed loop pinned
--   touched_buffers          the distinct buffers those blocks were in (read just before the loop)
--   repeats                  timed pins of the buffer the operation before had pinned
--   moved                    touched blocks in another buffer after the loop than before it (0: none evicted)
--   held_slots32             distinct buffer numbers mod 32 among the held buffers (an array of 32 entries
--                            indexed by buffer number holds that many of them)
--   touched_in_held_slots32  touched buffers whose number mod 32 a held buffer has
\echo Use "CREATE EXTENSION pinbench" to load this file. \quit

-- pinbench_fifo(rel, held, ops, pattern, seed): the thread's benchmark as its author describes it (pgsql-hackers,
--   March 2026: "a FIFO with one buffer"): pin held blocks of rel and keep them pinned, then time ops rounds of
--   ReadBuffer + ReleaseBuffer of one more block, the same one every time. The held blocks and that one are the
--   table's first held + 1 blocks (pattern 'sequential') or the first held + 1 of all its blocks shuffled
--   (pattern 'random').
CREATE FUNCTION pinbench_fifo(rel regclass, held int4, ops int4, pattern text, seed int4 DEFAULT 1,
                              OUT ns float8, OUT held_buffers int4, OUT touched_blocks int4,
                              OUT touched_buffers int4, OUT repeats int8, OUT moved int4, OUT held_slots32 int4,
                              OUT touched_in_held_slots32 int4)
RETURNS record AS 'MODULE_PATHNAME', 'pinbench_fifo' LANGUAGE C STRICT VOLATILE;

-- pinbench_hold(rel, held, loop_blocks, ops, pattern, lock, cold_kb, seed):
--   pin blocks 0 .. held-1 of rel and keep them pinned; then time ops rounds of ReadBuffer (+ LockBuffer
--   share and unlock when lock) + ReleaseBuffer over blocks held .. held+loop_blocks-1, visited in order
--   (pattern 'sequential') or in a shuffled order (pattern 'random'); with cold_kb > 0, walk that many
--   KiB of private memory before each operation, time each operation alone and return the median operation less
--   the median cost of a pair of clock reads, timed after a walk of its own before each operation (an operation
--   the backend was switched out in moves neither); an error, not a time, when the operations' median is not above
--   the clock's.
CREATE FUNCTION pinbench_hold(rel regclass, held int4, loop_blocks int4, ops int4, pattern text,
                              lock bool DEFAULT false, cold_kb int4 DEFAULT 0, seed int4 DEFAULT 1,
                              OUT ns float8, OUT held_buffers int4, OUT touched_blocks int4,
                              OUT touched_buffers int4, OUT repeats int8, OUT moved int4, OUT held_slots32 int4,
                              OUT touched_in_held_slots32 int4)
RETURNS record AS 'MODULE_PATHNAME', 'pinbench_hold' LANGUAGE C STRICT VOLATILE;

-- pinbench_cycle(rel, n, rounds, pattern, seed): each round pins n distinct blocks (ReadBuffer) and releases
--   them first pinned, first released; the blocks are the table's in order ('sequential': neighbouring
--   buffers) or shuffled ('random'), the next n each round; the time per ReadBuffer + ReleaseBuffer pair.
CREATE FUNCTION pinbench_cycle(rel regclass, n int4, rounds int4, pattern text, seed int4 DEFAULT 1,
                               OUT ns float8, OUT held_buffers int4, OUT touched_blocks int4,
                               OUT touched_buffers int4, OUT repeats int8, OUT moved int4, OUT held_slots32 int4,
                               OUT touched_in_held_slots32 int4)
RETURNS record AS 'MODULE_PATHNAME', 'pinbench_cycle' LANGUAGE C STRICT VOLATILE;

-- pinbench_prewarm(rel): read every block of rel once into shared buffers; returns the blocks read.
CREATE FUNCTION pinbench_prewarm(rel regclass)
RETURNS int8 AS 'MODULE_PATHNAME', 'pinbench_prewarm' LANGUAGE C STRICT VOLATILE;

-- pinbench_hash(rel, held, ops, pattern, hash, stride, seed): the overflow table of pins without the buffer manager:
--   a backend-private simplehash keyed by buffer number, hashed by the number itself (hash 'identity', the
--   thread's v1) or by murmurhash32 of it ('murmur', its v2 and 19's); held keys put in, then ops rounds of one
--   more key pinned and released as the buffer manager does (a lookup that misses, an insert, a lookup, a delete),
--   timed. The keys: the buffers of pinbench_fifo's blocks (pattern 'sequential' or 'random', the same blocks as
--   pinbench_fifo with the same seed), or numbers stride apart (pattern 'stride': keys that differ only above
--   their low bits). Returns the time per round, the keys (held + 1), the table's buckets, how often it grew
--   while the held keys went in, the farthest and the mean distance of the held entries from their hash's
--   bucket, and the FIFO key's.
CREATE FUNCTION pinbench_hash(rel regclass, held int4, ops int4, pattern text, hash text, stride int4 DEFAULT 1024,
                              seed int4 DEFAULT 1, OUT ns float8, OUT keys int4, OUT size int8, OUT grows int4,
                              OUT max_dib int4, OUT mean_dib float8, OUT fifo_dib int4)
RETURNS record AS 'MODULE_PATHNAME', 'pinbench_hash' LANGUAGE C STRICT VOLATILE;

-- pinbench_flush(rel, first, n): n pages of rel from block first (modulo its blocks) written by this backend:
--   each pinned, locked exclusively, marked dirty unchanged, written (FlushOneBuffer), unlocked and released.
--   Returns n.
CREATE FUNCTION pinbench_flush(rel regclass, first int8, n int4)
RETURNS int8 AS 'MODULE_PATHNAME', 'pinbench_flush' LANGUAGE C STRICT VOLATILE;
