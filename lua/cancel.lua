--[[
  cancel — stop a job for good: waiting, delayed or active.

  A waiting job leaves wait (LREM: O(N) in the jobs waiting), a delayed one leaves
  delayed, an active one leaves active and loses its lease at once (O(log N)): its
  holder's next extend, complete or fail finds no lease under its token and changes
  nothing, so the job is neither acknowledged nor retried, and no sweep reclaims it.
  The job's id goes to cancelled (the holder's worker reads it there to tell a cancel
  from a lost lease). Its data is kept while it is among the newest `keep` cancelled
  jobs (meta.keep, the keepCompleted recorded by complete), else deleted; cancelled
  remembers the ids of at least the newest 1000 cancels. A dedupe key held until the
  job finishes is freed. The job's data is its payload, maxAttempts, counts, last error,
  dedupe key, progress and timeout.

  KEYS[1] wait      LIST  ids ready to run
  KEYS[2] active    ZSET  id -> lease deadline
  KEYS[3] delayed   ZSET  id -> due time
  KEYS[4] dead      ZSET  id -> time of death
  KEYS[5] done      ZSET  id -> completion time
  KEYS[6] cancelled ZSET  id -> time of the cancel (ms)
  KEYS[7] meta      HASH  layout version, keep, counter cancelled
  KEYS[8] lease     HASH  id -> fencing token
  KEYS[9] data      HASH  id -> payload
  KEYS[10] max      HASH  id -> maxAttempts
  KEYS[11] fails    HASH  id -> failures
  KEYS[12] lost     HASH  id -> lost leases
  KEYS[13] err      HASH  id -> last error
  KEYS[14] dkey     HASH  id -> dedupe key
  KEYS[15] progress HASH  id -> latest progress
  KEYS[16] timeout  HASH  id -> timeoutMs
  KEYS[17] dedupe   ZSET  dedupe key -> expiry (+inf: until finished)
  KEYS[18] dedupeid HASH  dedupe key -> id of the job holding it
  KEYS[19] holder   HASH  id -> holder of the lease (deleted with it)
  KEYS[20] events   STREAM job events: one `cancelled` entry (field was), see include/events

  ARGV[1] layout  layout version
  ARGV[2] id      the job id

  Returns
    {1, was}   cancelled; was: waiting, delayed or active
    {0}        nothing done: no such job, or it already finished (completed, dead, cancelled)
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include dedupe
--!include events

local meta = redis.call('HMGET', KEYS[7], 'layout', 'keep')
if meta[1] and meta[1] ~= ARGV[1] then return {'LAYOUT_MISMATCH', meta[1]} end

local id = ARGV[2]
if redis.call('HEXISTS', KEYS[9], id) == 0 then return {0} end
for i = 4, 6 do
  if redis.call('ZSCORE', KEYS[i], id) then return {0} end
end

-- the first write removes the job from its state: it never grows memory, so a cancel
-- runs even with maxmemory reached and noeviction
local was
if redis.call('ZREM', KEYS[2], id) == 1 then
  was = 'active'
  redis.call('HDEL', KEYS[8], id)
  redis.call('HDEL', KEYS[19], id)
elseif redis.call('ZREM', KEYS[3], id) == 1 then
  was = 'delayed'
elseif redis.call('LREM', KEYS[1], 0, id) > 0 then
  was = 'waiting'
else
  return {0}
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[6], now, id)
redis.call('HINCRBY', KEYS[7], 'cancelled', 1)
free_dedupe(KEYS[14], KEYS[17], KEYS[18], {id})
emit_event(KEYS[20], events_maxlen(KEYS[7]), 'cancelled', id, 'was', was)

local function drop_data(ids)
  for k = 9, 16 do redis.call('HDEL', KEYS[k], unpack(ids)) end
end
local keep = tonumber(meta[2]) or 0
local count = redis.call('ZCARD', KEYS[6])
-- the job that this cancel pushed out of the newest `keep` loses its data
if count > keep then
  local out = redis.call('ZRANGE', KEYS[6], count - keep - 1, count - keep - 1)
  if #out > 0 then drop_data(out) end
end
-- ids beyond the newest max(keep, 1000) are forgotten, at most 2 per call (one is added)
local remember = keep > 1000 and keep or 1000
local excess = count - remember
if excess > 2 then excess = 2 end
if excess > 0 then
  local old = redis.call('ZPOPMIN', KEYS[6], excess)
  local oldIds = {}
  for i = 1, #old, 2 do oldIds[#oldIds + 1] = old[i] end
  drop_data(oldIds)
end
return {1, was}
