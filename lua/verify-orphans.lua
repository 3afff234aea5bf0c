--[[
  verify-orphans — recheck payloads that looked orphaned (read-only), for an
  incremental verify: of the ids given, which still have a payload in data and are in
  none of active, delayed, dead, done. (Whether they wait is checked by the caller,
  which reads wait again.) Bounded: the caller sends at most a page of ids; each costs
  one HEXISTS and up to four ZSCOREs.

  KEYS[1] active   ZSET
  KEYS[2] dead     ZSET
  KEYS[3] done     ZSET
  KEYS[4] data     HASH  id -> payload
  KEYS[5] meta     HASH  (field layout)
  KEYS[6] cancelled ZSET id -> time of the cancel (a retained cancelled job is no orphan)
  KEYS[7..] ready  READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                    marker; read and written only by lua/include/ready.lua

  ARGV[1] layout  layout version
  ARGV[2..] id    the ids to recheck

  Returns
    {n, id_1, …, id_n}          the n ids still orphaned (n may be 0)
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[5]
--!include layout-guard
--!include ready
--!include deps
--!include active
--!include dead
local A, DEAD = {active = KEYS[1]}, {dead = KEYS[2]}
local function is_active(id) return active_deadline(A, id) end
local function is_dead(id) return dead_at(DEAD, id) end

local function in_set(key) return function(job) return redis.call('ZSCORE', key, job) end end
-- active, delayed, dead, done, cancelled, waiting for children (lua/include/deps.lua)
local states = {is_active, delayed_due_at, is_dead, in_set(KEYS[3]), in_set(KEYS[6]), deps_waiting_since}
local out = {0}
for i = 2, #ARGV do
  local id = ARGV[i]
  local orphan = redis.call('HEXISTS', KEYS[4], id) == 1
  for _, has in ipairs(states) do
    if orphan and has(id) then orphan = false end
  end
  if orphan then
    out[#out + 1] = id
    out[1] = out[1] + 1
  end
end
return out
