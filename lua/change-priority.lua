--[[
  change-priority — give a waiting or delayed job a new priority.

  A waiting job moves to the back of its new priority, or with lifo to its front (one of
  priority 0 is found in wait with LREM: O(N) in the jobs of priority 0 waiting; any other in
  O(log N)); a job already of that priority keeps its place, unless lifo. A delayed job stays
  delayed: the priority applies when it becomes due (at the back: lifo is for a waiting job,
  as add's). A re-sent call finds its receipt and changes nothing.

  KEYS[1] meta      HASH  layout version
  KEYS[2] data      HASH  id -> payload (a job without one does not exist)
  KEYS[3] active    ZSET  id -> lease deadline
  KEYS[4] dead      ZSET  id -> time of death
  KEYS[5] done      ZSET  id -> completion time
  KEYS[6] cancelled ZSET  id -> time of the cancel
  KEYS[7] lease     HASH  id -> fencing token (job_state)
  KEYS[8] holder    HASH  id -> holder of the lease (job_state)
  KEYS[9] receipts HASH  request id -> the reply of a call that acted (its receipt)
  KEYS[10] receiptsAt ZSET  request id -> its time (trimmed by add and reserve, include/receipts)
  KEYS[11..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout    layout version
  ARGV[2] id        the job
  ARGV[3] priority  the new priority, 0 to 1,000,000 (checked by the client)
  ARGV[4] requestId random, one per call ("" = none): a re-sent call finds its receipt and answers the same
  ARGV[5] lifo      "1" = to the front of the priority (a waiting job), "0" = to its back

  Returns
    {1, was}                          done; was: waiting or delayed
    {0, state}                        not moved: the job is active, completed, dead or
                                      cancelled, or `missing` (no such job); nothing written
    A re-send of a call that moved the job (its receipt) answers the same {1, was}.
    {'LAYOUT_MISMATCH', found}        layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
--!include ready
--!include job-state
--!include receipts

local id, priority = ARGV[2], tonumber(ARGV[3])
local req = ARGV[4] or ''
local again = receipt_again(KEYS[9], KEYS[10], req)
if again then return again end
if redis.call('HEXISTS', KEYS[2], id) == 0 then return {0, 'missing'} end
local state = job_state({
  active = KEYS[3], dead = KEYS[4], done = KEYS[5], cancelled = KEYS[6], lease = KEYS[7], holder = KEYS[8],
}, id)
if state == 'delayed' then
  ready_set_priority({id, ARGV[3]})
  return receipt_keep(KEYS[9], KEYS[10], req, {1, 'delayed'})
end
if state ~= 'waiting' or ready_move(id, priority, ARGV[5] == '1') == 0 then return {0, state} end
return receipt_keep(KEYS[9], KEYS[10], req, {1, 'waiting'})
