--[[
  schedules — read the schedules (read-only): all of them with their next tick, or only
  the due ones (next tick at or before the Redis time), soonest first, for a sweep to
  tick. Cost O(log S + k) for k read of S schedules (a queue holds at most 1000).

  KEYS[1] schedules  HASH  name -> the schedule (JSON)
  KEYS[2] schedAt    ZSET  name -> its next tick (ms, Redis clock)

  ARGV[1] layout  layout version (a read-only view: not checked)
  ARGV[2] due     1: only the due schedules; 0: every schedule
  ARGV[3] limit   the most schedules answered

  Returns
    {now, soonest, name_1, next_1, schedule_1, …}
      now       the Redis time (ms)
      soonest   every schedule: the soonest next tick (ms); due only: the soonest next tick
                later than now; -1 when there is none
      then per schedule: its name, its next tick (ms) and the schedule (JSON)
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = ARGV[2] == '1'
local first
if due then
  first = redis.call('ZRANGE', KEYS[2], '(' .. now, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
else
  first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
end
local out = {now, first[2] and tonumber(first[2]) or -1}
local limit = tonumber(ARGV[3])
if limit < 1 then return out end
local rows
if due then
  rows = redis.call('ZRANGE', KEYS[2], '-inf', now, 'BYSCORE', 'LIMIT', 0, limit, 'WITHSCORES')
else
  rows = redis.call('ZRANGE', KEYS[2], 0, limit - 1, 'WITHSCORES')
end
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
  out[#out + 1] = tonumber(rows[i + 1])
  out[#out + 1] = redis.call('HGET', KEYS[1], rows[i]) or ''
end
return out
