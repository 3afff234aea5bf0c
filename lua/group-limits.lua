--[[
  group-limits — set or clear the limits of one group, or the default of every group.

  A group's own limits replace the default (a field not given is no limit for it). The
  group is looked at again at once (it runs again when the new limits allow it, waking an
  idle worker); a new default reaches a group the next time it is served or one of its jobs
  ends, and the groups held by a rate window at once: a call looks at a page of up to 1,000
  held groups (the soonest windows first), each running again when its window has room
  under the limits that apply now; the client calls again for the next page (ARGV[4]) until
  the reply says the last was seen. O(log N) for a group's own; O(1,000 log N) a page.

  KEYS[1] meta      HASH  layout version
  KEYS[2..] ready   READY_KEYS (src/engine/model/Keys.ts): the groups' state is there; read
                    and written only by lua/include/ready.lua (and groups.lua, which it includes)

  ARGV[1] layout    layout version
  ARGV[2] group     the group ("" = the default of every group)
  ARGV[3] limits    "<concurrency>|<max>|<perMs>" ("" for a field not set; checked by the
                    client: whole numbers from 1), or "-" to clear
  ARGV[4] skip      the default only: 0 stores the limits and looks at the first page of held
                    groups; n > 0 (a later page) stores nothing and passes over the n held
                    groups earlier pages kept held

  Returns
    {1, next}                   set or cleared; next: ARGV[4] of the next page, -1 when
                                every held group was looked at (always -1 for a group)
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include ready

local META = KEYS[1]
--!include layout-guard
if not layout then redis.call('HSET', KEYS[1], 'layout', ARGV[1]) end
local next_page = groups_lib().set_limits(ARGV[2], ARGV[3] ~= '-' and ARGV[3], tonumber(ARGV[4]) or 0)
return {1, next_page}
