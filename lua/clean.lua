--[[
  clean — delete up to `limit` completed, cancelled or dead jobs that finished at least
  `olderThanMs` ago, oldest first, with every per-job field (result included); the client
  calls it until a call deletes fewer than its limit.

  The first write takes the jobs out of their set (ZREM: it never grows memory), so a
  clean runs with maxmemory reached and noeviction. Dead jobs deleted count in meta.purged
  (as dead-purge's); one `removed` event per 100 jobs (field was: the state). A re-sent
  call deletes the jobs old enough then, which a clean is asked to do anyway.

  KEYS[1]  dead      ZSET  id -> time of death
  KEYS[2]  done      ZSET  id -> completion time
  KEYS[3]  cancelled ZSET  id -> time of the cancel
  KEYS[4]  meta      HASH  layout version, counter purged
  KEYS[5]  events    STREAM job events
  KEYS[6]  data      HASH  id -> payload
  KEYS[7]  max       HASH  id -> maxAttempts
  KEYS[8]  fails     HASH  id -> failures
  KEYS[9]  lost      HASH  id -> lost leases
  KEYS[10] err       HASH  id -> last error
  KEYS[11] progress  HASH  id -> latest progress
  KEYS[12] timeout   HASH  id -> timeoutMs
  KEYS[13] dkey      HASH  id -> dedupe key
  KEYS[14] result    HASH  id -> result
  KEYS[15] backoff   HASH  id -> the job's own backoff
  KEYS[16] errors   HASH  id -> the errors of its failed attempts (dropped with the job)
  KEYS[17] logs     HASH  id -> its log lines (likewise)
  KEYS[18] holder   HASH  id -> the holder entry of a completed job's run (dropped with it)
  KEYS[19..] ready   READY_KEYS (src/engine/model/Keys.ts): read by drop_jobs for the per-job
                     hashes lua/include/ready.lua keeps (a job's priority)

  ARGV[1] layout       layout version
  ARGV[2] state        completed | cancelled | dead
  ARGV[3] olderThanMs  only jobs that finished at least this long ago (ms, Redis clock)
  ARGV[4] limit        the most jobs this call deletes (1 .. 5000)

  Returns
    {deleted, jobs left in the state}
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
    {'OUT_OF_RANGE', 'clean', 'limit', value, 5000}  nothing written
]]
local META = KEYS[4]
--!include layout-guard
--!include events
--!include ready
--!include finish
--!include dead

local limit = tonumber(ARGV[4])
if not limit or limit < 1 or limit > 5000 then return {'OUT_OF_RANGE', 'clean', 'limit', ARGV[4], 5000} end
local state = ARGV[2]
-- a retained job leaves its set here, a dead one through dead_leave (include/dead)
local retained = ({completed = KEYS[2], cancelled = KEYS[3]})[state]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- a cancelled id kept without its data (below 0, CANCELLED_GONE in include/finish) is not listed: not cleaned
local low = state == 'cancelled' and 0 or '-inf'
local DEAD = {dead = KEYS[1]}
local ids
if state == 'dead' then
  ids = dead_aged(DEAD, low, now - tonumber(ARGV[3]), limit)
else
  ids = redis.call('ZRANGE', retained, low, now - tonumber(ARGV[3]), 'BYSCORE', 'LIMIT', 0, limit)
end
if #ids > 0 then
  local job = {
    data = KEYS[6], max = KEYS[7], fails = KEYS[8], lost = KEYS[9], err = KEYS[10], progress = KEYS[11],
    timeout = KEYS[12], dkey = KEYS[13], result = KEYS[14], backoff = KEYS[15], errors = KEYS[16], logs = KEYS[17],
    holder = KEYS[18],
  }
  for i = 1, #ids, 500 do
    local part = {unpack(ids, i, math.min(i + 499, #ids))}
    if retained then redis.call('ZREM', retained, unpack(part)) else dead_leave(DEAD, part) end
    drop_jobs(job, part, true)
  end
  if state == 'dead' then redis.call('HINCRBY', KEYS[4], 'purged', #ids) end
  emit_many(KEYS[5], events_maxlen(KEYS[4]), 'removed', ids, nil, nil, 'was', state)
end
return {#ids, state == 'dead' and dead_count_from(DEAD, low) or redis.call('ZCOUNT', retained, low, '+inf')}
