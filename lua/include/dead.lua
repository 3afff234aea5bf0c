--!include dedupe
--!include deps
-- dead: the moves into and out of the dead jobs (no other file writes dead: see
-- test/scripts/script-descriptors.test.ts, "the active group … and dead").
--
-- to_dead(k, now, ids): the jobs `ids` (already out of their state) die at `now`: into
--   dead, counted in meta.dead, and a dedupe key a job held until finished is freed
--   (free_dedupe, lua/include/dedupe.lua). Their data and last
--   error stay for an operator to retry or purge. Their parents, if any, are told
--   (deps_ended: a note in the outbox; one HEXISTS of meta.deps when none is used).
--   k  table of key names: dead, meta, dkey, dedupe, dedupeid
local function to_dead(k, now, ids)
  local n = #ids
  if n == 0 then return end
  local args = {}
  for i, id in ipairs(ids) do
    args[2 * i - 1] = now
    args[2 * i] = id
  end
  for i = 1, 2 * n, 500 do redis.call('ZADD', k.dead, unpack(args, i, math.min(i + 499, 2 * n))) end
  redis.call('HINCRBY', k.meta, 'dead', n)
  free_dedupe(k.dkey, k.dedupe, k.dedupeid, ids)
  deps_ended(k, ids, 'dead')
end

-- dead_leave(k, ids): the dead jobs `ids` leave dead (retried or purged; their data is the
--   caller's to keep or drop): how many were dead. k  table of key names: dead
local function dead_leave(k, ids)
  if #ids == 0 then return 0 end
  return redis.call('ZREM', k.dead, unpack(ids))
end

-- dead_targets(dead): the dead jobs an operator's call names, from the ARGV of dead-retry
--   and dead-purge: ARGV[2] mode "ids" (the ids ARGV[4..]) or "all" (the oldest ARGV[3]).
local function dead_targets(dead)
  if ARGV[2] == 'all' then return redis.call('ZRANGE', dead, 0, tonumber(ARGV[3]) - 1) end
  local ids = {}
  for i = 4, #ARGV do ids[#ids + 1] = ARGV[i] end
  return ids
end

-- dead_reply(dead, count, missing): the reply of dead-retry and dead-purge: {count, dead
--   jobs left, missing_id_1, …}.
local function dead_reply(dead, count, missing)
  local out = {count, redis.call('ZCARD', dead)}
  for _, id in ipairs(missing) do out[#out + 1] = id end
  return out
end
