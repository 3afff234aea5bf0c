--!include zset-page
-- ready: the one owner of the jobs that are ready to run or delayed. No script names
-- their keys: a script that moves a job into or out of them, or reads them, declares the
-- READY_KEYS group of src/engine/model/Keys.ts as its last KEYS (header line `KEYS[i..] ready`)
-- and calls the functions below (test/scripts/script-descriptors.test.ts checks both). So an
-- ordering rule (a priority, fairness) is a change to this file and to READY_KEYS.
--
--   wait         LIST  ready jobs of priority 0 (the default): "<id>" (or "<id>|<max>|<payload>",
--                      written by earlier versions). The back is the left end (producers push
--                      there), the front the right end (taken from there): a job pushed to the
--                      front runs next.
--   delayed      ZSET  id -> due time (ms, Redis clock)
--   marker       ZSET  the wake-up marker idle workers block on (member "0")
--   prioritized  ZSET  ready jobs of priority 1..1,000,000: id -> priority * 2^32 + sequence.
--                      A priority's first job gets sequence 2^31, one pushed to its back the
--                      last one's + 1, to its front the first one's - 1: FIFO within a
--                      priority, and a front that runs next among its priority. A priority
--                      whose end reaches its band's edge (2^31 pushes to one end while it
--                      never emptied) is renumbered around the middle once (prio_renumber).
--   priority     HASH  id -> priority, for every job (in any state) whose priority is not 0:
--                      a job released, reclaimed, retried or promoted goes back at its own
--                      priority. Deleted with the job's other fields (drop_jobs, include/finish).
--
--   gcount, gwait, gready, gheld, gjob, gstate, gindex  the jobs of groups (add's `group`
--                      option), in lua/include/groups.lua, included below
--   addedAt      HASH  id -> when the job was added (ms, Redis clock), only for a job whose id
--                      carries no time (a custom id, a schedule's tick): a ULID holds its own.
--                      Deleted with the job's other fields (drop_jobs, include/finish).
--   waitSince    ZSET  id -> when the job was added (ms), for every ready job of a priority
--                      other than 0 or of a group: the oldest waiting job is the first of it or
--                      the front of wait (ready_oldest_added). A queue that uses neither never
--                      writes it; one that does pays a ZADD and a ZREM (O(log N)) per such job.
--
-- Ready jobs without a group run priority 0 first (the wait list, unchanged when no priority
-- is used: a queue that uses none pays nothing), then prioritized, lowest score first. The
-- ordering of jobs without a group is in plain_push / plain_take (priority 0) and prio_push /
-- prio_take (the others); the ready_* functions route to them. A job with a group waits in
-- its group (priority then FIFO within it); ready_take serves the groups that can run round
-- robin, the jobs without a group taking part as one more group (see group_take): with
-- no group in the queue, ready_take is the ungrouped order alone (one EXISTS a call).
--
-- Counts and limits may be numbers or decimal strings (a string saves Redis a "%.17g").
-- A list of ids is pushed 500 at a time (Lua unpacks only a few thousand values at once).
local READY_WAIT, READY_DELAYED, READY_MARKER = KEYS[#KEYS - 4], KEYS[#KEYS - 3], KEYS[#KEYS - 2]
local READY_PRIORITIZED, READY_PRIORITY = KEYS[#KEYS - 1], KEYS[#KEYS]
local READY_ADDED, READY_SINCE = KEYS[#KEYS - 13], KEYS[#KEYS - 12]
-- the dependencies' keys lead the group (DEPS_KEYS in Keys.ts): only lua/include/deps.lua uses them
local READY_DEPS = {
  parents = KEYS[#KEYS - 19], outbox = KEYS[#KEYS - 18], waiting = KEYS[#KEYS - 17],
  children = KEYS[#KEYS - 16], state = KEYS[#KEYS - 15], count = KEYS[#KEYS - 14],
  gone = KEYS[#KEYS - 20], build = KEYS[#KEYS - 21],
}
-- a priority's band of scores in prioritized is [p * 2^32, (p + 1) * 2^32): exact in a double
-- up to the highest priority (1,000,000 * 2^32 < 2^53)
local READY_BAND, READY_MID = 4294967296, 2147483648

-- ready_order(p, front, edge, step, lex): the order of ready jobs, written here only: by
--   priority first (lower runs first; 0 .. 1,000,000, Limits.priority in
--   src/engine/model/Validate.ts), then by place within the priority, lower first: a job
--   pushed to the front takes the place `step` below `edge`, one pushed to the back `step`
--   above it (so the front runs the last pushed first, the back the first pushed first).
--   Returns the job's key in the form its set sorts by, and its place:
--     lex false  its score in prioritized (jobs without a group, priority > 0): p * 2^32 +
--                place, the place within [0, 2^32) (prio_push keeps it there: prio_renumber)
--     lex true   the 23 digits of its member of a group's G.wait (groups.lua, read BYLEX): p in
--                7 digits, then the place in 16 (within [0, 10^16))
--   Jobs of priority 0 without a group are the wait list (plain_push), taken before
--   prioritized: the same order, as a list.
local function ready_order(p, front, edge, step, lex)
  local place = front and edge - step or edge + step
  if lex then return string.format('%07d%016d', p, place), place end
  return string.format('%d', p * READY_BAND + place), place
end

local G = {
  count = KEYS[#KEYS - 11], wait = KEYS[#KEYS - 10], ready = KEYS[#KEYS - 9], held = KEYS[#KEYS - 8],
  job = KEYS[#KEYS - 7], state = KEYS[#KEYS - 6], index = KEYS[#KEYS - 5], plain = READY_WAIT,
  marker = READY_MARKER,
}
--!include groups

-- ready_bind(which): a script given a second queue's keys after its own ready group (complete's
--   fan-in: `peer`, the parent queue's meta, events, then its READY_KEYS, last) points this
--   file's functions (and deps.lua's, groups.lua's) at one group: 'own' (the group before the
--   peer's: a script with a peer calls this before any other function here) or 'peer'.
--   Answers the peer's meta and events for 'peer'. A script without a peer never calls it.
local READY_GROUP_LEN = 22
local function ready_bind(which)
  local top = which == 'peer' and #KEYS or #KEYS - READY_GROUP_LEN - 2
  READY_WAIT, READY_DELAYED, READY_MARKER = KEYS[top - 4], KEYS[top - 3], KEYS[top - 2]
  READY_PRIORITIZED, READY_PRIORITY = KEYS[top - 1], KEYS[top]
  READY_ADDED, READY_SINCE = KEYS[top - 13], KEYS[top - 12]
  local D = READY_DEPS
  D.parents, D.outbox, D.waiting = KEYS[top - 19], KEYS[top - 18], KEYS[top - 17]
  D.children, D.state, D.count = KEYS[top - 16], KEYS[top - 15], KEYS[top - 14]
  D.gone, D.build = KEYS[top - 20], KEYS[top - 21]
  G.count, G.wait, G.ready, G.held = KEYS[top - 11], KEYS[top - 10], KEYS[top - 9], KEYS[top - 8]
  G.job, G.state, G.index, G.plain, G.marker = KEYS[top - 7], KEYS[top - 6], KEYS[top - 5], READY_WAIT, READY_MARKER
  g_used = nil
  if which == 'peer' then return KEYS[top - READY_GROUP_LEN - 1], KEYS[top - READY_GROUP_LEN] end
end

-- is_ulid(id): true when `id` is a ULID (26 characters of Crockford's base 32), without
-- decoding its time (ten look-ups a job, which add does not need).
local function is_ulid(id)
  return #id == 26 and not string.find(id, '[^0-9A-HJKMNP-TV-Z]')
end

-- ulid_time(id): the time (ms) a ULID id carries, or false for an id that is not a ULID.
local function ulid_time(id)
  if not is_ulid(id) then return false end
  local t = 0
  for i = 1, 10 do t = t * 32 + string.find('0123456789ABCDEFGHJKMNPQRSTVWXYZ', string.sub(id, i, i), 1, true) - 1 end
  return t
end

-- ready_note_added(ids, now): record when the new jobs `ids` were added, for those whose id
-- carries no time (not a ULID): a queue of generated ids writes nothing.
local function ready_note_added(ids, now)
  local args = {}
  for _, id in ipairs(ids) do
    if not is_ulid(id) then args[#args + 1], args[#args + 2] = id, now end
  end
  for i = 1, #args, 500 do redis.call('HSET', READY_ADDED, unpack(args, i, math.min(i + 499, #args))) end
end

-- ready_added_at(id): when the job `id` was added (ms) as recorded by ready_note_added, or
-- false (a ULID carries its own time; or nothing was recorded).
local function ready_added_at(id)
  if is_ulid(id) then return false end
  local at = redis.call('HGET', READY_ADDED, id)
  return at and tonumber(at) or false
end

-- since_mark(ids): the jobs `ids` (of a priority other than 0, or of a group) are ready:
-- into waitSince, scored by when each was added (its ULID's time, else the recorded one, else now).
local function since_mark(ids)
  local n = #ids
  if n == 0 then return end
  local args, ask, at = {}, {}, {}
  for i, id in ipairs(ids) do
    at[i] = ulid_time(id)
    if not at[i] then ask[#ask + 1] = i end
  end
  if #ask > 0 then
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    for k = 1, #ask, 500 do
      local part = {}
      for j = k, math.min(k + 499, #ask) do part[#part + 1] = ids[ask[j]] end
      local got = redis.call('HMGET', READY_ADDED, unpack(part))
      for j = 1, #part do at[ask[k + j - 1]] = tonumber(got[j]) or now end
    end
  end
  for i = 1, n do args[2 * i - 1], args[2 * i] = string.format('%d', at[i]), ids[i] end
  for i = 1, 2 * n, 500 do redis.call('ZADD', READY_SINCE, unpack(args, i, math.min(i + 499, 2 * n))) end
end

-- since_clear(ids): the jobs `ids` are no longer ready: out of waitSince (no-op for others).
local function since_clear(ids)
  local n = #ids
  for i = 1, n, 500 do redis.call('ZREM', READY_SINCE, unpack(ids, i, math.min(i + 499, n))) end
end

-- plain_push(ids, front): jobs of priority 0 into wait, in order, at the back or the front.
local function plain_push(ids, front)
  local n = #ids
  if n == 0 then return end
  local cmd = front and 'RPUSH' or 'LPUSH'
  if n <= 500 then
    redis.call(cmd, READY_WAIT, unpack(ids))
    return
  end
  for i = 1, n, 500 do redis.call(cmd, READY_WAIT, unpack(ids, i, math.min(i + 499, n))) end
end

-- prio_push(ids, prios, front): jobs of priority prios[i] > 0 into prioritized, in order, at
-- the back or the front of their priority (one look-up per priority per call).
local function prio_push(ids, prios, front)
  -- its helpers live here, so a script pays for their closures only when it pushes a job
  -- of priority > 0.
  --
  -- prio_edge(p, front): the sequence of the first (front) or last job of priority `p` in
  -- prioritized, or false when none of that priority is ready.
  local function prio_edge(p, front)
    local lo = p * READY_BAND
    local hi = '(' .. string.format('%d', lo + READY_BAND)
    local lostr = string.format('%d', lo)
    local edge
    if front then
      edge = redis.call('ZRANGE', READY_PRIORITIZED, lostr, hi, 'BYSCORE', 'LIMIT', '0', '1', 'WITHSCORES')
    else
      edge = redis.call('ZRANGE', READY_PRIORITIZED, hi, lostr, 'BYSCORE', 'REV', 'LIMIT', '0', '1', 'WITHSCORES')
    end
    return edge[2] and tonumber(edge[2]) - lo or false
  end

  -- prio_renumber(p): give the k jobs of priority `p` sequences around the middle of its band
  -- again, in their order: O(k log N), needed only when one end of a priority that never
  -- emptied has taken 2^31 pushes.
  local function prio_renumber(p)
    local lo = p * READY_BAND
    local ids = redis.call('ZRANGE', READY_PRIORITIZED, string.format('%d', lo),
      '(' .. string.format('%d', lo + READY_BAND), 'BYSCORE')
    local k, args = #ids, {}
    local before = READY_MID - math.floor(k / 2) - 1
    for i = 1, k do args[2 * i - 1], args[2 * i] = ready_order(p, false, before, i, false), ids[i] end
    for i = 1, 2 * k, 500 do redis.call('ZADD', READY_PRIORITIZED, unpack(args, i, math.min(i + 499, 2 * k))) end
  end

  local count = {}
  for i = 1, #ids do count[prios[i]] = (count[prios[i]] or 0) + 1 end
  local seq, args, n = {}, {}, 0
  for i, id in ipairs(ids) do
    local p = prios[i]
    local s = seq[p]
    if not s then
      s = prio_edge(p, front)
      -- a band about to run out at this end: renumber it first (see prio_renumber)
      if s and (front and s - count[p] < 0 or not front and s + count[p] >= READY_BAND) then
        prio_renumber(p)
        s = prio_edge(p, front)
      end
      s = s or (front and READY_MID + 1 or READY_MID - 1)
    end
    args[n + 1], s = ready_order(p, front, s, 1, false)
    args[n + 2] = id
    seq[p] = s
    n = n + 2
  end
  for i = 1, n, 500 do redis.call('ZADD', READY_PRIORITIZED, unpack(args, i, math.min(i + 499, n))) end
end

-- ready_priorities(ids): the priority of each job of `ids` (0 when it has none recorded).
local function ready_priorities(ids)
  local out, n = {}, #ids
  for i = 1, n, 500 do
    local got = redis.call('HMGET', READY_PRIORITY, unpack(ids, i, math.min(i + 499, n)))
    for k = 1, #got do out[i + k - 1] = tonumber(got[k]) or 0 end
  end
  return out
end

-- ready_set_priority(pairs): record the priorities of jobs, `pairs` id, priority, id, …
-- (numbers or decimal strings; 0 forgets a recorded one). Where the job is does not change.
local function ready_set_priority(pairs)
  local set, unset = {}, {}
  for i = 1, #pairs, 2 do
    if tonumber(pairs[i + 1]) == 0 then
      unset[#unset + 1] = pairs[i]
    else
      set[#set + 1], set[#set + 2] = pairs[i], pairs[i + 1]
    end
  end
  for i = 1, #set, 500 do redis.call('HSET', READY_PRIORITY, unpack(set, i, math.min(i + 499, #set))) end
  if #unset > 0 then redis.call('HDEL', READY_PRIORITY, unpack(unset)) end
end

-- ready_priority_scan(cursor, count): one HSCAN page of the recorded priorities: {next
-- cursor, {id, priority, …}} (for verify).
local function ready_priority_scan(cursor, count)
  return redis.call('HSCAN', READY_PRIORITY, cursor, 'COUNT', count)
end

-- ready_job_hashes(): the per-job hashes kept here, for drop_jobs (include/finish), and
-- depParents (a child's parents: lua/include/deps.lua, whose keys lead this group).
local function ready_job_hashes()
  return {READY_PRIORITY, READY_ADDED, READY_DEPS.parents}
end

-- ready_count_ungrouped(): how many jobs without a group are ready.
local function ready_count_ungrouped()
  return redis.call('LLEN', READY_WAIT) + redis.call('ZCARD', READY_PRIORITIZED)
end

-- ungrouped_push(ids, front, prios): jobs without a group ready (see ready_push).
local function ungrouped_push(ids, front, prios)
  local n = #ids
  if n == 0 then return end
  if prios == 0 then return plain_push(ids, front) end
  prios = prios or ready_priorities(ids)
  local plain, pids, pps = {}, {}, {}
  for i = 1, n do
    if prios[i] == 0 then
      plain[#plain + 1] = ids[i]
    else
      pids[#pids + 1], pps[#pps + 1] = ids[i], prios[i]
    end
  end
  plain_push(plain, front)
  if #pids > 0 then
    prio_push(pids, pps, front)
    since_mark(pids)
  end
end

-- ready_push(ids, front, prios, groups): make the jobs `ids` ready, in order: at the back
-- (front false: they run after every job waiting at their priority, in their group if they
-- have one) or at the front (front true: they run next among their priority there, the last
-- of `ids` first). prios[i] is the priority of ids[i] (prios 0: all are of priority 0);
-- without `prios` each job's recorded priority is read (one HMGET). groups[i] is the group of
-- ids[i] ('' none: add's new jobs); without `groups` each job's is read, when any job has one.
local function ready_push(ids, front, prios, groups)
  local n = #ids
  if n == 0 then return end
  if not groups then
    if not groups_used() then return ungrouped_push(ids, front, prios) end
    groups = groups_lib().of(ids)
  end
  local plain, plainPrios, gids, gnames, gprios = {}, {}, {}, {}, {}
  local anyPrio = prios ~= 0
  if anyPrio then prios = prios or ready_priorities(ids) end
  for i = 1, n do
    local p = anyPrio and prios[i] or 0
    if groups[i] == '' then
      plain[#plain + 1] = ids[i]
      plainPrios[#plain] = p
    else
      gids[#gids + 1] = ids[i]
      gnames[#gids] = groups[i]
      gprios[#gids] = p
    end
  end
  if #gids > 0 then
    groups_lib().push(gids, gnames, gprios, front)
    since_mark(gids)
    -- the ungrouped jobs take part in the round robin as soon as groups exist
    if #plain == 0 and ready_count_ungrouped() > 0 then groups_lib().back('') end
  end
  if #plain > 0 then
    ungrouped_push(plain, front, anyPrio and plainPrios or 0)
    if groups_used() then groups_lib().back('') end
  end
end

-- ready_give_back(ids): jobs leased but never run (released, given back by a closing worker)
-- back at the front of ready in their own order: the first of `ids` runs first (they keep the
-- place they were taken from; ready_push's front puts the last of its ids first).
local function ready_give_back(ids)
  local n, rev = #ids, {}
  for i = 1, n do rev[i] = ids[n + 1 - i] end
  ready_push(rev, true)
end

-- ready_waits(id): true when the job `id` is ready (in wait, prioritized, or its group's
-- waiting jobs). O(log N), or O(N) in the jobs waiting for one of priority 0 (LPOS).
local function ready_waits(id)
  if groups_used() then
    local waits = groups_lib().waiting(id)
    if waits ~= nil then return waits end
  end
  if redis.call('HEXISTS', READY_PRIORITY, id) == 1 then return redis.call('ZSCORE', READY_PRIORITIZED, id) ~= false end
  return redis.call('LPOS', READY_WAIT, id) ~= false
end

-- ready_group_sizes(groups): of `groups` (names), those whose limits set a maxSize: group ->
-- {maxSize, jobs waiting}; empty when none does (add refuses a job past it).
local function ready_group_sizes(groups)
  return groups_lib().sizes(groups)
end

-- ready_set_groups(ids, groups): record the group of jobs not ready yet (add's delayed jobs).
-- The first group of a queue starts the round robin: the ungrouped jobs already ready join it.
local function ready_set_groups(ids, groups)
  local first = not groups_used()
  groups_lib().assign(ids, groups)
  if first and ready_count_ungrouped() > 0 then groups_lib().back('') end
end

-- plain_take(count): take up to `count` jobs of priority 0, the front first: their entries,
-- or false when none.
local function plain_take(count)
  return redis.call('RPOP', READY_WAIT, count)
end

-- prio_take(count, into): take up to `count` jobs of prioritized, lowest score first, and
-- append their ids to the list `into`.
local function prio_take(count, into)
  local popped = redis.call('ZPOPMIN', READY_PRIORITIZED, count)
  local n = #into
  local ids = {}
  for i = 1, #popped, 2 do
    n = n + 1
    into[n] = popped[i]
    ids[#ids + 1] = popped[i]
  end
  since_clear(ids)
end

-- ungrouped_take(count): take up to `count` ready jobs without a group, the one that runs
-- first first: their entries, or false when none is ready.
local function ungrouped_take(count)
  local entries = plain_take(count)
  local rest = tonumber(count) - (entries and #entries or 0)
  if rest > 0 then
    local more = entries or {}
    prio_take(rest, more)
    if #more > 0 then entries = more end
  end
  return entries
end

-- ready_take(count, now): take up to `count` ready jobs: their entries, or false when none
-- is ready. Without groups, the ungrouped order (priority 0 first, then prioritized); with
-- groups, round robin over the groups that can run at `now` and the ungrouped jobs (one
-- more participant), each in its own order (see group_take).
local function ready_take(count, now)
  if not groups_used() then return ungrouped_take(count) end
  local taken = groups_lib().take(tonumber(count), now, ungrouped_take)
  if taken then since_clear(taken) end
  return taken
end

-- ready_remove(id): take the job `id` out of ready; the number of its entries removed
-- (O(log N) for a job of priority > 0 or of a group; O(N) in the jobs of priority 0 ready).
local function ready_remove(id)
  if (groups_used() and groups_lib().remove(id) == 1) or redis.call('ZREM', READY_PRIORITIZED, id) == 1 then
    since_clear({id})
    return 1
  end
  return redis.call('LREM', READY_WAIT, 0, id)
end

-- ready_move(id, priority, front): give the ready job `id` the priority `priority` (a
-- number), at the back of it, or (`front`) at its front; a job already of that priority keeps
-- its place unless `front`. 1 when `id` is ready (moved or kept), 0 when it is not (nothing changed).
local function ready_move(id, priority, front)
  local old = tonumber(redis.call('HGET', READY_PRIORITY, id)) or 0
  if old == priority and not front then
    if groups_used() then
      local waits = groups_lib().waiting(id)
      if waits ~= nil then return waits and 1 or 0 end
    end
    if old ~= 0 then return redis.call('ZSCORE', READY_PRIORITIZED, id) and 1 or 0 end
    return redis.call('LPOS', READY_WAIT, id) and 1 or 0
  end
  if ready_remove(id) == 0 then return 0 end
  ready_set_priority({id, priority})
  ready_push({id}, front == true, {priority})
  return 1
end

-- ready_count(): how many jobs are ready.
local function ready_count()
  return redis.call('LLEN', READY_WAIT) + redis.call('ZCARD', READY_PRIORITIZED) + redis.call('ZCARD', G.wait)
end

-- ready_next(): the entry of the ungrouped job that runs next, else of the first grouped job
-- waiting (by group name), or false when none is ready.
local function ready_next()
  local e = redis.call('LINDEX', READY_WAIT, -1)
  if e then return e end
  e = redis.call('ZRANGE', READY_PRIORITIZED, 0, 0)[1]
  if e then return e end
  local m = redis.call('ZRANGE', G.wait, 0, 0)[1]
  return m and groups_lib().member_id(m) or false
end

-- ready_page(from, size): up to `size` entries, after skipping the first `from`, returned
-- reversed (the one that runs first last), for a page-by-page read: the ungrouped jobs in the
-- order they run, then the ids of the grouped ones (by group, each group in its order).
local function ready_page(from, size)
  local len = redis.call('LLEN', READY_WAIT)
  local page = {}
  if from < len then page = redis.call('LRANGE', READY_WAIT, -(from + size), -(from + 1)) end
  local rest = size - #page
  if rest <= 0 then return page end
  local skip = from > len and from - len or 0
  local more = redis.call('ZRANGE', READY_PRIORITIZED, skip, skip + rest - 1)
  if #more < rest and groups_used() then
    local gskip = math.max(skip - redis.call('ZCARD', READY_PRIORITIZED), 0)
    for _, m in ipairs(redis.call('ZRANGE', G.wait, gskip, gskip + rest - #more - 1)) do
      more[#more + 1] = groups_lib().member_id(m)
    end
  end
  if #more == 0 then return page end
  local out = {}
  for i = #more, 1, -1 do out[#out + 1] = more[i] end
  for i = 1, #page do out[#out + 1] = page[i] end
  return out
end

-- ready_oldest_added(): when the oldest ready job was added (ms), or false when none is
-- ready or its time is unknown: the front of wait (its ULID's time, or the recorded one) or
-- the first of waitSince, whichever is older. O(log N): a LINDEX and a ZRANGE.
local function ready_oldest_added()
  local e = redis.call('LINDEX', READY_WAIT, -1)
  local at = false
  if e then
    local bar = string.find(e, '|', 1, true)
    if bar then e = string.sub(e, 1, bar - 1) end
    at = ulid_time(e) or ready_added_at(e)
  end
  local first = redis.call('ZRANGE', READY_SINCE, 0, 0, 'WITHSCORES')
  if first[2] and (not at or tonumber(first[2]) < at) then at = tonumber(first[2]) end
  return at
end

-- ready_wake(): set the marker, so an idle worker wakes and reserves.
local function ready_wake()
  redis.call('ZADD', READY_MARKER, '0', '0')
end

-- ready_wake_if_any(): ready_wake() when a job is ready.
local function ready_wake_if_any()
  if redis.call('LLEN', READY_WAIT) > 0 or redis.call('ZCARD', READY_PRIORITIZED) > 0
    or (groups_used() and redis.call('ZCARD', G.ready) > 0) then
    redis.call('ZADD', READY_MARKER, '0', '0')
  end
end

-- to_delayed(pairs): make jobs delayed: `pairs` is due time, id, due time, id, …
local function to_delayed(pairs)
  local n = #pairs
  if n == 0 then return end
  for i = 1, n, 500 do redis.call('ZADD', READY_DELAYED, unpack(pairs, i, math.min(i + 499, n))) end
end

-- delayed_remove(id): take the job `id` out of delayed; 1 when it was there, else 0.
local function delayed_remove(id)
  return redis.call('ZREM', READY_DELAYED, id)
end

-- delayed_due_at(id): the due time of the delayed job `id` (a string), or false.
local function delayed_due_at(id)
  return redis.call('ZSCORE', READY_DELAYED, id)
end

-- delayed_count(): how many jobs are delayed.
local function delayed_count()
  return redis.call('ZCARD', READY_DELAYED)
end

-- delayed_first(limit): the `limit` soonest delayed jobs: id, due time, id, due time, …
local function delayed_first(limit)
  return redis.call('ZRANGE', READY_DELAYED, 0, limit - 1, 'WITHSCORES')
end

-- delayed_scan(cursor, count): one ZSCAN page of delayed: {next cursor, {id, due, …}}.
local function delayed_scan(cursor, count)
  return redis.call('ZSCAN', READY_DELAYED, cursor, 'COUNT', count)
end

-- delayed_due_in(now): ms from `now` until the soonest delayed job is due, or a group held
-- by its rate window may run again (0 when one is due already), or false when none is.
local function delayed_due_in(now)
  local first = redis.call('ZRANGE', READY_DELAYED, 0, 0, 'WITHSCORES')
  if groups_used() then
    -- a group held by its rate window is due when the window ends
    local held = redis.call('ZRANGE', G.held, 0, 0, 'WITHSCORES')
    if held[2] and (not first[2] or tonumber(held[2]) < tonumber(first[2])) then first = held end
  end
  if not first[2] then return false end
  local d = tonumber(first[2]) - now
  if d < 0 then d = 0 end
  return d
end

-- delayed_any_due(now): true when a delayed job is due at `now`.
local function delayed_any_due(now)
  return #redis.call('ZRANGE', READY_DELAYED, '-inf', now, 'BYSCORE', 'LIMIT', '0', '1') > 0
end

-- promote_due(now, limit): move up to `limit` delayed jobs due at `now` (ms) to the back
-- of ready at their priority, soonest first; how many moved.
local function promote_due(now, limit)
  local due = redis.call('ZRANGE', READY_DELAYED, '-inf', now, 'BYSCORE', 'LIMIT', '0', limit)
  local n = #due
  if n == 0 then return 0 end
  -- ZREM first: a write that cannot grow memory
  for i = 1, n, 500 do redis.call('ZREM', READY_DELAYED, unpack(due, i, math.min(i + 499, n))) end
  ready_push(due, false)
  return n
end

-- ready_drain(limit): take up to `limit` ready jobs out of ready for good, whatever the
-- order rules (drain): their ids, the front first ({} when none is ready).
local function ready_drain(limit)
  local got = redis.call('RPOP', READY_WAIT, limit) or {}
  for i, e in ipairs(got) do
    local bar = string.find(e, '|', 1, true)
    if bar then got[i] = string.sub(e, 1, bar - 1) end
  end
  if #got < tonumber(limit) then prio_take(tonumber(limit) - #got, got) end
  if groups_used() then
    if #got < tonumber(limit) then groups_lib().drain(tonumber(limit) - #got, got) end
    -- the ungrouped jobs leave the round robin once none is left
    if ready_count_ungrouped() == 0 then redis.call('ZREM', G.ready, '') end
    since_clear(got)
  end
  return got
end

-- delayed_drain(limit): take up to `limit` delayed jobs out of delayed for good (drain),
-- the soonest first: their ids.
local function delayed_drain(limit)
  local got = redis.call('ZPOPMIN', READY_DELAYED, limit)
  local ids = {}
  for i = 1, #got, 2 do ids[#ids + 1] = got[i] end
  return ids
end

-- delayed_page(after, count, rev): a page of delayed jobs in due order (rev: the latest
-- first) after the cursor `after` ({due, id} of the last one read, or false): see
-- zset_page in lua/include/zset-page.lua.
local function delayed_page(after, count, rev)
  return zset_page(READY_DELAYED, after, count, rev)
end


-- ready_left(ids, forget): the jobs `ids` left active (each exactly once, the caller removed
-- them from active): their groups' slots are free (see group_left); `forget` when they finished.
local function ready_left(ids, forget)
  if #ids > 0 and groups_used() then groups_lib().left(ids, forget) end
end

-- ready_forget(ids): the finished jobs `ids`, in no state of ready, lose what ready kept of them.
local function ready_forget(ids)
  if #ids > 0 and groups_used() then groups_lib().forget(ids) end
end

-- ready_groups_of(ids): the group of each job ('' for none; for verify).
local function ready_groups_of(ids)
  if not groups_used() then
    local out = {}
    for i = 1, #ids do out[i] = '' end
    return out
  end
  return groups_lib().of(ids)
end

-- ready_group_counts(cursor, count): one HSCAN page of the groups' active counts, for verify:
-- {next cursor, {group, count, …}}.
local function ready_group_counts(cursor, count)
  local page = redis.call('HSCAN', G.state, cursor, 'MATCH', 'a\0*', 'COUNT', count)
  local out = {}
  for i = 1, #page[2], 2 do
    out[i] = string.sub(page[2][i], 3)
    out[i + 1] = page[2][i + 1]
  end
  return {page[1], out}
end

-- ready_group_stats(top): the number of groups and the `top` busiest (see group_stats).
local function ready_group_stats(top)
  return groups_lib().stats(top)
end
