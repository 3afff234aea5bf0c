--!include ready
--!include zset-page
-- active: the one owner of the moves into, within and out of active (the jobs leased to a
-- worker), and of their reads. No other script or include reads or writes the active set,
-- the lease tokens or the lease holders (test/scripts/script-descriptors.test.ts, "the
-- active group"): it calls these, so a
-- rule about leaving active (a group's slot, a concurrency slot, a field of the lease) is a
-- change to this file (active_leave frees group slots through ready.lua).
--
-- A script passes the keys once, by name, as the table `a` (ACTIVE_KEYS in
-- src/engine/model/Keys.ts):
--   active  ZSET  id -> lease deadline (ms, Redis clock); its size is the queue's jobs in
--                 flight, so leaving it frees a slot of the queue's concurrency (flow.lua)
--   lease   HASH  id -> fencing token of the current lease (key layout 1 only: a queue of
--                 layout 2 has none once `upgrade` is done, and writes none)
--   holder  HASH  id -> "<workerId>|<token>|<startedAt>|<until>" of the current lease: the one
--                 hash of a lease in key layout 2. Layout 1 wrote "<workerId>|<startedAt>|<until>"
--                 with the token in `lease`; both forms are read (a queue moves by `upgrade`,
--                 lua/upgrade.lua), and every reader of layout 1 parses the new form alike
--                 (`until` last, `startedAt` before it, the worker id first).
--                 A completed job keeps its run's entry without the token,
--                 "<workerId>|<startedAt>|<until>" (active_keep_run), for its start time, until
--                 its data goes (active_forget, called by drop_jobs in lua/include/finish.lua).

-- active_bars(h): the first two '|' of a layout 2 holder entry (exactly three; else nil), by plain find: cheaper than a pattern per job (bench/HISTORY.md).
local function active_bars(h)
  local a = string.find(h, '|', 1, true)
  local b = a and string.find(h, '|', a + 1, true)
  local c = b and string.find(h, '|', b + 1, true)
  if c and not string.find(h, '|', c + 1, true) then return a, b end
end

-- active_read(a, ids): the token each job `ids` is leased under (false for none) and its
--   holder entry (false for none), one HMGET; a second (of `lease`) only for entries of the
--   layout 1 form, which carry no token. Then, for active_keep_run, where each token is in
--   its holder entry: the positions of the '|' before it and of the one after (nil for an
--   entry without a token).
local function active_read(a, ids)
  local holders = redis.call('HMGET', a.holder, unpack(ids))
  local tokens, old, before, after = {}, nil, {}, {}
  for i = 1, #ids do
    local h = holders[i]
    local x, y = active_bars(h or '')
    if x then
      tokens[i] = string.sub(h, x + 1, y - 1)
      before[i], after[i] = x, y
    else
      tokens[i] = false
      old = old or {}
      old[#old + 1] = i
    end
  end
  if old then
    local ask = {}
    for k, i in ipairs(old) do ask[k] = ids[i] end
    local got = redis.call('HMGET', a.lease, unpack(ask))
    for k, i in ipairs(old) do tokens[i] = got[k] end
  end
  return tokens, holders, before, after
end

-- active_tokens(a, ids): the token each job `ids` is leased under (false for none).
local function active_tokens(a, ids)
  return (active_read(a, ids))
end

-- active_take(a, zargs, holders, leases): lease jobs: zargs deadline, id pairs (ZADD),
--   holders id, "<workerId>|<token>|<startedAt>|<until>" pairs (HSET); leases id, token
--   pairs, given only while the queue is of key layout 1 (its layout 1 clients read them).
local function active_take(a, zargs, holders, leases)
  redis.call('ZADD', a.active, unpack(zargs))
  redis.call('HSET', a.holder, unpack(holders))
  if leases then redis.call('HSET', a.lease, unpack(leases)) end
end

-- active_upgrade(a, ids): write the holder entry of each job `ids` still in the layout 1
--   form with its token from `lease` (the form every layout 1 reader also parses); lua/upgrade.
--   Returns how many it rewrote.
local function active_upgrade(a, ids)
  if #ids == 0 then return 0 end
  local holders = redis.call('HMGET', a.holder, unpack(ids))
  local tokens = redis.call('HMGET', a.lease, unpack(ids))
  local set = {}
  for i, id in ipairs(ids) do
    local h = holders[i]
    if h and tokens[i] and not string.match(h, '^[^|]*|%d+|%d+|%d+$') then
      local w, start, untilMs = string.match(h, '^([^|]*)|(%d+)|?(%d*)$')
      if w then
        set[#set + 1] = id
        set[#set + 1] = w .. '|' .. tokens[i] .. '|' .. start .. '|' .. (untilMs ~= '' and untilMs or '0')
      end
    end
  end
  if #set > 0 then redis.call('HSET', a.holder, unpack(set)) end
  return #set / 2
end

-- active_drop_tokens(a, ids, last): the layout 1 token entries of `ids` deleted (their
--   holder entries carry the token: active_upgrade first); `last` deletes what is left of
--   the `lease` hash. lua/upgrade. Returns how many entries went.
local function active_drop_tokens(a, ids, last)
  local n = 0
  if #ids > 0 then
    active_upgrade(a, ids)
    n = redis.call('HDEL', a.lease, unpack(ids))
  end
  if last then redis.call('UNLINK', a.lease) end
  return n
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

-- active_keep_run(a, ids, holders, before, after): the holder entries the completed jobs
--   `ids` keep (active_leave; `holders` their entries, `before` and `after` their tokens'
--   places, as active_read gave them) rewritten without the token, "<workerId>|<startedAt>|<until>": a record of the run,
--   never a lease a late ack could match (active_read finds no token in it). One HSET, only
--   for entries that carry one.
local function active_keep_run(a, ids, holders, before, after)
  local set, k = {}, 0
  for i = 1, #ids do
    local x = before[i]
    if x then
      local h = holders[i]
      set[k + 1], set[k + 2] = ids[i], string.sub(h, 1, x) .. string.sub(h, after[i] + 1)
      k = k + 2
    end
  end
  if k > 0 then redis.call('HSET', a.holder, unpack(set)) end
end

-- active_forget(a, ids): drop the holder entries the completed jobs `ids` kept (active_leave),
--   as their data goes (drop_jobs). One HDEL.
local function active_forget(a, ids)
  redis.call('HDEL', a.holder, unpack(ids))
end

-- The reads of the leased jobs (a script reads them only through these; each is one command):
-- active_count(a): how many jobs are active (ZCARD), the queue's jobs in flight.
local function active_count(a)
  return redis.call('ZCARD', a.active)
end

-- active_deadline(a, id): the lease deadline of job `id` (ZSCORE), false when it is not active.
local function active_deadline(a, id)
  return redis.call('ZSCORE', a.active, id)
end

-- active_deadlines(a, ids): the lease deadline of each job `ids` (ZMSCORE; false for one not active).
local function active_deadlines(a, ids)
  return redis.call('ZMSCORE', a.active, unpack(ids))
end

-- active_expired(a, now, limit): up to `limit` active jobs whose deadline is `now` or before,
--   earliest first (ZRANGE BYSCORE).
local function active_expired(a, now, limit)
  return redis.call('ZRANGE', a.active, '-inf', now, 'BYSCORE', 'LIMIT', 0, limit)
end

-- active_expired_count(a, now): how many active jobs' deadlines are `now` or before (ZCOUNT).
local function active_expired_count(a, now)
  return redis.call('ZCOUNT', a.active, '-inf', now)
end

-- active_page(a, limit): the `limit` earliest deadlines, id, deadline pairs (ZRANGE WITHSCORES).
local function active_page(a, limit)
  return redis.call('ZRANGE', a.active, 0, limit - 1, 'WITHSCORES')
end

-- active_scan(a, cursor, count): a ZSCAN page of the active set: {cursor, {id, deadline, …}}.
local function active_scan(a, cursor, count)
  return redis.call('ZSCAN', a.active, cursor, 'COUNT', count)
end

-- active_scan_field(a, name, cursor, count): an HSCAN page of the lease hash `name`, 'lease'
--   (tokens, layout 1) or 'holder': {cursor, {id, value, …}}.
local function active_scan_field(a, name, cursor, count)
  return redis.call('HSCAN', a[name], cursor, 'COUNT', count)
end

-- active_holder(a, id): the holder entry of job `id` (HGET; false for none): a lease's, or the
--   run a completed job keeps (active_keep_run).
local function active_holder(a, id)
  return redis.call('HGET', a.holder, id)
end

-- active_has_holder(a, id): whether job `id` has a holder entry (HEXISTS, 1 or 0).
local function active_has_holder(a, id)
  return redis.call('HEXISTS', a.holder, id)
end

-- active_list(a, after, count, rev): a page of active by deadline (zset_page of
--   include/zset-page: `after` a {score, id} cursor or false): page, last, ended.
local function active_list(a, after, count, rev)
  return zset_page(a.active, after, count, rev, 0)
end
