/*
 * pinbench: what pinning buffers costs a PostgreSQL backend, timed inside the backend.
 *
 * Part of "Database Internals, Measured" (the buffer_pins chapter). A backend tracks its own pins in a
 * small array (REFCOUNT_ARRAY_ENTRIES, 8) that overflows into a hash table (bufmgr.c); these functions
 * time ReadBuffer/ReleaseBuffer while N pins are held (pinbench_hold) and rounds that pin N distinct buffers
 * and release them first in, first out (pinbench_cycle: the reading of the source's benchmark). Only the server's public buffer-manager API is used, so one source builds against
 * the headers of PostgreSQL 12 to 19.
 */
#include "postgres.h"

#include <time.h>

#include "access/relation.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(pinbench_hold);
PG_FUNCTION_INFO_V1(pinbench_cycle);
PG_FUNCTION_INFO_V1(pinbench_prewarm);

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
	char	   *mem = NULL;
	int			bytes = cold_kb * 1024;
	int			pos = 0;
	uint64		sink = 0;
	double		t0,
				t1,
				clock_ns = 0.0;

	if (held < 0 || loop_blocks < 1 || ops < 1 || cold_kb < 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("held %d, loop_blocks %d, ops %d, cold_kb %d: need held >= 0, loop_blocks >= 1, "
							   "ops >= 1, cold_kb >= 0", held, loop_blocks, ops, cold_kb)));
	rel = open_checked(relid, (int64) held + loop_blocks);
	pinned = palloc(sizeof(Buffer) * Max(held, 1));
	loop = palloc(sizeof(BlockNumber) * loop_blocks);
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
		CHECK_FOR_INTERRUPTS();
	}

	/* one untimed pass: every loop block in shared buffers and its mapping entry touched */
	for (int i = 0; i < loop_blocks; i++)
		ReleaseBuffer(ReadBuffer(rel, loop[i]));

	if (bytes == 0)
	{
		/* warm: the whole loop timed at once */
		t0 = now_ns();
		for (int i = 0; i < ops; i++)
		{
			Buffer		b = ReadBuffer(rel, loop[i % loop_blocks]);

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

	for (int i = 0; i < held; i++)
		ReleaseBuffer(pinned[i]);
	relation_close(rel, AccessShareLock);
	if (sink == UINT64CONST(0xFFFFFFFFFFFFFFFF))
		elog(DEBUG5, "pinbench sink %llu", (unsigned long long) sink);
	PG_RETURN_FLOAT8((t1 - t0 - clock_ns) / ops);
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
	int64		next = 0;
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
	for (BlockNumber i = 0; i < nblocks; i++)
		blocks[i] = i;
	if (random_order)
		shuffle(blocks, (int) nblocks, seed);

	for (BlockNumber i = 0; i < nblocks; i++)	/* untimed: every block in shared buffers */
		ReleaseBuffer(ReadBuffer(rel, i));

	t0 = now_ns();
	for (int r = 0; r < rounds; r++)
	{
		for (int i = 0; i < n; i++)
		{
			pinned[i] = ReadBuffer(rel, blocks[next]);
			if (++next == nblocks)
				next = 0;
		}
		for (int i = 0; i < n; i++)
			ReleaseBuffer(pinned[i]);
		CHECK_FOR_INTERRUPTS();
	}
	t1 = now_ns();
	relation_close(rel, AccessShareLock);
	PG_RETURN_FLOAT8((t1 - t0) / ((double) n * rounds));
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
