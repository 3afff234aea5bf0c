--[[
  verify-wait — check one page of the wait list (read-only), for an incremental verify.
  Bounded: at most ARGV[3] entries, each checked with one HEXISTS and up to five ZSCOREs.
  An inline entry's payload is cut off here and never returned; only the page's entries
  are held, and only during this call.

  The page is counted from the right (the end reserve pops from), so jobs pushed on
  the left meanwhile do not shift it; under concurrent change a job may be missed or
  seen twice (the caller reports the result as approximate).

  KEYS[1] active   ZSET
  KEYS[2] dead     ZSET
  KEYS[3] done     ZSET
  KEYS[4] data     HASH  id -> payload
  KEYS[5] meta     HASH  (field layout)
  KEYS[6] cancelled ZSET
  KEYS[7..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout  layout version
  ARGV[2] from    entries already read, counted from the right end (0 for the first page)
  ARGV[3] size    page size (entries)

  Returns
    {more, id_1, inline_1, hasData_1, alsoIn_1, id_2, …}
      more: 1 when the list goes on past this page, else 0
      inline: 1 when the entry carries its payload; hasData: 1 when data has the id
      alsoIn: the first of active, delayed, dead, done, cancelled that also holds the id, or ''
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[5]
--!include layout-guard
--!include ready
--!include active
--!include dead
local A, DEAD = {active = KEYS[1]}, {dead = KEYS[2]}
local function is_active(id) return active_deadline(A, id) end
local function is_dead(id) return dead_at(DEAD, id) end

local from, size = tonumber(ARGV[2]), tonumber(ARGV[3])
local page = ready_page(from, size)
local function in_set(key) return function(id) return redis.call('ZSCORE', key, id) end end
local states = {
  {'active', is_active}, {'delayed', delayed_due_at}, {'dead', is_dead}, {'done', in_set(KEYS[3])},
  {'cancelled', in_set(KEYS[6])},
}
local out = {ready_count() > from + size and 1 or 0}
for i = #page, 1, -1 do
  local e = page[i]
  page[i] = nil
  local bar = string.find(e, '|', 1, true)
  local id = bar and string.sub(e, 1, bar - 1) or e
  e = nil
  local alsoIn = ''
  for _, state in ipairs(states) do
    if state[2](id) then
      alsoIn = state[1]
      break
    end
  end
  out[#out + 1] = id
  out[#out + 1] = bar and 1 or 0
  out[#out + 1] = redis.call('HEXISTS', KEYS[4], id)
  out[#out + 1] = alsoIn
end
return out
