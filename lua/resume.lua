--[[
  resume — hand out jobs again after pause, and wake an idle worker when jobs wait
  (each worker that reserves sets the marker again while jobs are left, so the others
  wake in turn).

  KEYS[1] meta    HASH  layout version, paused
  KEYS[2] events  STREAM job events: one `resumed` entry (id "") when it was paused
  KEYS[3..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout  layout version

  Returns
    {1}  resumed
    {0}  it was not paused (nothing changed)
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include events
--!include ready

local META = KEYS[1]
--!include layout-guard
if redis.call('HDEL', KEYS[1], 'paused') == 0 then return {0} end
ready_wake_if_any()
emit_event(KEYS[2], events_maxlen(KEYS[1]), 'resumed', '')
return {1}
