--!include ready
-- active: the one owner of the moves into, within and out of active (the jobs leased to a
-- worker). No script writes the active set, the lease tokens or the lease holders on its
-- own (test/scripts/script-descriptors.test.ts, "the active group"): it calls these, so a
-- rule about leaving active (a group's slot, a concurrency slot, a field of the lease) is a
-- change to this file (active_leave frees group slots through ready.lua).
--
-- A script passes the keys once, by name, as the table `a` (ACTIVE_KEYS in
-- src/engine/model/Keys.ts):
--   active  ZSET  id -> lease deadline (ms, Redis clock); its size is the queue's jobs in
--                 flight, so leaving it frees a slot of the queue's concurrency (flow.lua)
--   lease   HASH  id -> fencing token of the current lease
--   holder  HASH  id -> "<workerId>|<startedAt>|<until>" of the current lease, or of the run
--                 that completed a job: kept with it, for its start time, until its data goes
--                 (active_forget, called by drop_jobs in lua/include/finish.lua)

-- active_tokens(a, ids): the token each job `ids` is leased under (false for none), one HMGET.
local function active_tokens(a, ids)
  return redis.call('HMGET', a.lease, unpack(ids))
end

-- active_take(a, zargs, leases, holders): lease jobs: zargs deadline, id pairs (ZADD),
--   leases id, token pairs, holders id, holder-entry pairs (HSET each).
local function active_take(a, zargs, leases, holders)
  redis.call('ZADD', a.active, unpack(zargs))
  redis.call('HSET', a.lease, unpack(leases))
  redis.call('HSET', a.holder, unpack(holders))
end

-- active_extend(a, zargs): move the deadlines of jobs still active (deadline, id pairs; XX).
local function active_extend(a, zargs)
  if #zargs > 0 then redis.call('ZADD', a.active, 'XX', unpack(zargs)) end
end

-- active_leave(a, ids, why): the jobs `ids` leave active, all in one place: out of the active
--   set first (a write that cannot grow memory, so it runs with maxmemory reached and
--   noeviction), their lease and holder fields deleted (a completed job keeps its holder entry,
--   dropped with its data: no command more than the HDEL it moves), their groups' slots freed
--   (ready_left). `why` says where they go: 'completed', 'cancelled', 'failed', 'released',
--   'reclaimed' (keep their group record, dropped with their data by drop_jobs), or
--   'missing' (their data is gone: the group record goes now). The caller knows them active
--   (their token matched, or the sweep found them expired); a single id that was not
--   active frees nothing. Returns how many left the active set.
local function active_leave(a, ids, why)
  if #ids == 0 then return 0 end
  local n = redis.call('ZREM', a.active, unpack(ids))
  redis.call('HDEL', a.lease, unpack(ids))
  if why ~= 'completed' then redis.call('HDEL', a.holder, unpack(ids)) end
  if n > 0 or #ids > 1 then ready_left(ids, why == 'missing') end
  return n
end

-- active_forget(a, ids): drop the holder entries the completed jobs `ids` kept (active_leave),
--   as their data goes (drop_jobs). One HDEL.
local function active_forget(a, ids)
  redis.call('HDEL', a.holder, unpack(ids))
end
