--[[
  schedules — read the schedules (read-only), soonest next tick first, in pages bounded by
  count and by bytes: every schedule page by page after a cursor (`leaseq schedules`,
  `queue.schedules()`), or the due ones (next tick at or before the Redis time) for a
  sweep to tick. A page holds at most `limit` schedules and stops before the one that
  would take it past `maxBytes` bytes of schedule JSON (its payload inside; each length
  read with HSTRLEN before it is loaded), but always holds at least one: a call copies at
  most max(maxBytes, one schedule) bytes, however large the payloads are.
  Cost O(log S + k) for k read of S schedules (a queue holds at most 1000).

  KEYS[1] schedules  HASH  name -> the schedule (JSON)
  KEYS[2] schedAt    ZSET  name -> its next tick (ms, Redis clock)

  ARGV[1] layout      layout version (a read-only view: not checked)
  ARGV[2] due         1: only the due schedules (the cursor is not used); 0: every schedule
  ARGV[3] limit       the most schedules answered (0: none, only now and soonest)
  ARGV[4] maxBytes    the most bytes of schedule JSON in one page (at least one schedule)
  ARGV[5] afterScore  the cursor: the next tick of the last schedule read, or '' for the first page
  ARGV[6] afterName   the cursor: the name of the last schedule read ('' for the first page)

  Returns
    {now, soonest, more, name_1, next_1, schedule_1, …}
      now       the Redis time (ms)
      soonest   every schedule: the soonest next tick (ms); due only: the soonest next tick
                later than now; -1 when there is none
      more      1 when schedules are left after this page (pass its last name and next
                tick back as the cursor), else 0
      then per schedule: its name, its next tick (ms) and the schedule (JSON)
]]
--!include zset-page
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = ARGV[2] == '1'
local first
if due then
  first = redis.call('ZRANGE', KEYS[2], '(' .. now, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
else
  first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
end
local out = {now, first[2] and tonumber(first[2]) or -1, 0}
local limit = tonumber(ARGV[3])
if limit < 1 then return out end
local rows, ends, _
if due then
  -- one more than the limit, to know whether more are due
  rows = redis.call('ZRANGE', KEYS[2], '-inf', now, 'BYSCORE', 'LIMIT', 0, limit + 1, 'WITHSCORES')
  ends = #rows <= 2 * limit
else
  local after = ARGV[5] ~= '' and {ARGV[5], ARGV[6]} or false
  rows, _, ends = zset_page(KEYS[2], after, limit, false)
end
local budget = tonumber(ARGV[4])
local taken = 0
for i = 1, math.min(#rows, 2 * limit), 2 do
  local bytes = redis.call('HSTRLEN', KEYS[1], rows[i])
  if taken > 0 and taken + bytes > budget then
    out[3] = 1
    return out
  end
  taken = taken + bytes
  out[#out + 1] = rows[i]
  out[#out + 1] = tonumber(rows[i + 1])
  out[#out + 1] = redis.call('HGET', KEYS[1], rows[i]) or ''
end
if not ends then out[3] = 1 end
return out
