--!include ready
--!include active
--!include deps
--!include deps-gone
-- finish: what is kept of a job that finished (completed, cancelled, purged from dead,
-- or trimmed from the retained completed jobs), and dropping it. The per-job hashes of
-- ready.lua (a job's priority) are dropped with the others.
--
-- A script passes the keys once, by name, as the table `k`: done, result and the per-job
-- hashes a job's data is in (the list is written once, in drop_jobs: a new per-job hash
-- goes there).
--   data, max, fails, lost, err, progress, timeout, dkey, backoff, errors, logs  HASH
--            id -> the job's payload, maxAttempts, failures, lost leases, last error, progress,
--            own timeout, dedupe key, own backoff, errors per attempt, log lines
--   done     ZSET  id -> completion time of a retained completed job
--   result   HASH  id -> its result
--   holder   HASH  id -> the holder entry a completed job kept (lua/include/active.lua): passed by
--            the scripts that drop completed jobs (complete, reserve, sweep, clean, job-retry)

-- retain_jobs(k, now, ids, results): keep the completed jobs `ids` (with their data) as
--   done at `now`, with each one's result (results[i], '' for none): one ZADD, one HSET.
local function retain_jobs(k, now, ids, results)
  local zargs, rargs = {}, {}
  for i, id in ipairs(ids) do
    zargs[2 * i - 1], zargs[2 * i] = now, id
    if results[i] ~= '' then
      rargs[#rargs + 1] = id
      rargs[#rargs + 1] = results[i]
    end
  end
  redis.call('ZADD', k.done, unpack(zargs))
  if #rargs > 0 then redis.call('HSET', k.result, unpack(rargs)) end
end

-- drop_jobs(k, ids, withResult): delete what is kept of the finished jobs `ids`: their
--   fields in every per-job hash (and their results when withResult). The hashes other than
--   data and result are empty in a queue without failures, progress, own timeouts,
--   maxAttempts, dedupe keys, priorities or own backoffs: one EXISTS then saves their HDELs.
local function drop_jobs(k, ids, withResult)
  if #ids == 0 then return end
  -- a caller that does not pass the backoff hash would leave its fields behind: a bug
  if not (k.backoff and k.errors and k.logs) then
    error('drop_jobs: the keys table lacks backoff, errors or logs (the caller must declare them)')
  end
  redis.call('HDEL', k.data, unpack(ids))
  if k.holder then active_forget(k, ids) end
  if withResult then redis.call('HDEL', k.result, unpack(ids)) end
  local rest = {k.max, k.fails, k.lost, k.err, k.progress, k.timeout, k.dkey, k.backoff, k.errors, k.logs}
  for _, key in ipairs(ready_job_hashes()) do rest[#rest + 1] = key end
  if redis.call('EXISTS', unpack(rest)) > 0 then
    -- a deleted child's parents are told (lua/include/deps.lua: depParents is one of `rest`)
    deps_dropped(ids)
    for _, key in ipairs(rest) do redis.call('HDEL', key, unpack(ids)) end
  end
  -- a dropped parent's children edges: recorded for the sweep (deps_gone, include/deps)
  deps_gone(ids)
  -- a job's group record (lua/include/ready.lua): one HDEL, only in a queue with groups, so
  -- it does not make every drop delete from every per-job hash
  ready_forget(ids)
end

-- ERRORS_KEPT: how many of a job's failed attempts its errors field keeps (the newest).
local ERRORS_KEPT = 10

-- errors_push(key, id, attempt, now, err): add the error `err` (JSON text of an object, as the
--   job's last error) of the job's failed attempt `attempt` to its errors (HASH `key`, one
--   object a line, oldest first: `{"attempt":n,"at":ms,…err's fields}`), keeping the newest
--   ERRORS_KEPT. Each error is bounded by the client (model/Failure.ts) or written here, so
--   the field is too. JSON text holds no raw newline, so a line is one error. O(size).
local function errors_push(key, id, attempt, now, err)
  if string.sub(err, 1, 1) ~= '{' then return end
  local rest = string.sub(err, 2)
  local entry = '{"attempt":' .. string.format('%d', attempt) .. ',"at":' .. string.format('%d', now) ..
    (rest == '}' and '' or ',') .. rest
  local text = redis.call('HGET', key, id)
  text = text and (text .. '\n' .. entry) or entry
  local lines = 1
  for _ in string.gmatch(text, '\n') do lines = lines + 1 end
  local from = 1
  while lines > ERRORS_KEPT do
    from = string.find(text, '\n', from, true) + 1
    lines = lines - 1
  end
  redis.call('HSET', key, id, from > 1 and string.sub(text, from) or text)
end

-- CANCELLED_GONE: a cancelled job whose data a count trimmed keeps its id in cancelled for the
--   fence (extend, complete: JobCancelled), scored its cancel time minus this: below 0, so no
--   listing or clean sees it (G2), in the same order, and trimmed by age as the others.
local CANCELLED_GONE = 1e13

-- trim_oldest(k, set, count, most): the finishing scripts' count bound: delete the oldest
--   jobs of `set` (done, cancelled or dead) beyond the newest `count`, at most `most` of them
--   (ZPOPMIN: O(log N) each), and everything kept of them (drop_jobs). Returns how many.
local function trim_oldest(k, set, count, most)
  local excess = redis.call('ZCARD', set) - count
  if excess > most then excess = most end
  if excess <= 0 then return 0 end
  local old = redis.call('ZPOPMIN', set, excess)
  local ids = {}
  for i = 1, #old, 2 do ids[#ids + 1] = old[i] end
  drop_jobs(k, ids, true)
  return #ids
end

-- trim_done(k, count, n): a completion's count bound on done, in batches: past count + slack
--   (count / 16, at most 256), the oldest back to `count` by rank, at most slack + 2n a call.
local function trim_done(k, count, n)
  local slack = math.min(math.floor(count / 16), 256)
  local excess = redis.call('ZCARD', k.done) - count
  if excess <= slack then return 0 end
  if excess > slack + 2 * n then excess = slack + 2 * n end
  local ids = redis.call('ZRANGE', k.done, 0, excess - 1)
  redis.call('ZREMRANGEBYRANK', k.done, 0, excess - 1)
  drop_jobs(k, ids, true)
  return #ids
end

-- trim_finished(k, set, now, count, ageMs, limit): delete the oldest finished jobs of `set`
--   (a ZSET id -> time it finished: done, cancelled or dead) beyond the newest `count` and
--   those that finished before now - ageMs (count or ageMs nil: no such bound), at most
--   `limit` of them: out of `set`, and everything kept of them (drop_jobs, results too).
--   `low` (optional, default -inf): only scores from it.
--   O(log N + limit): the oldest by rank, then by score (ZRANGE … BYSCORE LIMIT), never a scan.
--   Returns trimmed, more (1 when jobs beyond the bounds remain: call again).
local function trim_finished(k, set, now, count, ageMs, limit, low)
  local old, more = {}, 0
  if count then
    local excess = redis.call('ZCARD', set) - count
    if excess > limit then excess, more = limit, 1 end
    if excess > 0 then old = redis.call('ZRANGE', set, 0, excess - 1) end
  end
  if ageMs and #old < limit then
    -- the count's excess are the oldest: when they are old enough they lead the range, skip them
    local room = limit - #old
    local aged = redis.call('ZRANGE', set, low or '-inf', '(' .. (now - ageMs), 'BYSCORE', 'LIMIT', #old, room + 1)
    if #aged > room then
      more = 1
      aged[#aged] = nil
    end
    for _, id in ipairs(aged) do old[#old + 1] = id end
  end
  for i = 1, #old, 500 do
    local ids = {unpack(old, i, math.min(i + 499, #old))}
    redis.call('ZREM', set, unpack(ids))
    drop_jobs(k, ids, true)
  end
  return #old, more
end
