--[[
  unschedule — remove a schedule: no tick after this call makes a job (a tick that ran
  before it made its job, which stays). Jobs it made are left as they are.

  KEYS[1] meta       HASH  layout version
  KEYS[2] schedules  HASH  name -> the schedule (JSON)
  KEYS[3] schedAt    ZSET  name -> its next tick (ms)

  ARGV[1] layout  layout version
  ARGV[2] name    the schedule's name

  Returns
    {1}  removed
    {0}  there was no such schedule (nothing changed)
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
redis.call('ZREM', KEYS[3], ARGV[2])
return {redis.call('HDEL', KEYS[2], ARGV[2])}
