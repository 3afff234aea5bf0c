--[[
  stats — a consistent snapshot of one queue's counts and counters (read-only).

  KEYS[1] wait     LIST
  KEYS[2] active   ZSET
  KEYS[3] delayed  ZSET
  KEYS[4] dead     ZSET
  KEYS[5] done     ZSET
  KEYS[6] meta     HASH

  ARGV[1] layout version (not enforced: stats must work to diagnose a mismatch)

  Returns
    {waiting, active, expired, delayed, dead, retained, oldestWaitingId|false,
     nowMs, layout|false, meta field, meta value, …}
      expired: active leases whose deadline has passed but that no sweep reclaimed yet
      oldestWaitingId: the id that will be reserved next (ids are ULIDs: they carry
      the producer's add time)
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {
  redis.call('LLEN', KEYS[1]),
  redis.call('ZCARD', KEYS[2]),
  redis.call('ZCOUNT', KEYS[2], '-inf', now),
  redis.call('ZCARD', KEYS[3]),
  redis.call('ZCARD', KEYS[4]),
  redis.call('ZCARD', KEYS[5]),
  redis.call('LINDEX', KEYS[1], -1),
  now,
  redis.call('HGET', KEYS[6], 'layout'),
}
local meta = redis.call('HGETALL', KEYS[6])
for _, v in ipairs(meta) do out[#out + 1] = v end
return out
