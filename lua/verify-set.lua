--[[
  verify-set — check one ZSCAN page of active, delayed, dead or done (read-only), for
  an incremental verify. Bounded: about ARGV[4] members (ZSCAN's COUNT), each checked
  with at most three ZSCOREs and two HEXISTS.

  Checks per member: it is in no earlier sorted set (order: active, delayed, dead,
  done; a member of wait is checked by verify-wait), its payload is in data, and an
  active job has a lease (its holder entry: both key layouts write one, include/active).

  KEYS[1] active   ZSET
  KEYS[2] dead     ZSET
  KEYS[3] done     ZSET
  KEYS[4] data     HASH  id -> payload
  KEYS[5] holder   HASH  id -> the lease's holder entry
  KEYS[6] meta     HASH  (field layout)
  KEYS[7..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout  layout version
  ARGV[2] set     which set: 1 active, 2 delayed, 3 dead, 4 done
  ARGV[3] cursor  ZSCAN cursor ('0' to start)
  ARGV[4] count   ZSCAN COUNT

  Returns
    {cursor, members, duplicates, groups, line_1, line_2, …}
      cursor: the next ZSCAN cursor, '0' when the set is done
      members: members on this page; duplicates: how many of them are also in an earlier set
      groups: for active, the group of each member that has one (a list, to count a group's
        active jobs against its count; see verify-groups); {} for the other sets
      line: "<kind> <id> <detail>"
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[6]
--!include layout-guard
--!include ready
--!include active
--!include dead

local function in_set(key) return function(id) return redis.call('ZSCORE', key, id) end end
local function scan_set(key) return function(cursor, count) return redis.call('ZSCAN', key, cursor, 'COUNT', count) end end
local A, DEAD = {active = KEYS[1], holder = KEYS[5]}, {dead = KEYS[2]}
local function is_active(id) return active_deadline(A, id) end
local function is_dead(id) return dead_at(DEAD, id) end
-- the sets in order: name, membership, ZSCAN page
local sets = {
  {'active', is_active, function(cursor, count) return active_scan(A, cursor, count) end},
  {'delayed', delayed_due_at, delayed_scan},
  {'dead', is_dead, function(cursor, count) return dead_scan(DEAD, cursor, count) end},
  {'done', in_set(KEYS[3]), scan_set(KEYS[3])},
}
local which = tonumber(ARGV[2])
local name = sets[which][1]
local scan = sets[which][3](ARGV[3], tonumber(ARGV[4]))
local members, duplicates, lines = 0, 0, {}
for i = 1, #scan[2], 2 do
  local id = scan[2][i]
  members = members + 1
  for k = 1, which - 1 do
    if sets[k][2](id) then
      duplicates = duplicates + 1
      lines[#lines + 1] = 'duplicate ' .. id .. ' in ' .. sets[k][1] .. ' and ' .. name
      break
    end
  end
  if redis.call('HEXISTS', KEYS[4], id) == 0 then
    lines[#lines + 1] = 'no-data ' .. id .. ' is in ' .. name .. ' without a payload'
  end
  if which == 1 and active_has_holder(A, id) == 0 then
    lines[#lines + 1] = 'no-lease ' .. id .. ' is active without a lease entry'
  end
end
local groups = {}
if which == 1 and #scan[2] > 0 then
  local ids = {}
  for i = 1, #scan[2], 2 do ids[#ids + 1] = scan[2][i] end
  for _, g in ipairs(ready_groups_of(ids)) do
    if g ~= '' then groups[#groups + 1] = g end
  end
end
local out = {scan[1], members, duplicates, groups}
for _, l in ipairs(lines) do out[#out + 1] = l end
return out
