--[[
  deps-outbox — remove the notes of this queue's outbox that were applied, and read the
  next ones (the notes finished children left for parents in other queues, or for a parent
  here that one of them fails).

  KEYS[1] meta     HASH  layout version
  KEYS[2..] ready  READY_KEYS (src/engine/model/Keys.ts): the dependencies' keys (only
                   lua/include/deps.lua)

  ARGV[1] layout   layout version
  ARGV[2] limit    the most notes to read (0 to 1000)
  ARGV[3..] note   the notes applied (one copy of each is removed)

  Returns
    {removed, more, note_1, …}  how many were removed; more 1 when the oldest `limit` notes
                   held more than the ≤ 1 MiB answered; then the oldest notes left
                   ("<parent queue>|<parent id>|<child id>|<outcome>", a completed child's
                   with "|<result>" after)
    {'LAYOUT_MISMATCH', found} layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
--!include ready
--!include deps
local acked = {}
for i = 3, #ARGV do acked[#acked + 1] = ARGV[i] end
local out = {deps_ack(acked), 0}
local limit = tonumber(ARGV[2])
if limit > 0 then
  local notes, more = deps_outbox(limit)
  if more then out[2] = 1 end
  for _, note in ipairs(notes) do out[#out + 1] = note end
end
return out
