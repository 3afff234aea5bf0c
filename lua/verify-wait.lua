--[[
  verify-wait — check one page of the wait list (read-only), for an incremental verify.
  Bounded: at most ARGV[3] entries, each checked with one HEXISTS and up to four ZSCOREs.
  An inline entry's payload is cut off here and never returned; only the page's entries
  are held, and only during this call.

  The page is counted from the right (the end reserve pops from), so jobs pushed on
  the left meanwhile do not shift it; under concurrent change a job may be missed or
  seen twice (the caller reports the result as approximate).

  KEYS[1] wait     LIST  "<id>|<payload>" (inline) or "<id>" (payload in data)
  KEYS[2] active   ZSET
  KEYS[3] delayed  ZSET
  KEYS[4] dead     ZSET
  KEYS[5] done     ZSET
  KEYS[6] data     HASH  id -> payload
  KEYS[7] meta     HASH  (field layout)

  ARGV[1] layout  layout version
  ARGV[2] from    entries already read, counted from the right end (0 for the first page)
  ARGV[3] size    page size (entries)

  Returns
    {more, id_1, inline_1, hasData_1, alsoIn_1, id_2, …}
      more: 1 when the list goes on past this page, else 0
      inline: 1 when the entry carries its payload; hasData: 1 when data has the id
      alsoIn: the first of active, delayed, dead, done that also holds the id, or ''
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[7]
--!include layout-guard

local from, size = tonumber(ARGV[2]), tonumber(ARGV[3])
local page = redis.call('LRANGE', KEYS[1], -(from + size), -(from + 1))
local states = {'active', 'delayed', 'dead', 'done'}
local out = {redis.call('LLEN', KEYS[1]) > from + size and 1 or 0}
for i = #page, 1, -1 do
  local e = page[i]
  page[i] = nil
  local bar = string.find(e, '|', 1, true)
  local id = bar and string.sub(e, 1, bar - 1) or e
  e = nil
  local alsoIn = ''
  for k, name in ipairs(states) do
    if redis.call('ZSCORE', KEYS[1 + k], id) then
      alsoIn = name
      break
    end
  end
  out[#out + 1] = id
  out[#out + 1] = bar and 1 or 0
  out[#out + 1] = redis.call('HEXISTS', KEYS[6], id)
  out[#out + 1] = alsoIn
end
return out
