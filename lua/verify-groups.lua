--[[
  verify-groups — one HSCAN page of the groups' active counts (read-only), for an
  incremental verify: the caller compares them with the active jobs of each group it
  counted in active (verify-set). Bounded: about ARGV[3] fields (HSCAN's COUNT).

  KEYS[1] meta     HASH  (field layout)
  KEYS[2..] ready  READY_KEYS (src/engine/model/Keys.ts): the groups' state is there; read
                    only through lua/include/ready.lua

  ARGV[1] layout  layout version
  ARGV[2] cursor  HSCAN cursor ('0' to start)
  ARGV[3] count   HSCAN COUNT

  Returns
    {cursor, group_1, count_1, …}
      cursor: the next HSCAN cursor, '0' when done
      count_i: the jobs of group_i counted active
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[1]
--!include layout-guard
--!include ready

local page = ready_group_counts(ARGV[2], tonumber(ARGV[3]))
local out = {page[1]}
for _, v in ipairs(page[2]) do out[#out + 1] = v end
return out
