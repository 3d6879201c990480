-- pinbench 1.0: each function returns nanoseconds per operation, timed inside the backend.
\echo Use "CREATE EXTENSION pinbench" to load this file. \quit

-- pinbench_hold(rel, held, loop_blocks, ops, pattern, lock, cold_kb, seed):
--   pin blocks 0 .. held-1 of rel and keep them pinned; then time ops rounds of ReadBuffer (+ LockBuffer
--   share and unlock when lock) + ReleaseBuffer over blocks held .. held+loop_blocks-1, visited in order
--   (pattern 'sequential') or in a shuffled order (pattern 'random'); with cold_kb > 0, walk that many
--   KiB of private memory before each operation, time each operation alone and subtract the clock's own cost.
CREATE FUNCTION pinbench_hold(rel regclass, held int4, loop_blocks int4, ops int4, pattern text,
                              lock bool DEFAULT false, cold_kb int4 DEFAULT 0, seed int4 DEFAULT 1)
RETURNS float8 AS 'MODULE_PATHNAME', 'pinbench_hold' LANGUAGE C STRICT VOLATILE;

-- pinbench_cycle(rel, n, rounds, pattern, seed): each round pins n distinct blocks (ReadBuffer) and releases
--   them first pinned, first released; the blocks are the table's in order ('sequential': neighbouring
--   buffers) or shuffled ('random'), the next n each round; the time per ReadBuffer + ReleaseBuffer pair.
CREATE FUNCTION pinbench_cycle(rel regclass, n int4, rounds int4, pattern text, seed int4 DEFAULT 1)
RETURNS float8 AS 'MODULE_PATHNAME', 'pinbench_cycle' LANGUAGE C STRICT VOLATILE;

-- pinbench_prewarm(rel): read every block of rel once into shared buffers; returns the blocks read.
CREATE FUNCTION pinbench_prewarm(rel regclass)
RETURNS int8 AS 'MODULE_PATHNAME', 'pinbench_prewarm' LANGUAGE C STRICT VOLATILE;
