--[[
  pause — stop handing out jobs: reserve leases nothing while meta.paused is set.
  Running jobs go on (they are extended, completed, failed as usual); adds, retries and
  delayed jobs still go into wait; sweeps still run.

  KEYS[1] meta  HASH  layout version, paused

  ARGV[1] layout version

  Returns
    {1}  paused now
    {0}  it was paused already (nothing changed)
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local layout = redis.call('HGET', KEYS[1], 'layout')
if layout and layout ~= ARGV[1] then return {'LAYOUT_MISMATCH', layout} end
if not layout then redis.call('HSET', KEYS[1], 'layout', ARGV[1]) end
return {redis.call('HSETNX', KEYS[1], 'paused', '1')}
