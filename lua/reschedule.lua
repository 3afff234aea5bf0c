--[[
  reschedule — run a waiting or delayed job `delayMs` from now (0: ready now, at the back).
  A waiting job leaves wait (O(N) in the jobs waiting, as cancel); a delayed one moves in
  delayed (O(log N)).

  KEYS[1]  meta       HASH  layout version, counters
  KEYS[2]  events     STREAM job events
  KEYS[3]  receipts   HASH  request id -> the state the job was in (a call that acted)
  KEYS[4]  receiptsAt ZSET  request id -> time of a call that acted (trimmed by add and reserve)
  KEYS[5]  active     ZSET  id -> lease deadline
  KEYS[6]  dead       ZSET  id -> time of death
  KEYS[7]  done       ZSET  id -> completion time
  KEYS[8]  cancelled  ZSET  id -> time of the cancel
  KEYS[9]  lease      HASH  id -> fencing token
  KEYS[10] holder     HASH  id -> holder of the lease
  KEYS[11] data       HASH  id -> payload
  KEYS[12..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout     layout version
  ARGV[2] requestId  random, one per call: a re-sent call finds its receipt and answers the same
  ARGV[3] id         the job id
  ARGV[4] delayMs    from now (ms, Redis clock); 0 = ready now

  Returns
    {1, was}  rescheduled; was: waiting or delayed (a re-send answers the same); one
              `rescheduled` event (field dueAt, ms)
    {'WRONG_STATE', 'reschedule', id, state, 'waiting,delayed'}  nothing written
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
--!include events
--!include ready
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
if state ~= 'waiting' and state ~= 'delayed' then return op_refuse('reschedule', id, state, 'waiting,delayed') end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local delay = tonumber(ARGV[4])
op_record(k, req, now, state)
if delay > 0 then
  if state == 'waiting' then ready_remove(id) end
  to_delayed({now + delay, id})
elseif state == 'delayed' then
  delayed_remove(id)
  ready_push({id}, false)
end
ready_wake()
emit_event(KEYS[2], events_maxlen(KEYS[1]), 'rescheduled', id, 'dueAt', now + delay)
return {1, state}
