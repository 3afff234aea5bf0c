--[[
  group-pause — pause or resume one group: a paused group's jobs wait (adds still come in)
  and none is leased until it is resumed; its running jobs go on. Resuming wakes an idle
  worker when the group has jobs waiting.

  KEYS[1] meta      HASH  layout version
  KEYS[2] receipts  HASH  request id -> the reply of a call that acted (its receipt)
  KEYS[3] receiptsAt ZSET  request id -> its time (trimmed by add and reserve, include/receipts)
  KEYS[4..] ready   READY_KEYS (src/engine/model/Keys.ts): the groups' state is there; read
                    and written only by lua/include/ready.lua (and groups.lua, which it includes)

  ARGV[1] layout    layout version
  ARGV[2] group     the group
  ARGV[3] op        "pause" or "resume"
  ARGV[4] requestId random, one per call ("" = none): a re-sent call finds its receipt and answers the same

  Returns
    {1}                         changed
    {0}                         it was paused (or not paused) already: nothing changed
    A re-send of a call that changed it (its receipt) answers the same {1}.
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include ready
--!include receipts

local META = KEYS[1]
--!include layout-guard
local req = ARGV[4] or ''
local again = receipt_again(KEYS[2], KEYS[3], req)
if again then return again end
if not layout then redis.call('HSET', KEYS[1], 'layout', ARGV[1]) end
return receipt_keep(KEYS[2], KEYS[3], req, {groups_lib().pause(ARGV[2], ARGV[3] == 'pause') and 1 or 0})
