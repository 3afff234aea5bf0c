--[[
  get-job — everything the queue knows about one job, by id (read-only).

  O(1) hash reads plus at most five O(log N) ZSCOREs, in every state: a waiting job's
  payload is in data since add writes it there.

  KEYS[1] active    ZSET  id -> lease deadline (ms)
  KEYS[2] delayed   ZSET  id -> due time (ms)
  KEYS[3] dead      ZSET  id -> time of death (ms)
  KEYS[4] done      ZSET  id -> completion time (retained completed jobs)
  KEYS[5] cancelled ZSET  id -> time of the cancel (ms)
  KEYS[6] data      HASH  id -> payload
  KEYS[7] max       HASH  id -> maxAttempts (no field: 3, the default)
  KEYS[8] lease     HASH  id -> fencing token of the current lease
  KEYS[9] fails     HASH  id -> handler failures
  KEYS[10] lost     HASH  id -> lost leases
  KEYS[11] err      HASH  id -> last error (JSON)
  KEYS[12] result   HASH  id -> result of a retained completed job
  KEYS[13] dkey     HASH  id -> dedupe key
  KEYS[14] holder   HASH  id -> "<workerId>|<startedAt>|<until>" of an active job's lease
  KEYS[15] progress HASH  id -> latest progress (JSON)
  KEYS[16] timeout  HASH  id -> the job's own timeoutMs
  KEYS[17] meta     HASH  layout version

  ARGV[1] layout  layout version
  ARGV[2] id      the job id

  Returns
    {1, state, payload, maxAttempts, failures, lostLeases, error|false, result|false,
     dedupeKey|false, score|false, token|false, holder|false, progress|false, timeoutMs|false}
      state: waiting, delayed, active, completed, dead or cancelled
      score: active: lease deadline; delayed: due time; completed, dead, cancelled: when it
             finished (ms, Redis clock); waiting: false
      token: the fencing token of an active job's lease
      holder: an active job's holder entry ("<workerId>|<startedAt>|<until>")
      timeoutMs: the job's own timeout (false: none, the worker's default applies)
    {0}                         no job with this id (never added, or finished and not retained)
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[17]
--!include layout-guard

local id = ARGV[2]
local payload = redis.call('HGET', KEYS[6], id)
if not payload then return {0} end

local state, score = 'waiting', false
local sets = {{KEYS[1], 'active'}, {KEYS[2], 'delayed'}, {KEYS[3], 'dead'}, {KEYS[4], 'completed'}, {KEYS[5], 'cancelled'}}
for _, s in ipairs(sets) do
  score = redis.call('ZSCORE', s[1], id)
  if score then
    state = s[2]
    break
  end
end
local token, holder = false, false
if state == 'active' then
  token = redis.call('HGET', KEYS[8], id)
  holder = redis.call('HGET', KEYS[14], id)
end
return {
  1, state, payload,
  redis.call('HGET', KEYS[7], id) or '3',
  redis.call('HGET', KEYS[9], id) or '0',
  redis.call('HGET', KEYS[10], id) or '0',
  redis.call('HGET', KEYS[11], id),
  redis.call('HGET', KEYS[12], id),
  redis.call('HGET', KEYS[13], id),
  score,
  token,
  holder,
  redis.call('HGET', KEYS[15], id),
  redis.call('HGET', KEYS[16], id),
}
