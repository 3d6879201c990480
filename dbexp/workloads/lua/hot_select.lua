#!/usr/bin/env sysbench
-- Point selects on a hot table: one row by primary key per event, ids uniform in 1..--hot-rows,
-- each in autocommit. The hot table is a copy of sbtest1's first rows, made by the lab beside the
-- sysbench tables (sysbench's prepare makes the large table; this script never reads it).
-- Built on sysbench's own oltp_common.lua (options, connection, prepare and cleanup).

require("oltp_common")

sysbench.cmdline.options.hot_table = {"Table the point selects read", "hot"}
sysbench.cmdline.options.hot_rows = {"Rows of the hot table: ids 1..N", 10000}

local hot_stmt, hot_id

function prepare_statements()
   hot_stmt = con:prepare("SELECT c FROM " .. sysbench.opt.hot_table .. " WHERE id = ?")
   hot_id = hot_stmt:bind_create(sysbench.sql.type.INT)
   hot_stmt:bind_param(hot_id)
end

function event()
   hot_id:set(sysbench.rand.default(1, sysbench.opt.hot_rows))
   hot_stmt:execute()
end
