--!include dedupe
--!include deps
--!include finish
--!include zset-page
-- dead: the moves into and out of the dead jobs, and their reads (no other file reads or
-- writes dead: see test/scripts/script-descriptors.test.ts, "the active group … and dead").
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

-- The reads of dead (a script reads it only through these; each is one command):
-- dead_count(k): how many jobs are dead (ZCARD). k  table of key names: dead
local function dead_count(k)
  return redis.call('ZCARD', k.dead)
end

-- dead_at(k, id): when job `id` died (ZSCORE), false when it is not dead.
local function dead_at(k, id)
  return redis.call('ZSCORE', k.dead, id)
end

-- dead_ats(k, ids): when each job `ids` died (ZMSCORE; false for one not dead).
local function dead_ats(k, ids)
  return redis.call('ZMSCORE', k.dead, unpack(ids))
end

-- dead_page(k, from, count): `count` dead jobs from rank `from`, oldest first: id, time of
--   death pairs (ZRANGE WITHSCORES).
local function dead_page(k, from, count)
  return redis.call('ZRANGE', k.dead, from, from + count - 1, 'WITHSCORES')
end

-- dead_scan(k, cursor, count): a ZSCAN page of dead: {cursor, {id, time of death, …}}.
local function dead_scan(k, cursor, count)
  return redis.call('ZSCAN', k.dead, cursor, 'COUNT', count)
end

-- dead_or_exists(k, other): how many of dead and the key `other` exist (one EXISTS).
local function dead_or_exists(k, other)
  return redis.call('EXISTS', other, k.dead)
end

-- dead_aged(k, min, max, limit): up to `limit` dead jobs that died from `min` to `max`
--   (scores, as ZRANGE BYSCORE takes them), oldest first.
local function dead_aged(k, min, max, limit)
  return redis.call('ZRANGE', k.dead, min, max, 'BYSCORE', 'LIMIT', 0, limit)
end

-- dead_count_from(k, min): how many dead jobs died at `min` or later (ZCOUNT to +inf).
local function dead_count_from(k, min)
  return redis.call('ZCOUNT', k.dead, min, '+inf')
end

-- dead_list(k, after, count, rev): a page of dead by time of death (zset_page of
--   include/zset-page: `after` a {score, id} cursor or false): page, last, ended.
local function dead_list(k, after, count, rev)
  return zset_page(k.dead, after, count, rev, 0)
end

-- dead_trim(job, k, now, count, ageMs, limit): the retention's dead bounds (keepDead,
--   keepDeadMs): up to `limit` of the oldest dead jobs past `count` or older than `ageMs` leave
--   dead and their data goes (trim_finished of include/finish, whose arguments it takes;
--   `job` the per-job hashes). Returns how many went, and 1 when more are left.
local function dead_trim(job, k, now, count, ageMs, limit)
  return trim_finished(job, k.dead, now, count, ageMs, limit)
end

-- dead_keep(job, k, count, most): the retention's count of dead jobs (keepDead) after one
--   died: up to `most` of the oldest past `count` leave dead and their data goes (trim_oldest
--   of include/finish; `job` the per-job hashes).
local function dead_keep(job, k, count, most)
  return trim_oldest(job, k.dead, count, most)
end
