--[[
  job-peek — one job by id as a person looks at it (the dashboard's job page): what get-job
  answers, with the payload, result, error and progress cut inside Redis so a reading's
  cost is bounded by bytes (read-only). A value longer than loadMax, or than what is left
  of budget, is not loaded: only its length comes back. With hide = 1 neither payload nor
  result is loaded.

  O(1) hash reads plus at most five O(log N) ZSCOREs, in every state.

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

  ARGV[1] layout   layout version
  ARGV[2] id       the job id
  ARGV[3] cut      the most bytes of one value returned
  ARGV[4] loadMax  the longest value loaded (a longer one: its length only)
  ARGV[5] budget   the most bytes of values this call loads in all
  ARGV[6] hide     1: neither payload nor result is loaded (lengths only), else 0

  Returns
    {1, state, payload|false, maxAttempts, failures, lostLeases, error|false, result|false,
     dedupeKey|false, score|false, token|false, holder|false, progress|false, timeoutMs|false,
     payloadLength, resultLength, errorLength, progressLength}
      the first 14 as get-job's, except that payload, result, error and progress are their
      first `cut` bytes, false when missing or not loaded (their lengths say which)
    {0}                         no job with this id (never added, or finished and not retained)
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[17]
--!include layout-guard
local PEEK_CUT = tonumber(ARGV[3])
local PEEK_LOAD_MAX = tonumber(ARGV[4])
local PEEK_BUDGET = tonumber(ARGV[5])
--!include peek
local hide = ARGV[6] == '1'

local id = ARGV[2]
if redis.call('HEXISTS', KEYS[6], id) == 0 then return {0} end
local payload, plen = peek(KEYS[6], id, hide)
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
local err, elen = peek(KEYS[11], id, false)
local result, rlen = peek(KEYS[12], id, hide)
local progress, glen = peek(KEYS[15], id, false)
return {
  1, state, payload,
  redis.call('HGET', KEYS[7], id) or '3',
  redis.call('HGET', KEYS[9], id) or '0',
  redis.call('HGET', KEYS[10], id) or '0',
  err,
  result,
  redis.call('HGET', KEYS[13], id),
  score,
  token,
  holder,
  progress,
  redis.call('HGET', KEYS[16], id),
  plen, rlen, elen, glen,
}
