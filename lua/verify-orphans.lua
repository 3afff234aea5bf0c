--[[
  verify-orphans — recheck payloads that looked orphaned (read-only), for an
  incremental verify: of the ids given, which still have a payload in data and are in
  none of active, delayed, dead, done. (Whether they wait is checked by the caller,
  which reads wait again.) Bounded: the caller sends at most a page of ids; each costs
  one HEXISTS and up to four ZSCOREs.

  KEYS[1] active   ZSET
  KEYS[2] delayed  ZSET
  KEYS[3] dead     ZSET
  KEYS[4] done     ZSET
  KEYS[5] data     HASH  id -> payload
  KEYS[6] meta     HASH  (field layout)
  KEYS[7] cancelled ZSET id -> time of the cancel (a retained cancelled job is no orphan)

  ARGV[1] layout  layout version
  ARGV[2..] id    the ids to recheck

  Returns
    {n, id_1, …, id_n}          the n ids still orphaned (n may be 0)
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[6]
--!include layout-guard

local out = {0}
for i = 2, #ARGV do
  local id = ARGV[i]
  local orphan = redis.call('HEXISTS', KEYS[5], id) == 1
  for _, k in ipairs({1, 2, 3, 4, 7}) do
    if orphan and redis.call('ZSCORE', KEYS[k], id) then orphan = false end
  end
  if orphan then
    out[#out + 1] = id
    out[1] = out[1] + 1
  end
end
return out
