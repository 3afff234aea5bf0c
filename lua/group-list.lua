--[[
  group-list — a page of the groups, in name order (read-only): every group with jobs
  waiting or active, its own limits or paused. O(log N) per group listed.

  KEYS[1] meta      HASH  layout version
  KEYS[2..] ready   READY_KEYS (src/engine/model/Keys.ts): the groups' state is there; read
                    only through lua/include/ready.lua (and groups.lua, which it includes)

  ARGV[1] layout    layout version
  ARGV[2] after     list the groups named after this one ("" from the first): the cursor
  ARGV[3] count     the most groups (1 to 1000, checked by the client)

  Returns
    {next, default, group_1, waiting_1, active_1, paused_1, limits_1, …}
      next: the cursor of the next page ("" when this page is the last)
      default: the default limits "<concurrency>|<max>|<perMs>" ("" none)
      paused_i: 1 or 0; limits_i: the group's own limits, "" for none (the default applies)
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
--!include ready

local META = KEYS[1]
--!include layout-guard
return groups_lib().page(ARGV[2], tonumber(ARGV[3]))
