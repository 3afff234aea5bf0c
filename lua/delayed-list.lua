--[[
  delayed-list — the first `limit` delayed jobs by due time, for the dashboard
  (read-only, O(log N + limit)).

  KEYS[1] delayed ZSET  id -> due time (ms, Redis clock)

  ARGV[1] layout   layout version (not enforced: a read-only view)
  ARGV[2] limit    the most jobs returned (1 to 1000)

  Returns
    {nowMs, total, id, dueAt, id, dueAt, …}  soonest first
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rows = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1, 'WITHSCORES')
local out = {now, redis.call('ZCARD', KEYS[1])}
for _, v in ipairs(rows) do out[#out + 1] = v end
return out
