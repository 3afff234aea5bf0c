-- ready: the one owner of the jobs that are ready to run or delayed. No script names
-- their keys: a script that moves a job into or out of them, or reads them, declares the
-- READY_KEYS group of src/engine/model/Keys.ts as its last KEYS (header line `KEYS[i..] ready`)
-- and calls the functions below (test/scripts/script-descriptors.test.ts checks both). So an
-- ordering rule (a priority, fairness) is a change to this file and to READY_KEYS.
--
--   wait     LIST  ids ready to run: "<id>" (or "<id>|<max>|<payload>", written by earlier
--                  versions). The back is the left end (producers push there), the front
--                  the right end (reserve takes from there): a job pushed to the front runs next.
--   delayed  ZSET  id -> due time (ms, Redis clock)
--   marker   ZSET  the wake-up marker idle workers block on (member "0")
--   gcount, gwait, gready, gheld, gjob, gstate, gindex  the jobs of groups (add's `group` option), in
--            lua/include/groups.lua, included below: ready_take serves the groups that can
--            run and the ungrouped jobs (one participant among the groups) round robin
--
-- Counts and limits may be numbers or decimal strings (a string saves Redis a "%.17g").
-- A list of ids is pushed 500 at a time (Lua unpacks only a few thousand values at once).
local READY_WAIT, READY_DELAYED, READY_MARKER = KEYS[#KEYS - 2], KEYS[#KEYS - 1], KEYS[#KEYS]
local G = {
  wait = KEYS[#KEYS - 8], ready = KEYS[#KEYS - 7], held = KEYS[#KEYS - 6], job = KEYS[#KEYS - 5],
  state = KEYS[#KEYS - 4], index = KEYS[#KEYS - 3], count = KEYS[#KEYS - 9], plain = READY_WAIT,
  marker = READY_MARKER,
}
--!include groups

-- plain_push(ids, front): the ungrouped jobs `ids` ready (see ready_push).
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

-- plain_take(count): up to `count` ungrouped ready jobs, the front first, or false.
local function plain_take(count)
  return redis.call('RPOP', READY_WAIT, count)
end

-- ready_push(ids, front, groups): make the jobs `ids` ready, in order: at the back (front
-- false: they run after every job waiting in their group, or of the ungrouped jobs) or at
-- the front (front true: they run next there, the last of `ids` first). `groups` (add's new
-- jobs: a group per id, '' for none) saves looking the groups up in gjob.
local function ready_push(ids, front, groups)
  if #ids == 0 then return end
  if not groups then
    if not groups_used() then return plain_push(ids, front) end
    groups = group_of(ids)
  end
  local plain, gids, gnames = {}, {}, {}
  for i, id in ipairs(ids) do
    if groups[i] == '' then
      plain[#plain + 1] = id
    else
      gids[#gids + 1] = id
      gnames[#gnames + 1] = groups[i]
    end
  end
  if #gids > 0 then
    group_push(gids, gnames, front)
    -- the ungrouped jobs take part in the round robin as soon as groups exist
    if #plain == 0 and redis.call('LLEN', READY_WAIT) > 0 then group_back('') end
  end
  if #plain > 0 then
    plain_push(plain, front)
    if groups_used() then group_back('') end
  end
end

-- ready_take(count, now): take up to `count` ready jobs: their entries, or false when none
-- is ready. Without groups, the ungrouped jobs front first; with groups, round robin over
-- the groups that can run and the ungrouped jobs (see group_take), each in its own order.
local function ready_take(count, now)
  if not groups_used() then return plain_take(count) end
  return group_take(tonumber(count), now, plain_take)
end

-- ready_remove(id): take the job `id` out of ready; the number of its entries removed
-- (O(N) in the ungrouped jobs ready; O(log N) for a grouped one).
local function ready_remove(id)
  local n = redis.call('LREM', READY_WAIT, 0, id)
  if n > 0 then return n end
  return group_remove(id)
end

-- ready_count(): how many jobs are ready.
local function ready_count()
  return redis.call('LLEN', READY_WAIT) + redis.call('ZCARD', G.wait)
end

-- ready_next(): the entry of the ungrouped job that runs next, else of the first grouped job
-- waiting (by group name), or false when none is ready.
local function ready_next()
  local e = redis.call('LINDEX', READY_WAIT, -1)
  if e then return e end
  local m = redis.call('ZRANGE', G.wait, 0, 0)[1]
  if not m then return false end
  return group_member_id(m)
end

-- ready_page(from, size): up to `size` entries, counted from the front after skipping
-- `from`, in list order (the front last), for a page-by-page read: the ungrouped jobs, then
-- the ids of the grouped ones (by group, in order).
local function ready_page(from, size)
  local n = redis.call('LLEN', READY_WAIT)
  local out = {}
  if from < n then out = redis.call('LRANGE', READY_WAIT, -(from + size), -(from + 1)) end
  local rest = from + size - n
  if rest > 0 then
    local start = math.max(from - n, 0)
    for _, m in ipairs(redis.call('ZRANGE', G.wait, start, rest - 1)) do
      out[#out + 1] = group_member_id(m)
    end
  end
  return out
end

-- ready_wake(): set the marker, so an idle worker wakes and reserves.
local function ready_wake()
  redis.call('ZADD', READY_MARKER, '0', '0')
end

-- ready_wake_if_any(): ready_wake() when a job is ready.
local function ready_wake_if_any()
  if redis.call('LLEN', READY_WAIT) > 0 or (groups_used() and redis.call('ZCARD', G.ready) > 0) then
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

-- delayed_due_in(now): ms from `now` until the soonest delayed job is due (0 when one is
-- due already), or false when none is delayed.
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
-- of ready, soonest first; how many moved.
local function promote_due(now, limit)
  local due = redis.call('ZRANGE', READY_DELAYED, '-inf', now, 'BYSCORE', 'LIMIT', '0', limit)
  local n = #due
  for i = 1, n, 500 do
    local j = math.min(i + 499, n)
    redis.call('ZREM', READY_DELAYED, unpack(due, i, j))
    if groups_used() then ready_push({unpack(due, i, j)}, false) else redis.call('LPUSH', READY_WAIT, unpack(due, i, j)) end
  end
  return n
end

-- ready_drain(limit): take up to `limit` ready jobs out of ready for good, whatever the
-- order rules (drain): their ids, the front first ({} when none is ready).
local function ready_drain(limit)
  local got = redis.call('RPOP', READY_WAIT, limit)
  if not got then return {} end
  for i, e in ipairs(got) do
    local bar = string.find(e, '|', 1, true)
    if bar then got[i] = string.sub(e, 1, bar - 1) end
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
-- zset_page in lua/include/zset-page.lua (include it before this file).
local function delayed_page(after, count, rev)
  return zset_page(READY_DELAYED, after, count, rev)
-- ready_left(ids, forget): the jobs `ids` left active (each exactly once, the caller removed
-- them from active): their groups' slots are free (see group_left); `forget` when they finished.
local function ready_left(ids, forget)
  group_left(ids, forget)
end

-- ready_groups_of(ids): the group of each job ('' for none; for verify).
local function ready_groups_of(ids)
  if not groups_used() then
    local out = {}
    for i = 1, #ids do out[i] = '' end
    return out
  end
  return group_of(ids)
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
  return group_stats(top)
end

-- ready_forget(ids): the finished jobs `ids`, in no state of ready, lose what ready kept of them.
local function ready_forget(ids)
  group_forget(ids)
end
