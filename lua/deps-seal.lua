--[[
  deps-seal — the last call of a multi-call addFlow: each building parent of this queue
  (depBuild) leaves it and is sealed (or stays open, as added with open: true); a sealed
  parent with nothing pending becomes ready.

  KEYS[1] meta     HASH  layout version; eventsMaxLen
  KEYS[2] events   STREAM job events: `dependencies-done` per parent released
  KEYS[3..] ready  READY_KEYS (src/engine/model/Keys.ts): the dependencies' keys (read and
                   written only by lua/include/deps.lua), the jobs ready and delayed, the
                   wake-up marker (only lua/include/ready.lua)

  ARGV[1] layout   layout version
  ARGV[2..] id, keep  one pair per parent: its id, and "1" to keep it open (open: true),
                   "0" to seal it; at most 1000

  Returns
    {status_1, …}              per parent: ok, or expired (it was not building: the sweep
                               failed it past its build deadline, the flow is incomplete)
    {'LAYOUT_MISMATCH', found} layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
--!include ready
--!include deps
--!include deps-build
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local maxlen = events_maxlen(META)
local out = {}
for i = 2, #ARGV, 2 do out[#out + 1] = deps_build_done(now, ARGV[i], ARGV[i + 1] == '1', KEYS[2], maxlen) end
return out
