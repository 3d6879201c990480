#!/usr/bin/env sysbench
-- Point selects under a chosen isolation level, each in its own transaction (autocommit)
-- or grouped into long transactions of --trx-stmts events.
--   READ COMMITTED, autocommit: a new ReadView (MySQL) or snapshot (PostgreSQL) per statement.
--   REPEATABLE READ, --trx-stmts=N: one view per transaction, reused by N events.
--   --writer=on: thread 0 inserts a row into writer_ticks in autocommit instead (one commit per
--   event), so transactions keep ending while the readers read: PostgreSQL 14+ reuses a snapshot
--   only while no transaction has ended since it was built. Inserts into a table the readers never
--   read: no version chains on their rows, whatever holds back vacuum or purge.
-- Built on sysbench's own oltp_common.lua (tables, prepare, point-select statements).

require("oltp_common")

sysbench.cmdline.options.isolation =
   {"Isolation level: rc (READ COMMITTED) or rr (REPEATABLE READ)", "rc"}
sysbench.cmdline.options.trx_stmts =
   {"Events per explicit transaction; 0: every statement in autocommit", 0}
sysbench.cmdline.options.writer =
   {"Thread 0 commits one-row updates instead of reading", false}

local LEVELS = {rc = "READ COMMITTED", rr = "REPEATABLE READ"}

function prepare_statements()
   prepare_point_selects()
end

local base_thread_init = thread_init
local in_trx = 0
local is_writer = false

function thread_init(thread_id)
   base_thread_init()
   is_writer = sysbench.opt.writer and thread_id == 0
   if is_writer then
      if drv:name() == "pgsql" then
         con:query("CREATE TABLE IF NOT EXISTS writer_ticks (id BIGSERIAL PRIMARY KEY, v INTEGER NOT NULL)")
      else
         con:query("CREATE TABLE IF NOT EXISTS writer_ticks "
                   .. "(id BIGINT AUTO_INCREMENT PRIMARY KEY, v INTEGER NOT NULL)")
      end
   end
   local level = LEVELS[sysbench.opt.isolation]
   if level == nil then
      error("--isolation must be rc or rr, not " .. tostring(sysbench.opt.isolation))
   end
   if drv:name() == "pgsql" then
      con:query("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL " .. level)
   else
      con:query("SET SESSION TRANSACTION ISOLATION LEVEL " .. level)
   end
end

local function write_one()
   con:query("INSERT INTO writer_ticks (v) VALUES (1)")
end

function event()
   if is_writer then
      return write_one()
   end
   local per_trx = sysbench.opt.trx_stmts
   if per_trx > 0 and in_trx == 0 then
      con:query("BEGIN")
   end
   execute_point_selects()
   if per_trx > 0 then
      in_trx = in_trx + 1
      if in_trx >= per_trx then
         con:query("COMMIT")
         in_trx = 0
      end
   end
end

local base_thread_done = thread_done

function thread_done()
   if in_trx > 0 then
      con:query("COMMIT")
   end
   base_thread_done()
end
