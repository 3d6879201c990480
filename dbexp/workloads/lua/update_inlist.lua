#!/usr/bin/env sysbench
-- One UPDATE per event that changes --inlist-size rows chosen by primary key in an IN list
-- (k = k + 1, an indexed column), in autocommit: a write transaction of many rows, as the
-- "update-inlist" microbenchmark of the GTID source. sysbench ships no such script.
-- Built on sysbench's own oltp_common.lua (options, tables, prepare and cleanup).

require("oltp_common")

sysbench.cmdline.options.inlist_size = {"Rows each UPDATE changes, by primary key in an IN list", 100}

local upd, ids

function prepare_statements()
   local n = sysbench.opt.inlist_size
   local marks = string.rep("?,", n - 1) .. "?"
   upd = con:prepare("UPDATE sbtest1 SET k = k + 1 WHERE id IN (" .. marks .. ")")
   ids = {}
   for i = 1, n do
      ids[i] = upd:bind_create(sysbench.sql.type.INT)
   end
   upd:bind_param(unpack(ids))
end

function event()
   for i = 1, #ids do
      ids[i]:set(sysbench.rand.default(1, sysbench.opt.table_size))
   end
   upd:execute()
end
