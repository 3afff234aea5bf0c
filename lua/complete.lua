--[[
  complete — acknowledge many jobs; each is checked against its fencing token.

  KEYS[1] active  ZSET  id -> lease deadline
  KEYS[2] lease   HASH  id -> fencing token
  KEYS[3] meta    HASH  layout version, counters (completed)
  KEYS[4] data    HASH  id -> payload
  KEYS[5] max     HASH  id -> maxAttempts
  KEYS[6] fails   HASH  id -> failures
  KEYS[7] lost    HASH  id -> lost leases
  KEYS[8] err     HASH  id -> last error
  KEYS[9] done    ZSET  id -> completion time (only used when keep > 0)
  KEYS[10] result HASH  id -> result (only used when keep > 0)

  ARGV[1] layout version
  ARGV[2] keep: how many completed jobs to retain (0 = delete on completion)
  then triples: id, token, result (JSON text, "" for none)

  Returns
    {status_1, …}  per job: 1 completed, 0 lease lost (nothing changed for that job)
    {'LAYOUT_MISMATCH', found}    layout mismatch; nothing written
  With keep > 0 the oldest retained jobs beyond `keep` are deleted, at most 2 per
  completed job, so one call never does unbounded work.
]]
local layout = redis.call('HGET', KEYS[3], 'layout')
if layout and layout ~= ARGV[1] then return {'LAYOUT_MISMATCH', layout} end

local keep = tonumber(ARGV[2])
local ids = {}
for i = 3, #ARGV, 3 do ids[#ids + 1] = ARGV[i] end
local out = {}
if #ids == 0 then return out end
local tokens = redis.call('HMGET', KEYS[2], unpack(ids))
local okIds = {}
for i, id in ipairs(ids) do
  if tokens[i] and tokens[i] == ARGV[1 + i * 3] then
    okIds[#okIds + 1] = id
    out[i] = 1
  else
    out[i] = 0
  end
end
local n = #okIds
if n == 0 then return out end

redis.call('ZREM', KEYS[1], unpack(okIds))
redis.call('HDEL', KEYS[2], unpack(okIds))
redis.call('HINCRBY', KEYS[3], 'completed', n)
if keep > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  for i, id in ipairs(ids) do
    if out[i] == 1 then
      redis.call('ZADD', KEYS[9], now, id)
      local r = ARGV[2 + i * 3]
      if r ~= '' then redis.call('HSET', KEYS[10], id, r) end
    end
  end
  local excess = redis.call('ZCARD', KEYS[9]) - keep
  if excess > 2 * n then excess = 2 * n end
  if excess > 0 then
    local old = redis.call('ZPOPMIN', KEYS[9], excess)
    local oldIds = {}
    for i = 1, #old, 2 do oldIds[#oldIds + 1] = old[i] end
    for k = 4, 8 do redis.call('HDEL', KEYS[k], unpack(oldIds)) end
    redis.call('HDEL', KEYS[10], unpack(oldIds))
  end
else
  for k = 4, 8 do redis.call('HDEL', KEYS[k], unpack(okIds)) end
end
return out
