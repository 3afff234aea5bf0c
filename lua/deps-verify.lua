--[[
  deps-verify — check a page of the parents waiting for children (read-only): each one's
  pending count (depCount) against its children whose dependency has not counted
  (depState), and a parent sealed with nothing pending that still waits. A parent with
  more than `count` children is counted over several calls: the caller passes its cursor.
  Mode "edges": a page of all children edges (depChildren), each parent's job data looked up:
  an edge whose parent has no data, waits for no children and is not in depGone is an orphan.

  KEYS[1] meta     HASH  layout version (not written)
  KEYS[2] data     HASH  id -> payload (mode "edges": does the parent exist)
  KEYS[3..] ready  READY_KEYS (src/engine/model/Keys.ts): the dependencies' keys (only
                   lua/include/deps.lua)

  ARGV[1] layout   layout version
  ARGV[2] cursor   the ZSCAN cursor of the waiting parents ("0" to start); mode "edges": the
                   last edge read ("0" to start)
  ARGV[3] count    parents per call, and children read per parent (1 to 10000); mode "edges":
                   edges per call
  ARGV[4] mode     "waiting" (the parents waiting for children) | "edges"

  Returns
    {cursor, line_1, …}  cursor "0" at the end; lines "deps-count <id> …" (a count that
                   disagrees with its children), "deps-stuck <id> …" (sealed, none pending,
                   still waiting), "deps-large <id> …" (more children than one call reads: not
                   checked), "deps-orphan <id> …" (mode "edges": edges of a parent that is gone)
    {'LAYOUT_MISMATCH', found} layout mismatch
]]
local META = KEYS[1]
--!include layout-guard
--!include ready
--!include deps
--!include deps-gone
if ARGV[4] == 'edges' then return deps_verify_edges(KEYS[2], ARGV[2], tonumber(ARGV[3])) end
return deps_verify(ARGV[2], tonumber(ARGV[3]))
