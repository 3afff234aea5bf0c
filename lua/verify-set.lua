--[[
  verify-set — check one ZSCAN page of active, delayed, dead or done (read-only), for
  an incremental verify. Bounded: about ARGV[4] members (ZSCAN's COUNT), each checked
  with at most three ZSCOREs and two HEXISTS.

  Checks per member: it is in no earlier sorted set (order: active, delayed, dead,
  done; a member of wait is checked by verify-wait), its payload is in data, and an
  active job has a lease token.

  KEYS[1] active   ZSET
  KEYS[2] delayed  ZSET
  KEYS[3] dead     ZSET
  KEYS[4] done     ZSET
  KEYS[5] data     HASH  id -> payload
  KEYS[6] lease    HASH  id -> fencing token
  KEYS[7] meta     HASH  (field layout)

  ARGV[1] layout  layout version
  ARGV[2] set     which set: 1 active, 2 delayed, 3 dead, 4 done
  ARGV[3] cursor  ZSCAN cursor ('0' to start)
  ARGV[4] count   ZSCAN COUNT

  Returns
    {cursor, members, duplicates, line_1, line_2, …}
      cursor: the next ZSCAN cursor, '0' when the set is done
      members: members on this page; duplicates: how many of them are also in an earlier set
      line: "<kind> <id> <detail>"
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[7]
--!include layout-guard

local names = {'active', 'delayed', 'dead', 'done'}
local which = tonumber(ARGV[2])
local name = names[which]
local scan = redis.call('ZSCAN', KEYS[which], ARGV[3], 'COUNT', tonumber(ARGV[4]))
local members, duplicates, lines = 0, 0, {}
for i = 1, #scan[2], 2 do
  local id = scan[2][i]
  members = members + 1
  for k = 1, which - 1 do
    if redis.call('ZSCORE', KEYS[k], id) then
      duplicates = duplicates + 1
      lines[#lines + 1] = 'duplicate ' .. id .. ' in ' .. names[k] .. ' and ' .. name
      break
    end
  end
  if redis.call('HEXISTS', KEYS[5], id) == 0 then
    lines[#lines + 1] = 'no-data ' .. id .. ' is in ' .. name .. ' without a payload'
  end
  if which == 1 and redis.call('HEXISTS', KEYS[6], id) == 0 then
    lines[#lines + 1] = 'no-lease ' .. id .. ' is active without a lease token'
  end
end
local out = {scan[1], members, duplicates}
for _, l in ipairs(lines) do out[#out + 1] = l end
return out
