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
 * and two functions around them:
 *   pinbench_hash   the thread's overflow table without the buffer manager: a backend-private simplehash
 *                   (lib/simplehash.h, as 19's PrivateRefCountHash) keyed by buffer numbers, built twice, with
 *                   the buffer number as its own hash (the thread's v1) and with murmurhash32 of it
 *                   (common/hashfn.h: the thread's v2, and 19); N keys held, then one more pinned and released
 *                   again and again, timed; it returns how the table grew and how far its entries sit from
 *                   their buckets;
 *   pinbench_flush  pages of a table written by this backend (FlushOneBuffer): a write through the buffer
 *                   manager's I/O path, for the chapter's probe of StartBufferIO.
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
#include "common/hashfn.h"
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
PG_FUNCTION_INFO_V1(pinbench_hash);
PG_FUNCTION_INFO_V1(pinbench_flush);

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

static int
double_cmp(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/* the median of n values (sorts them in place) */
static double
median_of(double *v, int n)
{
	qsort(v, n, sizeof(double), double_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
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
	double		ns;

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
		double		t0 = now_ns();
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
		ns = (now_ns() - t0) / ops;
	}
	else
	{
		/*
		 * cold: a walk over cold_kb KiB between operations evicts the caches; each operation is timed
		 * alone (two clock reads), and the clock's own cost, timed the same way with nothing between
		 * after a walk of its own, is measured in the same iteration, just before: the two samples see the
		 * same machine (a neighbour's load, the clock source's speed), where two loops one after the other
		 * need not. The median of each is taken (sums of each came out at -563 ns per operation once, in a
		 * published sweep), so that an operation or a clock read during which the backend was switched out
		 * (milliseconds, against hundreds of ns) moves neither; an operation whose median is not above the
		 * clock's is an error that says so, never a time.
		 */
		double	   *op_ns = palloc(sizeof(double) * ops);
		double	   *clock_only = palloc(sizeof(double) * ops);
		double		op_median,
					clock_median;

		for (int i = 0; i < ops; i++)
		{
			double		a,
						z;
			Buffer		b;

			sink += walk(mem, bytes, &pos);
			a = now_ns();
			clock_only[i] = now_ns() - a;

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
			op_ns[i] = z - a;
			repeats += (b == prev);
			prev = b;
			if ((i & 255) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		op_median = median_of(op_ns, ops);
		clock_median = median_of(clock_only, ops);
		pfree(op_ns);
		pfree(clock_only);
		if (!(op_median > clock_median))
			ereport(ERROR, (errcode(ERRCODE_DATA_EXCEPTION),
							errmsg("pinbench_hold cold at %d held: the median operation took %.0f ns, not more than "
								   "the median pair of clock reads (%.0f ns) timed beside it; no time per operation "
								   "can be derived", held, op_median, clock_median)));
		ns = op_median - clock_median;
	}

	touched = Min(ops, loop_blocks);	/* the loop visits loop[i % loop_blocks] */
	witness_of(&w, rel, pinned, held, loop, before, touched, repeats);
	for (int i = 0; i < held; i++)
		ReleaseBuffer(pinned[i]);
	relation_close(rel, AccessShareLock);
	if (sink == UINT64CONST(0xFFFFFFFFFFFFFFFF))
		elog(DEBUG5, "pinbench sink %llu", (unsigned long long) sink);
	return result_of(fcinfo, ns, &w);
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

/*
 * The overflow table of pins on its own: a simplehash keyed by buffer number (the key, a count, simplehash's
 * status byte), twice: hashed by the identity (the thread's v1: "the buffer as the hash key directly") and by
 * murmurhash32 (its v2, and 19's PrivateRefCountHash). Both start at 100 elements (128 buckets), the size
 * 13 to 18 give their dynahash of private pins.
 */
typedef struct PinEntry
{
	Buffer		buffer;
	char		status;
	int32		refcount;
} PinEntry;

#define PIN_HASH_ELEMENTS 100

#define SH_PREFIX pins_raw
#define SH_ELEMENT_TYPE PinEntry
#define SH_KEY_TYPE Buffer
#define SH_KEY buffer
#define SH_HASH_KEY(tb, key) ((uint32) (key))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

#define SH_PREFIX pins_mix
#define SH_ELEMENT_TYPE PinEntry
#define SH_KEY_TYPE Buffer
#define SH_KEY buffer
#define SH_HASH_KEY(tb, key) murmurhash32((uint32) (key))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* what one table did: its time per operation and its shape once the held keys and the FIFO's key are in */
typedef struct HashRun
{
	double		ns;
	int64		size;			/* buckets */
	int32		grows;			/* times the table grew while the held keys went in */
	int32		max_dib;		/* the farthest any entry sits from its hash's bucket */
	double		mean_dib;
	int32		fifo_dib;		/* where the FIFO's key sits from its bucket: its lookups probe this + 1 */
} HashRun;

static inline uint32
hash_raw(Buffer b)
{
	return (uint32) b;
}

static inline uint32
hash_mix(Buffer b)
{
	return murmurhash32((uint32) b);
}

/*
 * P_run: hold ``held`` keys, then time ``ops`` rounds of a pin and a release of ``fifo`` as the buffer manager
 * does them with its overflow table (a lookup that misses, an insert; a lookup that finds it, a delete)
 */
#define PIN_HASH_RUN(P, HASHFN) \
static void \
P##_run(const Buffer *keys, int held, Buffer fifo, int ops, HashRun *out) \
{ \
	P##_hash   *tb = P##_create(CurrentMemoryContext, PIN_HASH_ELEMENTS, NULL); \
	uint64		size = tb->size; \
	uint64		sink = 0; \
	double		t0, t1, sum = 0.0; \
	int64		used = 0; \
	bool		found; \
	PinEntry   *e; \
	out->grows = 0; \
	for (int i = 0; i < held; i++) \
	{ \
		e = P##_insert(tb, keys[i], &found); \
		e->refcount = 1; \
		if (tb->size != size) \
		{ \
			out->grows++; \
			size = tb->size; \
		} \
		if ((i & 1023) == 0) \
			CHECK_FOR_INTERRUPTS(); \
	} \
	e = P##_insert(tb, fifo, &found);	/* once untimed: its place, and any growth it makes */ \
	if (tb->size != size) \
		out->grows++; \
	out->max_dib = 0; \
	out->fifo_dib = 0; \
	for (uint64 i = 0; i < tb->size; i++) \
	{ \
		PinEntry   *x = &tb->data[i]; \
		uint64		home, dib; \
		if (x->status != P##_SH_IN_USE) \
			continue; \
		home = HASHFN(x->buffer) & tb->sizemask; \
		dib = i >= home ? i - home : i + tb->size - home; \
		if (x->buffer == fifo) \
			out->fifo_dib = (int32) dib; \
		else \
		{ \
			out->max_dib = Max(out->max_dib, (int32) dib); \
			sum += (double) dib; \
			used++; \
		} \
	} \
	out->mean_dib = used ? sum / used : 0.0; \
	out->size = (int64) tb->size; \
	P##_delete(tb, fifo); \
	t0 = now_ns(); \
	for (int i = 0; i < ops; i++) \
	{ \
		sink += (P##_lookup(tb, fifo) == NULL); \
		e = P##_insert(tb, fifo, &found); \
		e->refcount = 1; \
		e = P##_lookup(tb, fifo); \
		sink += e->refcount; \
		P##_delete(tb, fifo); \
		if ((i & 4095) == 0) \
			CHECK_FOR_INTERRUPTS(); \
	} \
	t1 = now_ns(); \
	if (sink != (uint64) ops * 2) \
		elog(ERROR, "pinbench_hash: the FIFO's key was not found where it was put"); \
	out->ns = (t1 - t0) / ops; \
	P##_destroy(tb); \
}

PIN_HASH_RUN(pins_raw, hash_raw)
PIN_HASH_RUN(pins_mix, hash_mix)

Datum
pinbench_hash(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int32		held = PG_GETARG_INT32(1);
	int32		ops = PG_GETARG_INT32(2);
	char	   *pattern = text_to_cstring(PG_GETARG_TEXT_PP(3));
	char	   *hash = text_to_cstring(PG_GETARG_TEXT_PP(4));
	int32		stride = PG_GETARG_INT32(5);
	int32		seed = PG_GETARG_INT32(6);
	Buffer	   *keys;
	HashRun		run;
	TupleDesc	desc;
	Datum		values[7];
	bool		nulls[7] = {0};
	bool		mixed;

	if (held < 0 || ops < 1 || stride < 1 || (int64) (held + 1) * stride > PG_INT32_MAX)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("held %d, ops %d, stride %d: need held >= 0, ops >= 1, stride >= 1 and (held + 1) x "
							   "stride within int4", held, ops, stride)));
	if (strcmp(hash, "identity") == 0)
		mixed = false;
	else if (strcmp(hash, "murmur") == 0)
		mixed = true;
	else
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("hash \"%s\" is not valid; valid are 'identity' and 'murmur'", hash)));
	if (strcmp(pattern, "stride") != 0 && strcmp(pattern, "sequential") != 0 && strcmp(pattern, "random") != 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("pattern \"%s\" is not valid; valid are 'sequential', 'random' and 'stride'", pattern)));
	keys = palloc(sizeof(Buffer) * (held + 1));
	if (strcmp(pattern, "stride") == 0)
	{
		/* buffer numbers that differ only above their low bits: stride apart */
		for (int i = 0; i <= held; i++)
			keys[i] = (Buffer) ((i + 1) * stride);
	}
	else
	{
		/* the buffers of pinbench_fifo's blocks: the held ones and the FIFO's (its last) */
		Relation	rel = open_checked(relid, (int64) held + 1);
		BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
		BlockNumber *blocks = palloc(sizeof(BlockNumber) * nblocks);

		for (BlockNumber i = 0; i < nblocks; i++)
			blocks[i] = i;
		if (strcmp(pattern, "random") == 0)
			shuffle(blocks, (int) nblocks, seed);
		buffers_of(rel, blocks, held + 1, keys);
		relation_close(rel, AccessShareLock);
		if (distinct_buffers(keys, held + 1) != held + 1)
			ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
							errmsg("pinbench_hash: %d blocks are in fewer distinct buffers", held + 1)));
	}
	if (mixed)
		pins_mix_run(keys, held, keys[held], ops, &run);
	else
		pins_raw_run(keys, held, keys[held], ops, &run);

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE || desc->natts != 7)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
						errmsg("pinbench_hash must be declared to return 7 columns: the SQL and the module differ")));
	desc = BlessTupleDesc(desc);
	values[0] = Float8GetDatum(run.ns);
	values[1] = Int32GetDatum(held + 1);
	values[2] = Int64GetDatum(run.size);
	values[3] = Int32GetDatum(run.grows);
	values[4] = Int32GetDatum(run.max_dib);
	values[5] = Float8GetDatum(run.mean_dib);
	values[6] = Int32GetDatum(run.fifo_dib);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

Datum
pinbench_flush(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int64		first = PG_GETARG_INT64(1);
	int32		n = PG_GETARG_INT32(2);
	Relation	rel;
	BlockNumber nblocks;

	if (first < 0 || n < 1)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("first %lld, n %d: need first >= 0 and n >= 1", (long long) first, n)));
	rel = open_checked(relid, 1);
	nblocks = RelationGetNumberOfBlocks(rel);
	for (int i = 0; i < n; i++)
	{
		/* the page is not changed: marked dirty so that FlushOneBuffer writes it, by this backend */
		Buffer		b = ReadBuffer(rel, (BlockNumber) ((first + i) % nblocks));

		LockBuffer(b, BUFFER_LOCK_EXCLUSIVE);
		MarkBufferDirty(b);
		FlushOneBuffer(b);
		UnlockReleaseBuffer(b);
		CHECK_FOR_INTERRUPTS();
	}
	relation_close(rel, AccessShareLock);
	PG_RETURN_INT64((int64) n);
}
