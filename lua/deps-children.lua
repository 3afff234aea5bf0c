--[[
  deps-children — give a parent waiting for children (waiting-children) more children, and
  seal it: a sealed parent takes no more and becomes ready once none is pending.

  Run on the parent's queue before its new children are added (so no child can end before
  it is counted). A child is counted once however often it is sent (re-sends add nothing).

  KEYS[1] meta     HASH  layout version; eventsMaxLen
  KEYS[2] events   STREAM job events: `dependencies-done` when the seal released the parent
  KEYS[3..] ready  READY_KEYS (src/engine/model/Keys.ts): the dependencies' keys (read and
                   written only by lua/include/deps.lua), the jobs ready and delayed, the
                   wake-up marker (only lua/include/ready.lua)

  ARGV[1] layout   layout version
  ARGV[2] parent   the parent's id
  ARGV[3] seal     "1": seal the parent after registering the children, "0": keep it open
  ARGV[4..] queue, id, policy  one triple per child: its queue ("" = this one), its id and the
                   dependency's failure policy (fail, ignore, remove, wait); at most 1000

  Returns
    {'ok', pending}            the children the parent now waits for
    {'NOT_WAITING', 0}         the parent is not waiting for children: nothing written
    {'SEALED', 0}              the parent is sealed (children given): nothing written
    {'LAYOUT_MISMATCH', found} layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
--!include ready
--!include deps
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local children = {}
for i = 4, #ARGV do children[#children + 1] = ARGV[i] end
local status, pending = deps_children(ARGV[2], children, ARGV[3] == '1', now, KEYS[2], events_maxlen(META))
return {status, pending}
