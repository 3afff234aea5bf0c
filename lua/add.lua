--[[
  add — enqueue one or many jobs in one atomic call.

  A job that is ready at once is stored as ONE list entry "<id>|<maxAttempts>|<payload>":
  nothing else is written for it until a worker reserves it (reserve moves the payload
  and maxAttempts into the data and max hashes). A delayed job goes to the data and max
  hashes at once, and its id to delayed. Job ids are ULIDs: they never contain "|".

  KEYS[1] wait      LIST  entries ready to run: "<id>|<max>|<payload>" (new) or "<id>" (returned)
  KEYS[2] delayed   ZSET  id -> due time (ms, Redis clock)
  KEYS[3] marker    ZSET  wake-up marker for idle workers (member "0")
  KEYS[4] meta      HASH  layout version and queue counters
  KEYS[5] data      HASH  id -> payload (JSON text), for jobs not waiting inline
  KEYS[6] max       HASH  id -> maxAttempts, likewise
  KEYS[7] dedupe    ZSET  dedupe key -> expiry (ms, Redis clock)
  KEYS[8] dedupeid  HASH  dedupe key -> id of the job that holds it

  ARGV[1] layout version this client speaks
  ARGV[2] n, the number of jobs
  then, for each job i (6 entries each):
    id, payload, delayMs (0 = now), maxAttempts, dedupeKey ("" = none), dedupeTtlMs

  Returns
    {0, id_1, …, id_n}          the id of each job; for a deduplicated job, the id of the job
                                that already holds its dedupe key (and nothing was added for it)
    {'LAYOUT_MISMATCH', found}  layout mismatch: meta.layout is `found`; nothing written
]]
local layout = redis.call('HGET', KEYS[4], 'layout')
if layout and layout ~= ARGV[1] then return {'LAYOUT_MISMATCH', layout} end

local n = tonumber(ARGV[2])
local now = 0
local function clock()
  if now == 0 then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now
end

-- commands take a chunk of values at once (unpack is limited to a few thousand values)
local CHUNK = 500
local function each(list, f)
  for i = 1, #list, CHUNK do
    local part = {}
    for j = i, math.min(i + CHUNK - 1, #list) do part[#part + 1] = list[j] end
    f(part)
  end
end

local out = {0}
local ready, data, max, later = {}, {}, {}, {}
local claimed, cleaned = {}, false
for i = 0, n - 1 do
  local b = 3 + i * 6
  local id, payload, delay, m = ARGV[b], ARGV[b + 1], tonumber(ARGV[b + 2]), ARGV[b + 3]
  local dkey = ARGV[b + 4]
  local holder = false
  if dkey ~= '' then
    if not cleaned then
      -- drop a few expired dedupe keys (bounded, amortised over adds that use dedupe)
      cleaned = true
      local expired = redis.call('ZRANGE', KEYS[7], '-inf', clock(), 'BYSCORE', 'LIMIT', 0, 16)
      for _, k in ipairs(expired) do
        redis.call('ZREM', KEYS[7], k)
        redis.call('HDEL', KEYS[8], k)
      end
    end
    holder = claimed[dkey] or false
    if not holder then
      local exp = redis.call('ZSCORE', KEYS[7], dkey)
      if exp and tonumber(exp) > clock() then holder = redis.call('HGET', KEYS[8], dkey) end
    end
    if not holder then
      redis.call('ZADD', KEYS[7], clock() + tonumber(ARGV[b + 5]), dkey)
      redis.call('HSET', KEYS[8], dkey, id)
      claimed[dkey] = id
    end
  end
  if holder then
    out[#out + 1] = holder
  else
    if delay > 0 then
      data[#data + 1] = id
      data[#data + 1] = payload
      max[#max + 1] = id
      max[#max + 1] = m
      later[#later + 1] = clock() + delay
      later[#later + 1] = id
    else
      ready[#ready + 1] = id .. '|' .. m .. '|' .. payload
    end
    out[#out + 1] = id
  end
end

-- pairs stay together: CHUNK is even
each(data, function(part) redis.call('HSET', KEYS[5], unpack(part)) end)
each(max, function(part) redis.call('HSET', KEYS[6], unpack(part)) end)
each(later, function(part) redis.call('ZADD', KEYS[2], unpack(part)) end)
each(ready, function(part) redis.call('LPUSH', KEYS[1], unpack(part)) end)

local added = #ready + #later / 2
if added > 0 then
  redis.call('ZADD', KEYS[3], 0, '0')
  redis.call('HINCRBY', KEYS[4], 'added', added)
end
if not layout then redis.call('HSET', KEYS[4], 'layout', ARGV[1]) end
return out
