#!/usr/bin/env sysbench
-- One statement type per event, chosen by --query, for the versions chapter's microbenchmarks that
-- sysbench 1.0.20 ships no script for (named after the source's tests). Each statement is prepared
-- once and runs in autocommit against sbtest1; ids and k values are uniform in 1..--table-size.
--   points-covered-pk     SELECT id FROM sbtest1 WHERE id IN (--points ids)
--   points-notcovered-pk  SELECT c  FROM sbtest1 WHERE id IN (--points ids)
--   points-covered-si     SELECT k  FROM sbtest1 WHERE k IN (--points values)
--   points-notcovered-si  SELECT c  FROM sbtest1 WHERE k IN (--points values)
--   hot-points            SELECT c  FROM sbtest1 WHERE id IN (1 .. --points): the same rows every time
--   range-covered-pk      SELECT id FROM sbtest1 WHERE id BETWEEN ? AND ? + --range-size - 1
--   range-notcovered-pk   SELECT c  FROM sbtest1 WHERE id BETWEEN ...
--   range-covered-si      SELECT k  FROM sbtest1 WHERE k BETWEEN ...
--   range-notcovered-si   SELECT c  FROM sbtest1 WHERE k BETWEEN ...
--   scan                  SELECT id FROM sbtest1 WHERE pad = '' (no row matches: every row read)
--   read-only-count       SELECT COUNT(*) FROM sbtest1 WHERE id BETWEEN ...
--   update-one            UPDATE sbtest1 SET k = k + 1 WHERE id = 1 (one row, every time)
--   update-zipf           UPDATE sbtest1 SET c = ? WHERE id = ? (ids skewed: P(id <= x) grows as x^0.2,
--                         a continuous zipfian of exponent 0.8, sysbench's own; its Lua API has no zipfian)
-- Built on sysbench's own oltp_common.lua (options, tables, prepare and cleanup).

require("oltp_common")

sysbench.cmdline.options.query = {"The statement type (see the script's header)", "points-covered-pk"}
sysbench.cmdline.options.points = {"Ids (or k values) per IN list", 10}

local SHAPES = {
   ["points-covered-pk"] = {"SELECT id FROM sbtest1 WHERE id IN (%s)", "in"},
   ["points-notcovered-pk"] = {"SELECT c FROM sbtest1 WHERE id IN (%s)", "in"},
   ["points-covered-si"] = {"SELECT k FROM sbtest1 WHERE k IN (%s)", "in"},
   ["points-notcovered-si"] = {"SELECT c FROM sbtest1 WHERE k IN (%s)", "in"},
   ["hot-points"] = {"SELECT c FROM sbtest1 WHERE id IN (%s)", "hot"},
   ["range-covered-pk"] = {"SELECT id FROM sbtest1 WHERE id BETWEEN ? AND ?", "range"},
   ["range-notcovered-pk"] = {"SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?", "range"},
   ["range-covered-si"] = {"SELECT k FROM sbtest1 WHERE k BETWEEN ? AND ?", "range"},
   ["range-notcovered-si"] = {"SELECT c FROM sbtest1 WHERE k BETWEEN ? AND ?", "range"},
   ["read-only-count"] = {"SELECT COUNT(*) FROM sbtest1 WHERE id BETWEEN ? AND ?", "range"},
   ["scan"] = {"SELECT id FROM sbtest1 WHERE pad = ''", "none"},
   ["update-one"] = {"UPDATE sbtest1 SET k = k + 1 WHERE id = 1", "none"},
   ["update-zipf"] = {"UPDATE sbtest1 SET c = ? WHERE id = ?", "zipf"},
}

local stmt, binds, kind
local ZIPF_S = 0.8

-- an id in 1..n with density proportional to id^-ZIPF_S (inverse transform of the continuous law)
local function zipf_id(n)
   local e = 1 - ZIPF_S
   local x = ((n ^ e - 1) * sysbench.rand.uniform_double() + 1) ^ (1 / e)
   return math.min(n, math.floor(x))
end

function prepare_statements()
   local shape = SHAPES[sysbench.opt.query]
   if shape == nil then
      local names = {}
      for name in pairs(SHAPES) do names[#names + 1] = name end
      table.sort(names)
      error("bad --query '" .. tostring(sysbench.opt.query) .. "': valid are " .. table.concat(names, ", "))
   end
   kind = shape[2]
   binds = {}
   if kind == "in" then
      local n = sysbench.opt.points
      stmt = con:prepare(string.format(shape[1], string.rep("?,", n - 1) .. "?"))
      for i = 1, n do binds[i] = stmt:bind_create(sysbench.sql.type.INT) end
      stmt:bind_param(unpack(binds))
   elseif kind == "hot" then
      local ids = {}
      for i = 1, sysbench.opt.points do ids[i] = tostring(i) end
      stmt = con:prepare(string.format(shape[1], table.concat(ids, ",")))
   elseif kind == "range" then
      stmt = con:prepare(shape[1])
      binds[1] = stmt:bind_create(sysbench.sql.type.INT)
      binds[2] = stmt:bind_create(sysbench.sql.type.INT)
      stmt:bind_param(binds[1], binds[2])
   elseif kind == "zipf" then
      stmt = con:prepare(shape[1])
      binds[1] = stmt:bind_create(sysbench.sql.type.CHAR, 120)
      binds[2] = stmt:bind_create(sysbench.sql.type.INT)
      stmt:bind_param(binds[1], binds[2])
   else
      stmt = con:prepare(shape[1])
   end
end

function event()
   local size = sysbench.opt.table_size
   if kind == "in" then
      for i = 1, #binds do binds[i]:set(sysbench.rand.uniform(1, size)) end
   elseif kind == "range" then
      local first = sysbench.rand.uniform(1, size - sysbench.opt.range_size + 1)
      binds[1]:set(first)
      binds[2]:set(first + sysbench.opt.range_size - 1)
   elseif kind == "zipf" then
      binds[1]:set(get_c_value())
      binds[2]:set(zipf_id(size))
   end
   stmt:execute()
end
