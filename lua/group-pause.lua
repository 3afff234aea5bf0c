--[[
  group-pause — pause or resume one group: a paused group's jobs wait (adds still come in)
  and none is leased until it is resumed; its running jobs go on. Resuming wakes an idle
  worker when the group has jobs waiting.

  KEYS[1] meta      HASH  layout version
  KEYS[2..] ready   READY_KEYS (src/engine/model/Keys.ts): the groups' state is there; read
                    and written only by lua/include/ready.lua (and groups.lua, which it includes)

  ARGV[1] layout    layout version
  ARGV[2] group     the group
  ARGV[3] op        "pause" or "resume"

  Returns
    {1}                         changed
    {0}                         it was paused (or not paused) already: nothing changed
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include ready

local META = KEYS[1]
--!include layout-guard
if not layout then redis.call('HSET', KEYS[1], 'layout', ARGV[1]) end
return {groups_lib().pause(ARGV[2], ARGV[3] == 'pause') and 1 or 0}
