#!/usr/bin/env sysbench
-- Point selects under a chosen isolation level, each in its own transaction (autocommit)
-- or grouped into long transactions of --trx-stmts events.
--   READ COMMITTED, autocommit: a new ReadView (MySQL) or snapshot (PostgreSQL) per statement.
--   REPEATABLE READ, --trx-stmts=N: one view per transaction, reused by N events.
-- Built on sysbench's own oltp_common.lua (tables, prepare, point-select statements).

require("oltp_common")

sysbench.cmdline.options.isolation =
   {"Isolation level: rc (READ COMMITTED) or rr (REPEATABLE READ)", "rc"}
sysbench.cmdline.options.trx_stmts =
   {"Events per explicit transaction; 0: every statement in autocommit", 0}

local LEVELS = {rc = "READ COMMITTED", rr = "REPEATABLE READ"}

function prepare_statements()
   prepare_point_selects()
end

local base_thread_init = thread_init
local in_trx = 0

function thread_init()
   base_thread_init()
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

function event()
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
