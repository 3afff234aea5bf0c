--[[
  set-limits — set or clear a queue-wide flow limit (enforced by reserve, see include/flow).

  KEYS[1] meta    HASH  layout version; rateMax, ratePer, rateCount, concurrency
  KEYS[2] rate    LIST  the rate limit's window (emptied with the rate limit)
  KEYS[3..] ready READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                  marker; read and written only by lua/include/ready.lua

  ARGV[1] layout  layout version
  ARGV[2] limit   "rate" or "concurrency"
  ARGV[3] value   rate: max (jobs leased per window); concurrency: the cap; "" clears the limit
  ARGV[4] perMs   rate: the window in ms (ignored otherwise)
  The client checks the values (src/engine/model/Flow.ts); the same call sent again
  changes nothing more. A changed rate limit keeps the window's leases counted.

  Returns
    {1}  set or cleared (the marker is set when jobs are ready: a raised limit may let
         idle workers lease them)
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include ready

local META = KEYS[1]
--!include layout-guard
if not layout then redis.call('HSET', KEYS[1], 'layout', ARGV[1]) end
if ARGV[2] == 'rate' then
  if ARGV[3] == '' then
    redis.call('HDEL', KEYS[1], 'rateMax', 'ratePer', 'rateCount')
    -- emptied with RPOP (a command the documented ACL grants; DEL is not granted)
    local n = redis.call('LLEN', KEYS[2])
    if n > 0 then redis.call('RPOP', KEYS[2], n) end
  else
    redis.call('HSET', KEYS[1], 'rateMax', ARGV[3], 'ratePer', ARGV[4])
  end
elseif ARGV[2] == 'concurrency' then
  if ARGV[3] == '' then redis.call('HDEL', KEYS[1], 'concurrency')
  else redis.call('HSET', KEYS[1], 'concurrency', ARGV[3]) end
else
  return redis.error_reply('ERR set-limits: limit (ARGV[2]) must be "rate" or "concurrency", got ' .. ARGV[2])
end
ready_wake_if_any()
return {1}
