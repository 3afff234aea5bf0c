--!include job-state
-- job-op: what an operator's call on one job shares (promote, reschedule, job-retry,
-- update-payload): the job's state, the refusal naming it, and the receipt that makes a
-- re-sent call answer what the first one did instead of acting twice.
-- The script sets `op` (its name) and
-- `k`, a table of key names: active, dead, done, cancelled, lease, holder, data,
-- receipts, receiptsAt.
--   receiptsAt  ZSET request id -> time (ms), the calls that acted (trimmed by add and
--               reserve after RECEIPT_WINDOW_MS, lua/include/receipts.lua)
--   receipts    HASH request id -> the state the job was in when that call acted

-- op_state(k, id): the state of the job `id`, or 'unknown' when it has no data (never
--   added, deleted, or finished and no longer retained).
local function op_state(k, id)
  if redis.call('HEXISTS', k.data, id) == 0 then return 'unknown' end
  return (job_state(k, id))
end

-- op_done(k, req): the reply of a call `req` that acted already ({1, was}), or false.
local function op_done(k, req)
  if not redis.call('ZSCORE', k.receiptsAt, req) then return false end
  return {1, redis.call('HGET', k.receipts, req) or ''}
end

-- op_record(k, req, now, was): record that the call `req` acted on a job that was `was`.
local function op_record(k, req, now, was)
  redis.call('ZADD', k.receiptsAt, now, req)
  redis.call('HSET', k.receipts, req, was)
end

-- op_refuse(op, id, state, allowed): the refusal of a job in a state the call cannot act on.
local function op_refuse(op, id, state, allowed)
  return {'WRONG_STATE', op, id, state, allowed}
end
