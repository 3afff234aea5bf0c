--[[
  deps-verify — check a page of the parents waiting for children (read-only): each one's
  pending count (depCount) against its children whose dependency has not counted
  (depState), and a parent sealed with nothing pending that still waits. A parent with
  more than `count` children is counted over several calls: the caller passes its cursor.

  KEYS[1] meta     HASH  layout version (not written)
  KEYS[2..] ready  READY_KEYS (src/engine/model/Keys.ts): the dependencies' keys (only
                   lua/include/deps.lua)

  ARGV[1] layout   layout version
  ARGV[2] cursor   the ZSCAN cursor of the waiting parents ("0" to start)
  ARGV[3] count    parents per call, and children read per parent (1 to 10000)

  Returns
    {cursor, line_1, …}  cursor "0" at the end; lines "deps-count <id> …" (a count that
                   disagrees with its children), "deps-stuck <id> …" (sealed, none pending,
                   still waiting), "deps-large <id> …" (more children than one call reads: not
                   checked)
    {'LAYOUT_MISMATCH', found} layout mismatch
]]
local META = KEYS[1]
--!include layout-guard
--!include ready
--!include deps
return deps_verify(ARGV[2], tonumber(ARGV[3]))
