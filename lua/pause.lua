--[[
  pause — stop handing out jobs: reserve leases nothing while meta.paused is set.
  Running jobs go on (they are extended, completed, failed as usual); adds, retries and
  delayed jobs still go into wait; sweeps still run.

  KEYS[1] meta    HASH    layout version, paused
  KEYS[2] events  STREAM  job events: one `paused` entry (id "") when it was not paused

  ARGV[1] layout  layout version

  Returns
    {1}  paused now
    {0}  it was paused already (nothing changed)
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include events

local META = KEYS[1]
--!include layout-guard
if not layout then redis.call('HSET', KEYS[1], 'layout', ARGV[1]) end
if redis.call('HSETNX', KEYS[1], 'paused', '1') == 0 then return {0} end
emit_event(KEYS[2], events_maxlen(KEYS[1]), 'paused', '')
return {1}
