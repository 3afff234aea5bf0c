--[[
  unschedule — remove a schedule: no tick after this call makes a job (a tick that ran
  before it made its job, which stays). Jobs it made are left as they are.

  KEYS[1] meta       HASH  layout version
  KEYS[2] schedules  HASH  name -> the schedule (JSON)
  KEYS[3] schedAt    ZSET  name -> its next tick (ms)
  KEYS[4] receipts   HASH  request id -> the reply of a call that acted (its receipt)
  KEYS[5] receiptsAt ZSET  request id -> its time (trimmed by add and reserve, include/receipts)

  ARGV[1] layout  layout version
  ARGV[2] name    the schedule's name
  ARGV[3] requestId  random, one per call ("" = none): a re-sent call finds its receipt and answers the same

  Returns
    {1}  removed
    {0}  there was no such schedule (nothing changed)
    A re-send of a call that removed it (its receipt) answers the same {1}.
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
--!include receipts
local req = ARGV[3] or ''
local again = receipt_again(KEYS[4], KEYS[5], req)
if again then return again end
redis.call('ZREM', KEYS[3], ARGV[2])
return receipt_keep(KEYS[4], KEYS[5], req, {redis.call('HDEL', KEYS[2], ARGV[2])})
