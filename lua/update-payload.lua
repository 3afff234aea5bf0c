--[[
  update-payload — replace the payload of a waiting, delayed or dead job (the next run, or
  a retry, reads the new one); a traced job keeps the creation context stored in front of
  its payload. O(log N).

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
  ARGV[4] payload    the new payload (JSON text)

  Returns
    {1, was}  replaced; was: waiting, delayed or dead (a re-send answers the same); one
              `updated` event
    {'WRONG_STATE', 'updatePayload', id, state, 'waiting,delayed,dead'}  nothing written
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
if state ~= 'waiting' and state ~= 'delayed' and state ~= 'dead' then
  return op_refuse('updatePayload', id, state, 'waiting,delayed,dead')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
op_record(k, req, now, state)
-- a traced job keeps its creation context in front of the payload, and a named job its name
-- after it (src/engine/model/Carrier.ts: "~tp:<55>;" then "~n:<name>\0")
local old = redis.call('HGET', KEYS[11], id)
local carried = ''
if string.sub(old, 1, 4) == '~tp:' and string.sub(old, 60, 60) == ';' then carried = string.sub(old, 1, 60) end
if string.sub(old, #carried + 1, #carried + 3) == '~n:' then
  local stop = string.find(old, '\0', #carried + 4, true)
  if stop then carried = string.sub(old, 1, stop) end
end
redis.call('HSET', KEYS[11], id, carried .. ARGV[4])
emit_event(KEYS[2], events_maxlen(KEYS[1]), 'updated', id)
return {1, state}
