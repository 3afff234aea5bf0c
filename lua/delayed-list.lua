--[[
  delayed-list — the first `limit` delayed jobs by due time, for the dashboard
  (read-only, O(log N + limit)).

  KEYS[1..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                   marker; read and written only by lua/include/ready.lua

  ARGV[1] layout   layout version (not enforced: a read-only view)
  ARGV[2] limit    the most jobs returned (1 to 1000)

  Returns
    {nowMs, total, id, dueAt, id, dueAt, …}  soonest first
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
--!include ready
local rows = delayed_first(tonumber(ARGV[2]))
local out = {now, delayed_count()}
for _, v in ipairs(rows) do out[#out + 1] = v end
return out
