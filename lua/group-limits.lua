--[[
  group-limits — set or clear the limits of one group, or the default of every group.

  A group's own limits replace the default (a field not given is no limit for it). The
  group is looked at again at once (it runs again when the new limits allow it, waking an
  idle worker); a new default reaches a group the next time it is served or one of its jobs
  ends, and the groups held by a rate window at once: up to 1,000 held groups (the soonest
  windows first) are looked at again and run when their window has room under the limits
  that apply now (O(log N) for a group's own; O(H log N) for the default, H ≤ 1,000 held).

  KEYS[1] meta      HASH  layout version
  KEYS[2..] ready   READY_KEYS (src/engine/model/Keys.ts): the groups' state is there; read
                    and written only by lua/include/ready.lua (and groups.lua, which it includes)

  ARGV[1] layout    layout version
  ARGV[2] group     the group ("" = the default of every group)
  ARGV[3] limits    "<concurrency>|<max>|<perMs>" ("" for a field not set; checked by the
                    client: whole numbers from 1), or "-" to clear

  Returns
    {1}                         set or cleared
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include ready

local META = KEYS[1]
--!include layout-guard
if not layout then redis.call('HSET', KEYS[1], 'layout', ARGV[1]) end
groups_lib().set_limits(ARGV[2], ARGV[3] ~= '-' and ARGV[3])
return {1}
