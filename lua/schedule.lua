--[[
  schedule — create or replace a schedule (recurring jobs). The schedule is kept in
  `schedules` and its next tick in `schedAt`; the sweep makes each tick's job (tick.lua).
  A replace that keeps the timing (the same `key`) keeps the next tick, so a process that
  sets its schedules at every start does not move them; another timing takes `next`.
  The same call sent twice writes the same: a re-send changes nothing more.

  KEYS[1] meta       HASH  layout version
  KEYS[2] schedules  HASH  name -> the schedule (JSON: name, key, every or cron and tz,
                           catchUp, payload, maxAttempts, timeoutMs)
  KEYS[3] schedAt    ZSET  name -> its next tick (ms, Redis clock)

  ARGV[1] layout    layout version
  ARGV[2] name      the schedule's name
  ARGV[3] key       its timing as one string (every:<ms> or cron:<tz>:<expression>)
  ARGV[4] schedule  the schedule (JSON), whose field "key" is ARGV[3]
  ARGV[5] next      its first tick (ms), computed by the caller from the Redis time
  ARGV[6] max       the most schedules one queue holds

  Returns
    {1, next}  created; its first tick (ms)
    {2, next}  replaced, with another timing: its next tick is ARGV[5]
    {3, next}  replaced, with the same timing: its next tick kept
    {'TOO_MANY_SCHEDULES', name, max}  a new schedule on a queue holding `max`; nothing written
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
local name = ARGV[2]
local old = redis.call('HGET', KEYS[2], name)
if not old and redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[6]) then
  return {'TOO_MANY_SCHEDULES', name, ARGV[6]}
end
if not layout then redis.call('HSET', META, 'layout', ARGV[1]) end
redis.call('HSET', KEYS[2], name, ARGV[4])
local kept = old and redis.call('ZSCORE', KEYS[3], name)
if kept and cjson.decode(old).key == ARGV[3] then return {3, tonumber(kept)} end
redis.call('ZADD', KEYS[3], ARGV[5], name)
return {old and 2 or 1, tonumber(ARGV[5])}
