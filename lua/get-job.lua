--[[
  get-job — everything the queue knows about one job, by id (read-only).

  O(1) hash reads plus at most five O(log N) ZSCOREs, in every state: a waiting job's
  payload is in data since add writes it there.

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

  ARGV[1] layout  layout version
  ARGV[2] id      the job id

  Returns
    {1, state, payload, maxAttempts, failures, lostLeases, error|false, result|false,
     dedupeKey|false, score|false, token|false, holder|false, progress|false, timeoutMs|false,
     priority, addedAt|false, errors|false, logs|false}
      state: waiting, delayed, active, completed, dead or cancelled
      score: active: lease deadline; delayed: due time; completed, dead, cancelled: when it
             finished (ms, Redis clock); waiting: false
      token: the fencing token of an active job's lease
      holder: an active job's holder entry ("<workerId>|<startedAt>|<until>"), or a retained
              completed job's, of the run that completed it
      timeoutMs: the job's own timeout (false: none, the worker's default applies)
      priority: the job's priority (0, the default, when none is recorded)
      addedAt: when the job was added (ms), for an id that carries no time (a custom id, a
               tick's job); false for a ULID (its own time) or when none was recorded
      errors, logs: the errors of its failed attempts and its log lines (see KEYS), false for none
    {0}                         no job with this id (never added, or finished and not retained)
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[16]
--!include layout-guard
--!include ready
--!include job-state

local id = ARGV[2]
local payload = redis.call('HGET', KEYS[5], id)
if not payload then return {0} end

local k = {active = KEYS[1], dead = KEYS[2], done = KEYS[3], cancelled = KEYS[4], lease = KEYS[7], holder = KEYS[13]}
local state, score, token, holder = job_state(k, id)
-- a retained completed job keeps its run's holder entry (lua/include/active.lua): its start
if state == 'completed' then holder = active_holder(k, id) end
return {
  1, state, payload,
  redis.call('HGET', KEYS[6], id) or '3',
  redis.call('HGET', KEYS[8], id) or '0',
  redis.call('HGET', KEYS[9], id) or '0',
  redis.call('HGET', KEYS[10], id),
  redis.call('HGET', KEYS[11], id),
  redis.call('HGET', KEYS[12], id),
  score,
  token,
  holder,
  redis.call('HGET', KEYS[14], id),
  redis.call('HGET', KEYS[15], id),
  ready_priorities({id})[1],
  ready_added_at(id),
  redis.call('HGET', KEYS[17], id),
  redis.call('HGET', KEYS[18], id),
}
