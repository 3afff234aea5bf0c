--[[
  deps-parents — a page of this queue's jobs that have a parent in another queue, for
  obliterate: before the queue's keys go, each such parent is told its child is removed
  (deps-apply on the parent's queue, by the child's policy), so no parent in another queue
  waits for ever on a queue that is gone. Read-only.

  KEYS[1] meta     HASH  layout version (not written)
  KEYS[2] active   ZSET  id -> lease deadline (its size is answered: obliterate's refusal)
  KEYS[3..] ready  READY_KEYS (src/engine/model/Keys.ts): the dependencies' keys (only
                   lua/include/deps.lua)

  ARGV[1] layout   layout version
  ARGV[2] cursor   HSCAN cursor of depParents ("0" from the start)
  ARGV[3] count    HSCAN COUNT (1 to 1000)

  Returns
    {cursor, active, "<parent queue>|<parent id>|<child id>", …}  cursor "0" at the end
    {'LAYOUT_MISMATCH', found} layout mismatch
]]
local META = KEYS[1]
--!include layout-guard
--!include ready
--!include deps
--!include active
local cursor, page = deps_parents_scan(ARGV[2], tonumber(ARGV[3]))
local out = {cursor, active_count({active = KEYS[2]})}
for i = 1, #page, 2 do
  for pq, pid in string.gmatch(page[i + 1], '([^,|]*)|([^,]+)') do
    if pq ~= '' then out[#out + 1] = pq .. '|' .. pid .. '|' .. page[i] end
  end
end
return out
