#!/usr/bin/env sysbench
-- The statements of the versions chapter's microbenchmarks that sysbench 1.0.20 ships no script for,
-- each as Mark Callaghan's sysbench harness defines the test of the same name (mdcallag/mytools,
-- bench/sysbench.lua/: run.sh picks a Lua script and its options per test; this script is the project's
-- own, written from those definitions). One statement per event, chosen by --statement, against sbtest1
-- (sysbench 1.0 reads --test as its old name for the script);
-- ids and k values uniform in 1..--table-size, each statement prepared once (scan as plain text, as
-- the harness sends it) and run in autocommit:
--   random-points         SELECT c FROM sbtest1 WHERE id IN (--points ids)
--   hot-points            SELECT c FROM sbtest1 WHERE id IN (the --points ids after table_size / 2):
--                         the same rows, mid-table, every time
--   points-covered-pk     SELECT id FROM sbtest1 WHERE id IN (--points ids)
--   points-notcovered-pk  SELECT id, c FROM sbtest1 WHERE id IN (--points ids)
--   points-covered-si     SELECT k FROM sbtest1 WHERE k IN (--points values)
--   points-notcovered-si  SELECT k, c FROM sbtest1 WHERE k IN (--points values)
--   range-covered-pk      SELECT id FROM sbtest1 WHERE id BETWEEN x AND x + --points
--   range-notcovered-pk   SELECT id, c FROM sbtest1 WHERE id BETWEEN x AND x + --points
--   range-covered-si      SELECT k FROM sbtest1 WHERE k BETWEEN x AND x + --points
--   range-notcovered-si   SELECT k, c FROM sbtest1 WHERE k BETWEEN x AND x + --points
--                         (x uniform over the whole table, as the harness draws it)
--   read-only-count       SELECT count(c) FROM sbtest1 WHERE id BETWEEN x AND x + --range-size - 1
--   scan                  SELECT * FROM sbtest1 WHERE LENGTH(c) < 0 (every row read, none returned)
--   update-inlist         UPDATE sbtest1 SET c = ? WHERE id IN (--points ids)
--   update-one            UPDATE sbtest1 SET c = ? WHERE id = 1 (the harness runs oltp_update_non_index
--                         on a table size of 1: always the first row)
--   update-zipf           UPDATE sbtest1 SET c = ? WHERE id = ? (ids skewed: P(id <= x) grows as x^0.2,
--                         a continuous zipfian of exponent 0.8, the exponent of sysbench's own zipfian,
--                         which Debian's sysbench 1.0.20 lacks)
-- Built on sysbench's own oltp_common.lua (options, tables, prepare and cleanup, c's random values).

require("oltp_common")

sysbench.cmdline.options.statement = {"The statement (see the script's header)", "random-points"}
sysbench.cmdline.options.points = {"Ids (or k values) per IN list, or a range's length past its first id", 100}

-- (statement, how its parameters are drawn)
local SHAPES = {
   ["random-points"] = {"SELECT c FROM sbtest1 WHERE id IN (%s)", "in"},
   ["hot-points"] = {"SELECT c FROM sbtest1 WHERE id IN (%s)", "hot"},
   ["points-covered-pk"] = {"SELECT id FROM sbtest1 WHERE id IN (%s)", "in"},
   ["points-notcovered-pk"] = {"SELECT id, c FROM sbtest1 WHERE id IN (%s)", "in"},
   ["points-covered-si"] = {"SELECT k FROM sbtest1 WHERE k IN (%s)", "in"},
   ["points-notcovered-si"] = {"SELECT k, c FROM sbtest1 WHERE k IN (%s)", "in"},
   ["range-covered-pk"] = {"SELECT id FROM sbtest1 WHERE id BETWEEN ? AND ?", "between"},
   ["range-notcovered-pk"] = {"SELECT id, c FROM sbtest1 WHERE id BETWEEN ? AND ?", "between"},
   ["range-covered-si"] = {"SELECT k FROM sbtest1 WHERE k BETWEEN ? AND ?", "between"},
   ["range-notcovered-si"] = {"SELECT k, c FROM sbtest1 WHERE k BETWEEN ? AND ?", "between"},
   ["read-only-count"] = {"SELECT count(c) FROM sbtest1 WHERE id BETWEEN ? AND ?", "range"},
   ["scan"] = {"SELECT * FROM sbtest1 WHERE LENGTH(c) < 0", "text"},
   ["update-inlist"] = {"UPDATE sbtest1 SET c = ? WHERE id IN (%s)", "set in"},
   ["update-one"] = {"UPDATE sbtest1 SET c = ? WHERE id = 1", "set"},
   ["update-zipf"] = {"UPDATE sbtest1 SET c = ? WHERE id = ?", "set zipf"},
}

local stmt, binds, kind, sql_text
local ZIPF_S = 0.8

-- an id in 1..n with density proportional to id^-ZIPF_S (inverse transform of the continuous law)
local function zipf_id(n)
   local e = 1 - ZIPF_S
   local x = ((n ^ e - 1) * sysbench.rand.uniform_double() + 1) ^ (1 / e)
   return math.min(n, math.floor(x))
end

local function marks(n)
   return string.rep("?,", n - 1) .. "?"
end

function prepare_statements()
   local shape = SHAPES[sysbench.opt.statement]
   if shape == nil then
      local names = {}
      for name in pairs(SHAPES) do names[#names + 1] = name end
      table.sort(names)
      error("bad --statement '" .. tostring(sysbench.opt.statement) .. "': valid are " .. table.concat(names, ", "))
   end
   kind = shape[2]
   binds = {}
   local n = sysbench.opt.points
   if kind == "text" then
      sql_text = shape[1]
      return
   end
   if kind == "in" or kind == "set in" then
      stmt = con:prepare(string.format(shape[1], marks(n)))
   elseif kind == "hot" then
      local mid = math.floor(sysbench.opt.table_size / 2)
      local ids = {}
      for i = 1, n do ids[i] = tostring(mid + i) end
      stmt = con:prepare(string.format(shape[1], table.concat(ids, ",")))
   else
      stmt = con:prepare(shape[1])
   end
   if kind == "set" or kind == "set in" or kind == "set zipf" then
      binds[#binds + 1] = stmt:bind_create(sysbench.sql.type.CHAR, 120)
   end
   local ints = ({["in"] = n, ["set in"] = n, between = 2, range = 2, ["set zipf"] = 1})[kind] or 0
   for _ = 1, ints do binds[#binds + 1] = stmt:bind_create(sysbench.sql.type.INT) end
   if #binds > 0 then stmt:bind_param(unpack(binds)) end
end

function event()
   local size = sysbench.opt.table_size
   if kind == "text" then
      con:query(sql_text)
      return
   end
   local first = 1
   if kind == "set" or kind == "set in" or kind == "set zipf" then
      binds[1]:set(get_c_value())
      first = 2
   end
   if kind == "in" or kind == "set in" then
      for i = first, #binds do binds[i]:set(sysbench.rand.default(1, size)) end
   elseif kind == "between" then
      local x = sysbench.rand.default(1, size)
      binds[1]:set(x)
      binds[2]:set(x + sysbench.opt.points)
   elseif kind == "range" then
      local x = sysbench.rand.default(1, size)
      binds[1]:set(x)
      binds[2]:set(x + sysbench.opt.range_size - 1)
   elseif kind == "set zipf" then
      binds[2]:set(zipf_id(size))
   end
   stmt:execute()
end
