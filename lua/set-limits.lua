--[[
  set-limits — set or clear a queue-wide flow limit (enforced by reserve, see include/flow), or
  lift a RateLimited hold.

  KEYS[1] meta    HASH  layout version; rateMax, ratePer, rateCount, concurrency, heldUntil; a
                  limit set here is this queue's own: its rateTotal or concurrencyTotal (a
                  partitioned queue's split, see flow-share) goes
  KEYS[2] rate    LIST  the rate limit's window (emptied with the rate limit)
  KEYS[3..] ready READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                  marker; read and written only by lua/include/ready.lua

  ARGV[1] layout  layout version
  ARGV[2] limit   "rate", "concurrency" or "hold" (a RateLimited hold: only cleared)
  ARGV[3] value   rate: max (jobs leased per window); concurrency: the cap; "" clears the limit
                  (clearing the rate limit lifts a hold too)
  ARGV[4] perMs   rate: the window in ms (ignored otherwise)
  The client checks the values (src/engine/model/Flow.ts); the same call sent again
  changes nothing more. A changed rate limit keeps the window's leases counted.

  Returns
    {1, lifted}  set or cleared (the marker is set when jobs are ready: a raised limit may
                 let idle workers lease them); lifted 1 when a hold was in force and is gone
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include ready

local META = KEYS[1]
--!include layout-guard
if not layout then redis.call('HSET', KEYS[1], 'layout', ARGV[1]) end
local lifted = 0
-- lift_hold(): delete meta.heldUntil; lifted = 1 when it was still in force
local function lift_hold()
  local held = tonumber(redis.call('HGET', KEYS[1], 'heldUntil'))
  if not held then return end
  local t = redis.call('TIME')
  if held > tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then lifted = 1 end
  redis.call('HDEL', KEYS[1], 'heldUntil')
end
if ARGV[2] == 'rate' then
  if ARGV[3] == '' then
    redis.call('HDEL', KEYS[1], 'rateMax', 'ratePer', 'rateCount', 'rateTotal')
    lift_hold()
    -- emptied with RPOP (a command the documented ACL grants; DEL is not granted)
    local n = redis.call('LLEN', KEYS[2])
    if n > 0 then redis.call('RPOP', KEYS[2], n) end
  else
    redis.call('HSET', KEYS[1], 'rateMax', ARGV[3], 'ratePer', ARGV[4])
    redis.call('HDEL', KEYS[1], 'rateTotal')
  end
elseif ARGV[2] == 'concurrency' then
  if ARGV[3] == '' then redis.call('HDEL', KEYS[1], 'concurrency', 'concurrencyTotal')
  else redis.call('HSET', KEYS[1], 'concurrency', ARGV[3]) redis.call('HDEL', KEYS[1], 'concurrencyTotal') end
elseif ARGV[2] == 'hold' and ARGV[3] == '' then
  lift_hold()
else
  return redis.error_reply('ERR set-limits: limit (ARGV[2]) must be "rate", "concurrency" or "hold" (cleared only), got ' .. ARGV[2])
end
ready_wake_if_any()
return {1, lifted}
