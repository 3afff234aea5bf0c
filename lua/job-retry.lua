--[[
  job-retry — run a completed, cancelled or dead job again with fresh attempts: out of its
  set, its failures, lost leases, last error, result and progress deleted, at the back of
  ready, counted in meta.retried (as dead-retry). Only a job whose data is kept (retained,
  or dead) can run again.

  KEYS[1]  meta       HASH  layout version, counters
  KEYS[2]  events     STREAM job events
  KEYS[3]  receipts   HASH  request id -> the state the job was in (a call that acted)
  KEYS[4]  receiptsAt ZSET  request id -> time of a call that acted (trimmed by add and reserve)
  KEYS[5]  active     ZSET  id -> lease deadline
  KEYS[6]  dead       ZSET  id -> time of death
  KEYS[7]  done       ZSET  id -> completion time
  KEYS[8]  cancelled  ZSET  id -> time of the cancel
  KEYS[9]  lease      HASH  id -> fencing token
  KEYS[10] holder     HASH  id -> holder of the lease (a completed job's run's: deleted)
  KEYS[11] data       HASH  id -> payload
  KEYS[12] fails    HASH  id -> failures
  KEYS[13] lost     HASH  id -> lost leases
  KEYS[14] err      HASH  id -> last error
  KEYS[15] result   HASH  id -> result
  KEYS[16] progress HASH  id -> latest progress
  KEYS[17..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout     layout version
  ARGV[2] requestId  random, one per call: a re-sent call finds its receipt and answers the same
  ARGV[3] id         the job id

  Returns
    {1, was}  queued again; was: completed, cancelled or dead (a re-send answers the same);
              one `retried` event (field was)
    {'WRONG_STATE', 'retry', id, state, 'completed,cancelled,dead'}  nothing written
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
--!include events
--!include ready
--!include dead
--!include active
--!include job-state
--!include job-op

local k = {
  active = KEYS[5], dead = KEYS[6], done = KEYS[7], cancelled = KEYS[8], lease = KEYS[9], holder = KEYS[10],
  data = KEYS[11], receipts = KEYS[3], receiptsAt = KEYS[4],
}
local req, id = ARGV[2], ARGV[3]
local answered = op_done(k, req)
if answered then return answered end
local state = op_state(k, id)
-- a retained job leaves its set here; a dead one through dead_leave (include/dead)
local retained = ({completed = KEYS[7], cancelled = KEYS[8]})[state]
if not retained and state ~= 'dead' then return op_refuse('retry', id, state, 'completed,cancelled,dead') end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
op_record(k, req, now, state)
if retained then redis.call('ZREM', retained, id) else dead_leave({dead = KEYS[6]}, {id}) end
-- a completed job's holder entry (its run's start, lua/include/active.lua) goes with its result
if state == 'completed' then active_forget(k, {id}) end
for _, key in ipairs({KEYS[12], KEYS[13], KEYS[14], KEYS[15], KEYS[16]}) do redis.call('HDEL', key, id) end
ready_push({id}, false)
ready_wake()
redis.call('HINCRBY', KEYS[1], 'retried', 1)
emit_event(KEYS[2], events_maxlen(KEYS[1]), 'retried', id, 'was', state)
return {1, state}
