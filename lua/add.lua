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
for i = 0, n - 1 do
  local id = ARGV[3 + i * 6]
  if redis.call('HEXISTS', KEYS[5], id) == 1 then return {'DUPLICATE_ID', id} end
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- drop a few expired dedupe keys (bounded, amortised over adds)
local expired = redis.call('ZRANGE', KEYS[7], '-inf', now, 'BYSCORE', 'LIMIT', 0, 16)
for _, k in ipairs(expired) do
  redis.call('ZREM', KEYS[7], k)
  redis.call('HDEL', KEYS[8], k)
end

local out = {0}
local added, woke = 0, false
for i = 0, n - 1 do
  local b = 3 + i * 6
  local id, payload, delay, max = ARGV[b], ARGV[b + 1], tonumber(ARGV[b + 2]), ARGV[b + 3]
  local dkey, dttl = ARGV[b + 4], tonumber(ARGV[b + 5])
  local holder = false
  if dkey ~= '' then
    local exp = redis.call('ZSCORE', KEYS[7], dkey)
    if exp and tonumber(exp) > now then holder = redis.call('HGET', KEYS[8], dkey) end
  end
  if holder then
    out[#out + 1] = holder
  else
    if dkey ~= '' then
      redis.call('ZADD', KEYS[7], now + dttl, dkey)
      redis.call('HSET', KEYS[8], dkey, id)
    end
    redis.call('HSET', KEYS[5], id, payload)
    redis.call('HSET', KEYS[6], id, max)
    if delay > 0 then
      redis.call('ZADD', KEYS[2], now + delay, id)
    else
      redis.call('LPUSH', KEYS[1], id)
    end
    woke = true
    added = added + 1
    out[#out + 1] = id
  end
end

if woke then redis.call('ZADD', KEYS[3], 0, '0') end
if added > 0 then redis.call('HINCRBY', KEYS[4], 'added', added) end
if not layout then redis.call('HSET', KEYS[4], 'layout', ARGV[1]) end
return out
