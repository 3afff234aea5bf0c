--[[
  cancel — stop a job for good: waiting, delayed or active.

  A waiting job leaves wait (LREM: O(N) in the jobs waiting), a delayed one leaves
  delayed, an active one leaves active and loses its lease at once (O(log N)): its
  holder's next extend, complete or fail finds no lease under its token and changes
  nothing, so the job is neither acknowledged nor retried, and no sweep reclaims it.
  The job's id goes to cancelled (the holder's worker reads it there to tell a cancel
  from a lost lease). Its data is kept while it is among the newest `keep` cancelled
  jobs (meta.keepCancelled, set by queue.setRetention; default 1000), else deleted (a keep of
  0: this job's at once; then the oldest 2 beyond keep, so a lowered keep catches up); cancelled
  remembers the ids of at least the newest 1000 cancels, those without data unlisted. A dedupe key held until the
  job finishes is freed. The job's data is its payload, maxAttempts, counts, last error,
  dedupe key, progress and timeout.

  KEYS[1] active    ZSET  id -> lease deadline
  KEYS[2] dead      ZSET  id -> time of death
  KEYS[3] done      ZSET  id -> completion time
  KEYS[4] cancelled ZSET  id -> time of the cancel (ms)
  KEYS[5] meta      HASH  layout version, keepCancelled, counter cancelled
  KEYS[6] lease     HASH  id -> fencing token
  KEYS[7] data      HASH  id -> payload
  KEYS[8]  max      HASH  id -> maxAttempts
  KEYS[9]  fails    HASH  id -> failures
  KEYS[10] lost     HASH  id -> lost leases
  KEYS[11] err      HASH  id -> last error
  KEYS[12] dkey     HASH  id -> dedupe key
  KEYS[13] progress HASH  id -> latest progress
  KEYS[14] timeout  HASH  id -> timeoutMs
  KEYS[15] dedupe   ZSET  dedupe key -> expiry (+inf: until finished)
  KEYS[16] dedupeid HASH  dedupe key -> id of the job holding it
  KEYS[17] holder   HASH  id -> holder of the lease (deleted with it)
  KEYS[18] events   STREAM job events: one `cancelled` entry (field was), see include/events,
                          then `drained` (id "") when no job is left waiting or active
  KEYS[19] backoff  HASH  id -> the job's own backoff (dropped with its data)
  KEYS[20] receipts  HASH  request id -> the reply of a call that acted (its receipt)
  KEYS[21] receiptsAt ZSET  request id -> its time (trimmed by add and reserve, include/receipts)
  KEYS[22] errors   HASH  id -> the errors of its failed attempts (dropped with the job)
  KEYS[23] logs     HASH  id -> its log lines (likewise)
  KEYS[24..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout  layout version
  ARGV[2] id      the job id
  ARGV[3] requestId  random, one per call ("" = none): a re-sent call finds its receipt and answers the same
  ARGV[4] children   "cancel" (or absent): a parent waiting for children has its pending children
                     cancelled too, those no other parent waits on, by the sweep in bounded pages
                     (lua/include/deps-cascade.lua); "keep": they stay

  Returns
    {1, was}   cancelled; was: waiting, delayed, active or waiting-children (a parent waiting for
               its children: lua/include/deps.lua; its own parents get a note in the outbox; its
               children are queued for the cascade, ARGV[4])
    {0}        nothing done: no such job, or it already finished (completed, dead, cancelled)
    A re-send of a call that cancelled (its receipt) answers the same {1, was}.
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include ready
--!include finish
--!include receipts
--!include cancel-job

local meta = redis.call('HMGET', KEYS[5], 'layout', 'keepCancelled')
if meta[1] and meta[1] ~= ARGV[1] and meta[1] ~= '1' then return {'LAYOUT_MISMATCH', meta[1]} end
local req = ARGV[3] or ''
local again = receipt_again(KEYS[20], KEYS[21], req)
if again then return again end

local id = ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local maxlen = events_maxlen(KEYS[5])
local was = cancel_job({
  active = KEYS[1], lease = KEYS[6], holder = KEYS[17], dead = KEYS[2], done = KEYS[3], cancelled = KEYS[4],
  data = KEYS[7], meta = KEYS[5], dkey = KEYS[12], dedupe = KEYS[15], dedupeid = KEYS[16], events = KEYS[18],
}, id, now, maxlen, ARGV[4] ~= 'keep')
if not was then return {0} end

local job = {
  data = KEYS[7], max = KEYS[8], fails = KEYS[9], lost = KEYS[10], err = KEYS[11], dkey = KEYS[12],
  progress = KEYS[13], timeout = KEYS[14], backoff = KEYS[19], errors = KEYS[22], logs = KEYS[23],
}
cancel_retain(job, KEYS[4], tonumber(meta[2]) or 1000, id, now)
return receipt_keep(KEYS[20], KEYS[21], req, {1, was})
