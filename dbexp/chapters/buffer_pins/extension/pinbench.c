/*
 * pinbench: what pinning buffers costs a PostgreSQL backend, timed inside the backend.
 *
 * Part of "Database Internals, Measured" (the buffer_pins chapter). A backend tracks its own pins in a
 * small array (REFCOUNT_ARRAY_ENTRIES, 8) that overflows into a hash table (bufmgr.c). Three loops time
 * ReadBuffer/ReleaseBuffer:
 *   pinbench_fifo   the thread's benchmark as its author describes it: N pins held, then a FIFO of one
 *                   buffer, the same buffer pinned and released again and again;
 *   pinbench_hold   N pins held while 64 other blocks are read and released in turn (ours);
 *   pinbench_cycle  rounds that pin N distinct buffers and release them first in, first out, walking the
 *                   whole table (ours: the first reading of the thread's benchmark).
 * Each returns, beside the time per operation, what its timed loop touched (the witness the chapter stores
 * with every run): the distinct buffers held through the loop, the distinct blocks and buffers the loop
 * pinned, how many operations pinned the previous operation's buffer again, the blocks whose buffer changed
 * during the loop, and where the held buffers fall in an array of 32 entries indexed by buffer number.
 * Only the server's public buffer-manager API is used, so one source builds against the headers of
 * PostgreSQL 12 to 19.
 */
#include "postgres.h"

#include <time.h>

#include "access/htup_details.h"
#include "access/relation.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(pinbench_fifo);
PG_FUNCTION_INFO_V1(pinbench_hold);
PG_FUNCTION_INFO_V1(pinbench_cycle);
PG_FUNCTION_INFO_V1(pinbench_prewarm);

#define WITNESS_COLUMNS 8
#define DIRECT_SLOTS 32			/* an array indexed by buffer number mod 32: the thread's v2 layout */

/* what a timed loop touched, returned with its time */
typedef struct Witness
{
	int32		held_buffers;	/* distinct buffers among the pins held through the timed loop */
	int32		touched_blocks; /* distinct blocks the timed loop pinned */
	int32		touched_buffers;	/* the distinct buffers those blocks were in, read before the loop */
	int64		repeats;		/* timed pins of the buffer the operation before had pinned */
	int32		moved;			/* touched blocks in another buffer after the loop than before it */
	int32		held_slots32;	/* distinct buffer numbers mod 32 among the held buffers */
	int32		touched_in_held_slots32;	/* touched buffers whose number mod 32 a held buffer has */
} Witness;

static uint64 rng_state;

static uint64
next_random(void)
{
	/* xorshift64*: a fixed seed gives every version the same order */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64CONST(2685821657736338717);
}

static void
shuffle(BlockNumber *blocks, int n, int seed)
{
	rng_state = (uint64) seed * UINT64CONST(0x9E3779B97F4A7C15) + 1;
	for (int i = n - 1; i > 0; i--)
	{
		int			j = (int) (next_random() % (uint64) (i + 1));
		BlockNumber t = blocks[i];

		blocks[i] = blocks[j];
		blocks[j] = t;
	}
}

static int
order_of(text *pattern)
{
	char	   *p = text_to_cstring(pattern);

	if (strcmp(p, "sequential") == 0)
		return 0;
	if (strcmp(p, "random") == 0)
		return 1;
	ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					errmsg("pattern \"%s\" is not valid; valid are 'sequential' and 'random'", p)));
	return -1;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static Relation
open_checked(Oid relid, int64 need)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);

	if ((int64) nblocks < need)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("relation \"%s\" has %u blocks; this call needs %lld",
							   RelationGetRelationName(rel), nblocks, (long long) need)));
	return rel;
}

static int
buffer_cmp(const void *a, const void *b)
{
	Buffer		x = *(const Buffer *) a;
	Buffer		y = *(const Buffer *) b;

	return (x > y) - (x < y);
}

/* how many distinct values among n buffer numbers (sorts a copy) */
static int32
distinct_buffers(const Buffer *ids, int n)
{
	Buffer	   *copy;
	int32		out = 0;

	if (n <= 0)
		return 0;
	copy = palloc(sizeof(Buffer) * n);
	memcpy(copy, ids, sizeof(Buffer) * n);
	qsort(copy, n, sizeof(Buffer), buffer_cmp);
	for (int i = 0; i < n; i++)
		if (i == 0 || copy[i] != copy[i - 1])
			out++;
	pfree(copy);
	return out;
}

/* the buffer each block is in now (pinned and released again, untimed) */
static void
buffers_of(Relation rel, const BlockNumber *blocks, int n, Buffer *out)
{
	for (int i = 0; i < n; i++)
	{
		Buffer		b = ReadBuffer(rel, blocks[i]);

		out[i] = b;
		ReleaseBuffer(b);
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The witness of a loop: ``held`` the buffers held through it, ``blocks`` the distinct blocks it pinned,
 * ``before`` their buffers read just before it; their buffers are read again now, after it.
 */
static void
witness_of(Witness *w, Relation rel, const Buffer *held, int nheld, const BlockNumber *blocks,
		   const Buffer *before, int nblocks, int64 repeats)
{
	Buffer	   *after = palloc(sizeof(Buffer) * Max(nblocks, 1));
	uint32		slots = 0;

	buffers_of(rel, blocks, nblocks, after);
	w->held_buffers = distinct_buffers(held, nheld);
	w->touched_blocks = nblocks;
	w->touched_buffers = distinct_buffers(before, nblocks);
	w->repeats = repeats;
	w->moved = 0;
	for (int i = 0; i < nblocks; i++)
		if (after[i] != before[i])
			w->moved++;
	for (int i = 0; i < nheld; i++)
		slots |= (uint32) 1 << ((uint32) held[i] % DIRECT_SLOTS);
	w->held_slots32 = 0;
	for (int s = 0; s < DIRECT_SLOTS; s++)
		if (slots & ((uint32) 1 << s))
			w->held_slots32++;
	w->touched_in_held_slots32 = 0;
	for (int i = 0; i < nblocks; i++)
		if (slots & ((uint32) 1 << ((uint32) before[i] % DIRECT_SLOTS)))
			w->touched_in_held_slots32++;
	pfree(after);
}

static Datum
result_of(FunctionCallInfo fcinfo, double ns, const Witness *w)
{
	TupleDesc	desc;
	Datum		values[WITNESS_COLUMNS];
	bool		nulls[WITNESS_COLUMNS] = {0};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						errmsg("pinbench: the function must be declared to return a record")));
	desc = BlessTupleDesc(desc);
	if (desc->natts != WITNESS_COLUMNS)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
						errmsg("pinbench: the function returns %d columns, not %d: the SQL and the module differ",
							   desc->natts, WITNESS_COLUMNS)));
	values[0] = Float8GetDatum(ns);
	values[1] = Int32GetDatum(w->held_buffers);
	values[2] = Int32GetDatum(w->touched_blocks);
	values[3] = Int32GetDatum(w->touched_buffers);
	values[4] = Int64GetDatum(w->repeats);
	values[5] = Int32GetDatum(w->moved);
	values[6] = Int32GetDatum(w->held_slots32);
	values[7] = Int32GetDatum(w->touched_in_held_slots32);
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}

/* a walk over cold_kb KiB of private memory, one cache line at a time; returns a sum so it is not elided */
static uint64
walk(volatile char *mem, int bytes, int *pos)
{
	uint64		sum = 0;

	for (int i = 0; i < bytes; i += 64)
	{
		sum += mem[*pos];
		*pos += 4096 + 64;		/* a new page and line each step: defeats the prefetcher */
		if (*pos >= bytes)
			*pos -= bytes;
	}
	return sum;
}

Datum
pinbench_fifo(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int32		held = PG_GETARG_INT32(1);
	int32		ops = PG_GETARG_INT32(2);
	int			random_order = order_of(PG_GETARG_TEXT_PP(3));
	int32		seed = PG_GETARG_INT32(4);
	Relation	rel;
	BlockNumber nblocks;
	BlockNumber *blocks;
	BlockNumber fifo_block;
	Buffer	   *pinned;
	Buffer		before;
	Buffer		prev = InvalidBuffer;
	int64		repeats = 0;
	Witness		w;
	double		t0,
				t1;

	if (held < 0 || ops < 1)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("held %d, ops %d: need held >= 0 and ops >= 1", held, ops)));
	rel = open_checked(relid, (int64) held + 1);
	nblocks = RelationGetNumberOfBlocks(rel);

	/*
	 * the held blocks and the FIFO's one: the table's first held + 1 blocks in order ('sequential':
	 * neighbouring buffers in a prewarmed pool), or the first held + 1 of all its blocks shuffled ('random':
	 * buffers spread over the pool); the held ones are pinned in that order
	 */
	blocks = palloc(sizeof(BlockNumber) * nblocks);
	for (BlockNumber i = 0; i < nblocks; i++)
		blocks[i] = i;
	if (random_order)
		shuffle(blocks, (int) nblocks, seed);
	fifo_block = blocks[held];
	pinned = palloc(sizeof(Buffer) * Max(held, 1));
	for (int i = 0; i < held; i++)
	{
		pinned[i] = ReadBuffer(rel, blocks[i]);
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	buffers_of(rel, &fifo_block, 1, &before);	/* untimed: its buffer, and its mapping entry touched */

	t0 = now_ns();
	for (int i = 0; i < ops; i++)
	{
		Buffer		b = ReadBuffer(rel, fifo_block);

		repeats += (b == prev);
		prev = b;
		ReleaseBuffer(b);
		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	t1 = now_ns();

	witness_of(&w, rel, pinned, held, &fifo_block, &before, 1, repeats);
	for (int i = 0; i < held; i++)
		ReleaseBuffer(pinned[i]);
	relation_close(rel, AccessShareLock);
	return result_of(fcinfo, (t1 - t0) / ops, &w);
}

Datum
pinbench_hold(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int32		held = PG_GETARG_INT32(1);
	int32		loop_blocks = PG_GETARG_INT32(2);
	int32		ops = PG_GETARG_INT32(3);
	int			random_order = order_of(PG_GETARG_TEXT_PP(4));
	bool		lock = PG_GETARG_BOOL(5);
	int32		cold_kb = PG_GETARG_INT32(6);
	int32		seed = PG_GETARG_INT32(7);
	Relation	rel;
	Buffer	   *pinned;
	BlockNumber *loop;
	Buffer	   *before;
	Buffer		prev = InvalidBuffer;
	int64		repeats = 0;
	int			touched;
	char	   *mem = NULL;
	int			bytes;
	int			pos = 0;
	uint64		sink = 0;
	Witness		w;
	double		t0,
				t1,
				clock_ns = 0.0;

	if (held < 0 || loop_blocks < 1 || ops < 1 || cold_kb < 0 || cold_kb > 1024 * 1024)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("held %d, loop_blocks %d, ops %d, cold_kb %d: need held >= 0, loop_blocks >= 1, "
							   "ops >= 1, cold_kb 0 to 1048576", held, loop_blocks, ops, cold_kb)));
	bytes = cold_kb * 1024;
	rel = open_checked(relid, (int64) held + loop_blocks);
	pinned = palloc(sizeof(Buffer) * Max(held, 1));
	loop = palloc(sizeof(BlockNumber) * loop_blocks);
	before = palloc(sizeof(Buffer) * loop_blocks);
	for (int i = 0; i < loop_blocks; i++)
		loop[i] = (BlockNumber) (held + i);
	if (random_order)
		shuffle(loop, loop_blocks, seed);
	if (bytes > 0)
	{
		mem = palloc(bytes);
		memset(mem, 1, bytes);
	}

	for (int i = 0; i < held; i++)
	{
		pinned[i] = ReadBuffer(rel, (BlockNumber) i);
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	/* one untimed pass: every loop block in shared buffers, its mapping entry touched, its buffer noted */
	buffers_of(rel, loop, loop_blocks, before);

	if (bytes == 0)
	{
		/* warm: the whole loop timed at once */
		t0 = now_ns();
		for (int i = 0; i < ops; i++)
		{
			Buffer		b = ReadBuffer(rel, loop[i % loop_blocks]);

			repeats += (b == prev);
			prev = b;
			if (lock)
			{
				LockBuffer(b, BUFFER_LOCK_SHARE);
				LockBuffer(b, BUFFER_LOCK_UNLOCK);
			}
			ReleaseBuffer(b);
			if ((i & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		t1 = now_ns();
	}
	else
	{
		/*
		 * cold: a walk over cold_kb KiB between operations evicts the caches; each operation is timed
		 * alone (two clock reads), and the clock's own cost, timed the same way with nothing between, is
		 * subtracted
		 */
		double		sum = 0.0;

		for (int i = 0; i < ops; i++)
		{
			double		a,
						z;
			Buffer		b;

			sink += walk(mem, bytes, &pos);
			a = now_ns();
			b = ReadBuffer(rel, loop[i % loop_blocks]);
			if (lock)
			{
				LockBuffer(b, BUFFER_LOCK_SHARE);
				LockBuffer(b, BUFFER_LOCK_UNLOCK);
			}
			ReleaseBuffer(b);
			z = now_ns();
			sum += z - a;
			repeats += (b == prev);
			prev = b;
			if ((i & 255) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		for (int i = 0; i < ops; i++)
		{
			double		a;

			sink += walk(mem, bytes, &pos);
			a = now_ns();
			clock_ns += now_ns() - a;
		}
		t0 = 0.0;
		t1 = sum;
	}

	touched = Min(ops, loop_blocks);	/* the loop visits loop[i % loop_blocks] */
	witness_of(&w, rel, pinned, held, loop, before, touched, repeats);
	for (int i = 0; i < held; i++)
		ReleaseBuffer(pinned[i]);
	relation_close(rel, AccessShareLock);
	if (sink == UINT64CONST(0xFFFFFFFFFFFFFFFF))
		elog(DEBUG5, "pinbench sink %llu", (unsigned long long) sink);
	return result_of(fcinfo, (t1 - t0 - clock_ns) / ops, &w);
}

Datum
pinbench_cycle(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int32		n = PG_GETARG_INT32(1);
	int32		rounds = PG_GETARG_INT32(2);
	int			random_order = order_of(PG_GETARG_TEXT_PP(3));
	int32		seed = PG_GETARG_INT32(4);
	Relation	rel;
	BlockNumber nblocks;
	Buffer	   *pinned;
	BlockNumber *blocks;
	Buffer	   *before;
	Buffer		prev = InvalidBuffer;
	int64		repeats = 0;
	int64		next = 0;
	int			touched;
	Witness		w;
	double		t0,
				t1;

	if (n < 1 || rounds < 1)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("n %d, rounds %d: both must be at least 1", n, rounds)));
	rel = open_checked(relid, n);
	nblocks = RelationGetNumberOfBlocks(rel);
	pinned = palloc(sizeof(Buffer) * n);

	/*
	 * every block of the table, in order ('sequential': consecutive blocks, so buffers next to each other
	 * in a prewarmed pool) or shuffled ('random': buffers spread over the pool); round r pins the next n
	 * of them and releases them first pinned, first released
	 */
	blocks = palloc(sizeof(BlockNumber) * nblocks);
	before = palloc(sizeof(Buffer) * nblocks);
	for (BlockNumber i = 0; i < nblocks; i++)
		blocks[i] = i;
	if (random_order)
		shuffle(blocks, (int) nblocks, seed);

	buffers_of(rel, blocks, (int) nblocks, before);	/* untimed: every block in shared buffers */

	t0 = now_ns();
	for (int r = 0; r < rounds; r++)
	{
		for (int i = 0; i < n; i++)
		{
			Buffer		b = ReadBuffer(rel, blocks[next]);

			repeats += (b == prev);
			prev = b;
			pinned[i] = b;
			if (++next == nblocks)
				next = 0;
		}
		for (int i = 0; i < n; i++)
			ReleaseBuffer(pinned[i]);
		CHECK_FOR_INTERRUPTS();
	}
	t1 = now_ns();

	/* the walk's blocks are blocks[0 ..], wrapping: min(n x rounds, nblocks) distinct ones; none held across */
	touched = (int) Min((int64) n * rounds, (int64) nblocks);
	witness_of(&w, rel, NULL, 0, blocks, before, touched, repeats);
	relation_close(rel, AccessShareLock);
	return result_of(fcinfo, (t1 - t0) / ((double) n * rounds), &w);
}

Datum
pinbench_prewarm(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel = relation_open(relid, AccessShareLock);
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);

	for (BlockNumber b = 0; b < nblocks; b++)
	{
		ReleaseBuffer(ReadBuffer(rel, b));
		if ((b & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	relation_close(rel, AccessShareLock);
	PG_RETURN_INT64((int64) nblocks);
}
