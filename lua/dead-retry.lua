--[[
  dead-retry — give dead jobs a fresh set of attempts: back of wait, counters reset.

  KEYS[1] dead    ZSET  id -> time of death
  KEYS[2] wait    LIST  job ids ready to run
  KEYS[3] marker  ZSET  wake-up marker
  KEYS[4] meta    HASH  layout version, counters (retried)
  KEYS[5] fails   HASH  id -> failures
  KEYS[6] lost    HASH  id -> lost leases
  KEYS[7] err     HASH  id -> last error
  KEYS[8] data    HASH  id -> payload

  ARGV[1] layout version
  ARGV[2] mode: "ids" (the ids that follow) or "all" (the oldest `limit` dead jobs)
  ARGV[3] limit (mode "all")
  then, in mode "ids": id_1, id_2, …

  Returns
    {retried, remaining, missing_id_1, …}
      remaining: dead jobs left after this call; missing ids were not dead (ignored)
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local layout = redis.call('HGET', KEYS[4], 'layout')
if layout and layout ~= ARGV[1] then return {'LAYOUT_MISMATCH', layout} end

local ids
if ARGV[2] == 'all' then
  ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1)
else
  ids = {}
  for i = 4, #ARGV do ids[#ids + 1] = ARGV[i] end
end
local retried, missing = 0, {}
for _, id in ipairs(ids) do
  if redis.call('ZREM', KEYS[1], id) == 1 then
    redis.call('HDEL', KEYS[5], id)
    redis.call('HDEL', KEYS[6], id)
    redis.call('HDEL', KEYS[7], id)
    if redis.call('HEXISTS', KEYS[8], id) == 1 then
      redis.call('LPUSH', KEYS[2], id)
      retried = retried + 1
    end
  else
    missing[#missing + 1] = id
  end
end
if retried > 0 then
  redis.call('ZADD', KEYS[3], 0, '0')
  redis.call('HINCRBY', KEYS[4], 'retried', retried)
end
local out = {retried, redis.call('ZCARD', KEYS[1])}
for _, id in ipairs(missing) do out[#out + 1] = id end
return out
