--[[
  job-peek — one job by id as a person looks at it (the dashboard's job page): what get-job
  answers, with the payload, result, error and progress cut inside Redis so a reading's
  cost is bounded by bytes (read-only). A value longer than loadMax, or than what is left
  of budget, is not loaded: only its length comes back. With hide = 1 neither payload nor
  result is loaded.

  O(1) hash reads plus at most five O(log N) ZSCOREs, in every state.

  KEYS[1] active    ZSET  id -> lease deadline (ms)
  KEYS[2] dead      ZSET  id -> time of death (ms)
  KEYS[3] done      ZSET  id -> completion time (retained completed jobs)
  KEYS[4] cancelled ZSET  id -> time of the cancel (ms)
  KEYS[5] data      HASH  id -> payload
  KEYS[6] max       HASH  id -> maxAttempts (no field: 3, the default)
  KEYS[7] lease     HASH  id -> fencing token of the current lease
  KEYS[8] fails     HASH  id -> handler failures
  KEYS[9]  lost     HASH  id -> lost leases
  KEYS[10] err      HASH  id -> last error (JSON)
  KEYS[11] result   HASH  id -> result of a retained completed job
  KEYS[12] dkey     HASH  id -> dedupe key
  KEYS[13] holder   HASH  id -> "<workerId>|<token>|<startedAt>|<until>" (layout 1: no token) of an active job's lease (or
                    of the run that completed a retained job)
  KEYS[14] progress HASH  id -> latest progress (JSON)
  KEYS[15] timeout  HASH  id -> the job's own timeoutMs
  KEYS[16] meta     HASH  layout version
  KEYS[17] errors   HASH  id -> the errors of its failed attempts (one JSON object a line, the newest 10)
  KEYS[18] logs     HASH  id -> its log lines (`job.log`: one JSON string a line, the newest 100)
  KEYS[19..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout   layout version
  ARGV[2] id       the job id
  ARGV[3] cut      the most bytes of one value returned
  ARGV[4] loadMax  the longest value loaded (a longer one: its length only)
  ARGV[5] budget   the most bytes of values this call loads in all
  ARGV[6] hide     1: neither payload nor result is loaded (lengths only), else 0

  Returns
    {1, state, payload|false, maxAttempts, failures, lostLeases, error|false, result|false,
     dedupeKey|false, score|false, token|false, holder|false, progress|false, timeoutMs|false,
     payloadLength, resultLength, errorLength, progressLength, priority, addedAt|false,
     errors|false, errorsLength, logs|false, logsLength}
      the first 14 as get-job's, except that payload, result, error and progress are their
      first `cut` bytes, false when missing or not loaded (their lengths say which);
      priority, addedAt: as get-job's 15th and 16th
      errors, logs: as get-job's 17th and 18th, cut likewise (a cut one ends in a part line)
    {0}                         no job with this id (never added, or finished and not retained)
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[16]
--!include layout-guard
local PEEK_CUT = tonumber(ARGV[3])
local PEEK_LOAD_MAX = tonumber(ARGV[4])
local PEEK_BUDGET = tonumber(ARGV[5])
--!include peek
--!include ready
--!include job-state
local hide = ARGV[6] == '1'

local id = ARGV[2]
if redis.call('HEXISTS', KEYS[5], id) == 0 then return {0} end
local payload, plen = peek(KEYS[5], id, hide)
local k = {active = KEYS[1], dead = KEYS[2], done = KEYS[3], cancelled = KEYS[4], lease = KEYS[7], holder = KEYS[13]}
local state, score, token, holder = job_state(k, id)
if state == 'completed' then holder = active_holder(k, id) end
local err, elen = peek(KEYS[10], id, false)
local result, rlen = peek(KEYS[11], id, hide)
local progress, glen = peek(KEYS[14], id, false)
local errors, erlen = peek(KEYS[17], id, false)
local logs, llen = peek(KEYS[18], id, false)
return {
  1, state, payload,
  redis.call('HGET', KEYS[6], id) or '3',
  redis.call('HGET', KEYS[8], id) or '0',
  redis.call('HGET', KEYS[9], id) or '0',
  err,
  result,
  redis.call('HGET', KEYS[12], id),
  score,
  token,
  holder,
  progress,
  redis.call('HGET', KEYS[15], id),
  plen, rlen, elen, glen,
  ready_priorities({id})[1],
  ready_added_at(id),
  errors, erlen, logs, llen,
}
