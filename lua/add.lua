--[[
  add — enqueue one or many jobs in one atomic call.

  KEYS[1] wait      LIST  job ids ready to run (producers LPUSH, reserve RPOPs)
  KEYS[2] delayed   ZSET  id -> due time (ms, Redis clock)
  KEYS[3] marker    ZSET  wake-up marker for idle workers (member "0")
  KEYS[4] meta      HASH  layout version and queue counters
  KEYS[5] data      HASH  id -> payload (JSON text)
  KEYS[6] max       HASH  id -> maxAttempts
  KEYS[7] dedupe    ZSET  dedupe key -> expiry (ms, Redis clock)
  KEYS[8] dedupeid  HASH  dedupe key -> id of the job that holds it

  ARGV[1] layout version this client speaks
  ARGV[2] n, the number of jobs
  then, for each job i (6 entries each):
    id, payload, delayMs (0 = now), maxAttempts, dedupeKey ("" = none), dedupeTtlMs

  Returns
    {0, id_1, …, id_n}   the id of each job; for a deduplicated job, the id of the job
                          that already holds its dedupe key (and nothing was added for it)
    {'LAYOUT_MISMATCH', found}          layout mismatch: meta.layout is `found`; nothing written
    {'DUPLICATE_ID', id}            a job with this id already exists; nothing written
]]
local layout = redis.call('HGET', KEYS[4], 'layout')
if layout and layout ~= ARGV[1] then return {'LAYOUT_MISMATCH', layout} end

local n = tonumber(ARGV[2])
-- commands take a chunk of values at once (unpack is limited to a few thousand values)
local CHUNK = 500
local function each(list, f)
  for i = 1, #list, CHUNK do
    local part = {}
    for j = i, math.min(i + CHUNK - 1, #list) do part[#part + 1] = list[j] end
    f(part)
  end
end

local ids = {}
for i = 0, n - 1 do ids[#ids + 1] = ARGV[3 + i * 6] end
local clash = false
each(ids, function(part)
  if clash then return end
  local found = redis.call('HMGET', KEYS[5], unpack(part))
  for i = 1, #part do
    if found[i] then clash = part[i] return end
  end
end)
if clash then return {'DUPLICATE_ID', clash} end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- drop a few expired dedupe keys (bounded, amortised over adds)
local expired = redis.call('ZRANGE', KEYS[7], '-inf', now, 'BYSCORE', 'LIMIT', 0, 16)
for _, k in ipairs(expired) do
  redis.call('ZREM', KEYS[7], k)
  redis.call('HDEL', KEYS[8], k)
end

local out = {0}
local data, max, ready, later = {}, {}, {}, {}
local claimed = {}
for i = 0, n - 1 do
  local b = 3 + i * 6
  local id, payload, delay = ARGV[b], ARGV[b + 1], tonumber(ARGV[b + 2])
  local dkey, dttl = ARGV[b + 4], tonumber(ARGV[b + 5])
  local holder = false
  if dkey ~= '' then
    holder = claimed[dkey] or false
    if not holder then
      local exp = redis.call('ZSCORE', KEYS[7], dkey)
      if exp and tonumber(exp) > now then holder = redis.call('HGET', KEYS[8], dkey) end
    end
  end
  if holder then
    out[#out + 1] = holder
  else
    if dkey ~= '' then
      redis.call('ZADD', KEYS[7], now + dttl, dkey)
      redis.call('HSET', KEYS[8], dkey, id)
      claimed[dkey] = id
    end
    data[#data + 1] = id
    data[#data + 1] = payload
    max[#max + 1] = id
    max[#max + 1] = ARGV[b + 3]
    if delay > 0 then
      later[#later + 1] = now + delay
      later[#later + 1] = id
    else
      ready[#ready + 1] = id
    end
    out[#out + 1] = id
  end
end

-- pairs stay together: chunks of an even size
each(data, function(part) redis.call('HSET', KEYS[5], unpack(part)) end)
each(max, function(part) redis.call('HSET', KEYS[6], unpack(part)) end)
each(later, function(part) redis.call('ZADD', KEYS[2], unpack(part)) end)
each(ready, function(part) redis.call('LPUSH', KEYS[1], unpack(part)) end)

local added = #data / 2
if added > 0 then
  redis.call('ZADD', KEYS[3], 0, '0')
  redis.call('HINCRBY', KEYS[4], 'added', added)
end
if not layout then redis.call('HSET', KEYS[4], 'layout', ARGV[1]) end
return out
