--!include dedupe
--!include ready
--!include active
--!include dead
--!include events
--!include deps
--!include deps-cascade
--!include finish
-- cancel-job: the cancel of one job (waiting, delayed, active or waiting-children), shared by
-- cancel.lua and the sweep's cascade (a cancelled parent's children, deps-cascade.lua), and
-- that cascade's bounded page.
--
-- A script passes the keys once, by name, as the table `k`:
--   active, lease, holder  the active group (include/active)
--   dead, done, cancelled  ZSETs of the finished jobs (cancelled takes the job)
--   data     HASH  id -> payload (no field: no such job)
--   meta     HASH  counter cancelled; eventsMaxLen
--   dkey, dedupe, dedupeid  the dedupe key held until the job finishes (freed)
--   events   STREAM one `cancelled` entry (field was), then `drained` when none is left

-- cancel_job(k, id, now, maxlen, cascade): stop the job `id` for good; its parents are told
--   (deps_ended); cascade: when it waited for children, its pending ones are cancelled too
--   (deps_cascade_mark). Retention is the caller's. Returns the state it was in, or false
--   (no such job, or finished). The first write removes the job from its state: it never
--   grows memory, so a cancel runs even with maxmemory reached and noeviction.
local function cancel_job(k, id, now, maxlen, cascade)
  if redis.call('HEXISTS', k.data, id) == 0 then return false end
  if dead_at(k, id) then return false end
  for _, finished in ipairs({k.done, k.cancelled}) do
    if redis.call('ZSCORE', finished, id) then return false end
  end
  local was
  -- an active job's lease and group slot are freed; its group is kept with its data (a retry
  -- runs it in its group), dropped with the data (drop_jobs), as for a completed job
  if active_leave({active = k.active, lease = k.lease, holder = k.holder}, {id}, 'cancelled') == 1 then
    was = 'active'
  elseif delayed_remove(id) == 1 then
    was = 'delayed'
  elseif deps_fail(id) then
    was = 'waiting-children'
    if cascade then deps_cascade_mark(id) end
  elseif ready_remove(id) > 0 then
    was = 'waiting'
  else
    return false
  end
  redis.call('ZADD', k.cancelled, now, id)
  redis.call('HINCRBY', k.meta, 'cancelled', 1)
  free_dedupe(k.dkey, k.dedupe, k.dedupeid, {id})
  -- its parents are told (lua/include/deps.lua): one HEXISTS without flows
  deps_ended({meta = k.meta}, {id}, 'cancelled')
  emit_event(k.events, maxlen, 'cancelled', id, 'was', was)
  if was ~= 'delayed' and maxlen > 0 and active_count(k) == 0 and ready_count() == 0 then
    emit_event(k.events, maxlen, 'drained', '')
  end
  return was
end

-- cancel_retain(job, cancelled, keep, id, now): the cancelled jobs' count `keep` after the
--   cancel of `id` (cancel.lua, and each job the cascade cancels): with a keep of 0 this job
--   keeps no data; then the oldest 2 with data beyond the newest `keep` lose it (a lowered
--   keep catches up, as complete's trim does), their ids kept unlisted below the others
--   (CANCELLED_GONE, include/finish); ids beyond the newest max(keep, 1000) are forgotten,
--   at most 2 a call. `job`: the per-job hashes (drop_jobs).
local function cancel_retain(job, cancelled, keep, id, now)
  local count = redis.call('ZCARD', cancelled)
  local function unlist(out)
    local ids, moved = {}, {}
    for i = 1, #out, 2 do
      ids[#ids + 1] = out[i]
      moved[#moved + 1] = string.format('%d', tonumber(out[i + 1]) - CANCELLED_GONE)
      moved[#moved + 1] = out[i]
    end
    drop_jobs(job, ids, false)
    redis.call('ZADD', cancelled, unpack(moved))
  end
  if keep == 0 then unlist({id, now}) end
  local gone = redis.call('ZCOUNT', cancelled, '-inf', '(0')
  if count - keep > gone then
    unlist(redis.call('ZRANGE', cancelled, gone, math.min(gone + 1, count - keep - 1), 'WITHSCORES'))
  end
  local remember = keep > 1000 and keep or 1000
  local excess = count - remember
  if excess > 2 then excess = 2 end
  if excess > 0 then
    local old = redis.call('ZPOPMIN', cancelled, excess)
    local oldIds = {}
    for i = 1, #old, 2 do oldIds[#oldIds + 1] = old[i] end
    drop_jobs(job, oldIds, false)
  end
end

-- deps_cascade_sweep(k, limit, now, maxlen, job): a bounded page of the cascade (deps-cascade.lua):
--   at most min(limit, DEPS_GONE_PAGE) edges read or jobs cancelled. A parent's pending child
--   of this queue is queued (DEPS_CANCEL), one of another queue gets a note in the outbox;
--   a queued child no other parent waits on is cancelled (cascading in turn), under the
--   cancelled jobs' count as a cancel is (cancel_retain; `job` the per-job hashes). Returns
--   how many jobs it cancelled.
local function deps_cascade_sweep(k, limit, now, maxlen, job)
  local budget = math.min(tonumber(limit), DEPS_GONE_PAGE)
  local cancelled = 0
  while budget > 0 do
    local first = redis.call('ZRANGE', DEP.gone, DEPS_CASCADE, DEPS_CANCEL, 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
    if #first == 0 then break end
    local id = first[1]
    if tonumber(first[2]) == DEPS_CANCEL then
      redis.call('ZREM', DEP.gone, id)
      budget = budget - 1
      if not deps_still_wanted(id) and cancel_job(k, id, now, maxlen, true) then
        cancelled = cancelled + 1
        -- FM1 (the model test, test/model/FINDINGS.md): the cancelled count holds for the jobs a cascade cancels too
        cancel_retain(job, k.cancelled, tonumber(redis.call('HGET', k.meta, 'keepCancelled')) or 1000, id, now)
      end
      -- a child dropped while queued: its own edges, if any, go the dropped way
      if redis.call('HEXISTS', k.data, id) == 0 then deps_gone({id}) end
    else
      local cursor = redis.call('HGET', DEP.count, 'c|' .. id)
      local from = cursor and ('(' .. cursor) or ('[' .. id .. '|')
      local members = redis.call('ZRANGE', DEP.children, from, '[' .. id .. '|\255', 'BYLEX', 'LIMIT', 0, budget)
      local notes = {}
      if #members > 0 then
        local states = redis.call('HMGET', DEP.state, unpack(members))
        for i, m in ipairs(members) do
          if states[i] and not string.find(states[i], '|', 1, true) then
            local cq, cid = string.match(m, '^[^|]*|([^|]*)|(.*)$')
            if cq == '' then
              deps_cancel_asked(cid, '|' .. id)
            else
              notes[#notes + 1] = cq .. '|' .. cid .. '|' .. id .. '|parent-cancelled'
            end
          end
        end
      end
      deps_cascade_notes(notes)
      if #members < budget then
        -- every edge done: the parent leaves the list (its edges go with its data, deps_gone)
        redis.call('ZREM', DEP.gone, id)
        redis.call('HDEL', DEP.count, 'c|' .. id)
        if redis.call('HEXISTS', k.data, id) == 0 then deps_gone({id}) end
      else
        redis.call('HSET', DEP.count, 'c|' .. id, members[#members])
      end
      budget = budget - math.max(#members, 1)
    end
  end
  return cancelled
end
