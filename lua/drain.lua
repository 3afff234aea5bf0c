--[[
  drain — remove up to `limit` waiting jobs (and, with delayed, delayed jobs once no job
  waits) for good, with every per-job field; the client calls it until nothing is left.

  The first write takes the jobs out of ready (RPOP / ZPOPMIN: they never grow memory), so
  a drain runs with maxmemory reached and noeviction. A dedupe key a job held until it
  finished is freed (as cancel does); a key held for a TTL is left to expire. Counted in
  meta.removed; one `removed` event per 100 jobs (field was: waiting or delayed). A re-sent
  call removes what is waiting then, which a drain is asked to do anyway.

  KEYS[1]  meta     HASH  layout version, counter removed
  KEYS[2]  events   STREAM job events
  KEYS[3]  dedupe   ZSET  dedupe key -> expiry (+inf: until finished)
  KEYS[4]  dedupeid HASH  dedupe key -> id of the job holding it
  KEYS[5]  data     HASH  id -> payload
  KEYS[6]  max      HASH  id -> maxAttempts
  KEYS[7]  fails    HASH  id -> failures
  KEYS[8]  lost     HASH  id -> lost leases
  KEYS[9]  err      HASH  id -> last error
  KEYS[10] progress HASH  id -> latest progress
  KEYS[11] timeout  HASH  id -> timeoutMs
  KEYS[12] dkey     HASH  id -> dedupe key
  KEYS[13] result   HASH  id -> result
  KEYS[14] backoff  HASH  id -> the job's own backoff
  KEYS[15] errors   HASH  id -> the errors of its failed attempts (dropped with the job)
  KEYS[16] logs     HASH  id -> its log lines (likewise)
  KEYS[17..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout   layout version
  ARGV[2] delayed  "1": delayed jobs too, "0": waiting jobs only
  ARGV[3] limit    the most jobs this call removes (1 .. 5000)

  Returns
    {removed waiting, removed delayed, jobs left to drain}
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
    {'OUT_OF_RANGE', 'drain', 'limit', value, 5000}  nothing written
]]
local META = KEYS[1]
--!include layout-guard
--!include dedupe
--!include events
--!include ready
--!include finish

local limit = tonumber(ARGV[3])
if not limit or limit < 1 or limit > 5000 then return {'OUT_OF_RANGE', 'drain', 'limit', ARGV[3], 5000} end
local withDelayed = ARGV[2] == '1'
local job = {
  data = KEYS[5], max = KEYS[6], fails = KEYS[7], lost = KEYS[8], err = KEYS[9], progress = KEYS[10],
  timeout = KEYS[11], dkey = KEYS[12], result = KEYS[13], backoff = KEYS[14], errors = KEYS[15], logs = KEYS[16],
}
local maxlen = nil
local function remove(ids, was)
  if #ids == 0 then return end
  free_dedupe(KEYS[12], KEYS[3], KEYS[4], ids)
  for i = 1, #ids, 500 do drop_jobs(job, {unpack(ids, i, math.min(i + 499, #ids))}, true) end
  redis.call('HINCRBY', KEYS[1], 'removed', #ids)
  maxlen = maxlen or events_maxlen(KEYS[1])
  emit_many(KEYS[2], maxlen, 'removed', ids, nil, nil, 'was', was)
end

local waiting = ready_drain(limit)
local delayed = {}
if withDelayed and #waiting < limit then delayed = delayed_drain(limit - #waiting) end
remove(waiting, 'waiting')
remove(delayed, 'delayed')
local left = ready_count()
if withDelayed then left = left + delayed_count() end
return {#waiting, #delayed, left}
