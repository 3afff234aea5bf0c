--[[
  sweep — one bounded pass: reclaim expired leases and promote due delayed jobs.

  Cost O(log N + k) for k expired of N active: a range read by score, never a scan.
  Safe to run from many places at once: each expired job is reclaimed by exactly one
  call (the first to run removes it from active).

  KEYS[1] active   ZSET  id -> lease deadline
  KEYS[2] lease    HASH  id -> fencing token
  KEYS[3] meta     HASH  layout version, counters (lost, dead)
  KEYS[4] wait     LIST  job ids ready to run
  KEYS[5] delayed  ZSET  id -> due time
  KEYS[6] marker   ZSET  wake-up marker
  KEYS[7] dead     ZSET  id -> time of death
  KEYS[8] err      HASH  id -> last error (JSON)
  KEYS[9] fails    HASH  id -> failures
  KEYS[10] lost    HASH  id -> lost leases
  KEYS[11] max     HASH  id -> maxAttempts

  ARGV[1] layout version
  ARGV[2] limit: the most expired leases to reclaim, and separately the most due
          delayed jobs to promote, in this call

  Returns
    {reclaimed, dead, promoted, moreExpired, moreDue, nextDeadlineMs}
      reclaimed     expired leases taken back (each counts a lost lease); includes `dead`
      dead          of those, jobs whose attempts were used up: moved to dead, reason lease-expired
      promoted      due delayed jobs moved to wait
      moreExpired   1 if expired leases remain (call again), else 0
      moreDue       1 if due delayed jobs remain (call again), else 0
      nextDeadlineMs  ms until the earliest live lease expires, or -1 when nothing is active
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local layout = redis.call('HGET', KEYS[3], 'layout')
if layout and layout ~= ARGV[1] then return {'LAYOUT_MISMATCH', layout} end

local limit = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- commands take the ids of a chunk at once (unpack is limited to a few thousand values)
local CHUNK = 1000
local function chunks(list, f)
  for i = 1, #list, CHUNK do
    local part = {}
    for j = i, math.min(i + CHUNK - 1, #list) do part[#part + 1] = list[j] end
    f(part)
  end
end

local expired = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', 0, limit)
local dead = 0
chunks(expired, function(ids)
  redis.call('ZREM', KEYS[1], unpack(ids))
  redis.call('HDEL', KEYS[2], unpack(ids))
  local fails = redis.call('HMGET', KEYS[9], unpack(ids))
  local losts = redis.call('HMGET', KEYS[10], unpack(ids))
  local maxes = redis.call('HMGET', KEYS[11], unpack(ids))
  local lostArgs, back, deadArgs, errArgs = {}, {}, {}, {}
  for i, id in ipairs(ids) do
    local lost = (tonumber(losts[i]) or 0) + 1
    local f = tonumber(fails[i]) or 0
    local max = tonumber(maxes[i]) or 1
    lostArgs[#lostArgs + 1] = id
    lostArgs[#lostArgs + 1] = lost
    if f + lost >= max then
      deadArgs[#deadArgs + 1] = now
      deadArgs[#deadArgs + 1] = id
      errArgs[#errArgs + 1] = id
      errArgs[#errArgs + 1] = cjson.encode({
        reason = 'lease-expired',
        message = 'lease expired ' .. lost .. ' time(s) with ' .. f .. ' failure(s); maxAttempts is ' .. max,
        at = now,
      })
    else
      back[#back + 1] = id
    end
  end
  redis.call('HSET', KEYS[10], unpack(lostArgs))
  if #back > 0 then redis.call('RPUSH', KEYS[4], unpack(back)) end
  if #deadArgs > 0 then
    redis.call('ZADD', KEYS[7], unpack(deadArgs))
    redis.call('HSET', KEYS[8], unpack(errArgs))
    dead = dead + #deadArgs / 2
  end
end)
local reclaimed = #expired
if reclaimed > 0 then redis.call('HINCRBY', KEYS[3], 'lost', reclaimed) end
if dead > 0 then redis.call('HINCRBY', KEYS[3], 'dead', dead) end

local due = redis.call('ZRANGE', KEYS[5], '-inf', now, 'BYSCORE', 'LIMIT', 0, limit)
chunks(due, function(ids)
  redis.call('LPUSH', KEYS[4], unpack(ids))
  redis.call('ZREM', KEYS[5], unpack(ids))
end)
if reclaimed > dead or #due > 0 then redis.call('ZADD', KEYS[6], 0, '0') end

local moreExpired = #redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', 0, 1)
local moreDue = #redis.call('ZRANGE', KEYS[5], '-inf', now, 'BYSCORE', 'LIMIT', 0, 1)
local nextDeadline = -1
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[2] then
  nextDeadline = tonumber(first[2]) - now
  if nextDeadline < 0 then nextDeadline = 0 end
end
return {reclaimed, dead, #due, moreExpired, moreDue, nextDeadline}
