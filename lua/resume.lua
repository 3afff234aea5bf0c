--[[
  resume — hand out jobs again after pause, and wake an idle worker when jobs wait
  (each worker that reserves sets the marker again while jobs are left, so the others
  wake in turn).

  KEYS[1] meta    HASH  layout version, paused
  KEYS[2] wait    LIST  ids ready to run
  KEYS[3] marker  ZSET  wake-up marker (member "0")
  KEYS[4] events  STREAM job events: one `resumed` entry (id "") when it was paused

  ARGV[1] layout  layout version

  Returns
    {1}  resumed
    {0}  it was not paused (nothing changed)
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include events

local META = KEYS[1]
--!include layout-guard
if redis.call('HDEL', KEYS[1], 'paused') == 0 then return {0} end
if redis.call('LLEN', KEYS[2]) > 0 then redis.call('ZADD', KEYS[3], 0, '0') end
emit_event(KEYS[4], events_maxlen(KEYS[1]), 'resumed', '')
return {1}
