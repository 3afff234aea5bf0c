--!include zset-page
--!include ready
--!include deps
--!include active
--!include dead
-- job-page: one page of the jobs in one state, the same pages and cursors for every listing
-- (lua/job-list.lua, the engine's getJobs; lua/jobs-peek.lua, the dashboard's).
--
-- job_page(state, rev, cursor, count, sets, put, out): the page of `state` after `cursor`
--   ("" for the first; waiting: the jobs read so far; else "<score>:<id>"), at most `count`
--   jobs, in order (rev: the reverse). Waiting jobs are read through ready.lua by position,
--   delayed ones through ready.lua by due time, active and dead through active.lua and
--   dead.lua, the others from their sorted set in `sets` (by state name: active, dead,
--   completed, cancelled) by score. Each job goes to
--   put(entry, score) (entry: the id, or a wait-list entry "id|…|payload"; score "" for a
--   waiting job), which answers false once the page is full (by bytes): the page stops there.
--   Sets out[1] to the next page's cursor ("" when the state has no more) and out[2] to the
--   jobs in the state. O(log N + count).
local function job_page(state, rev, cursor, count, sets, put, out)
  if state == 'waiting' then
    local n, from = ready_count(), tonumber(cursor) or 0
    out[2] = n
    local at, size = from, count
    if rev then
      at = n - from - count
      if at < 0 then size, at = count + at, 0 end
    end
    local page = size > 0 and ready_page(at, size) or {}
    local read = 0
    local first, last, step = #page, 1, -1
    if rev then first, last, step = 1, #page, 1 end
    for i = first, last, step do
      read = read + 1
      if not put(page[i], '') then break end
    end
    if from + read < n then out[1] = tostring(from + read) end
    return
  end
  local after = false
  if cursor ~= '' then
    local colon = string.find(cursor, ':', 1, true)
    after = {string.sub(cursor, 1, colon - 1), string.sub(cursor, colon + 1)}
  end
  local page, last, ended
  if state == 'delayed' then
    page, last, ended = delayed_page(after, count, rev)
    out[2] = delayed_count()
  elseif state == 'waiting-children' then
    -- parents waiting for their children, by when they began (lua/include/deps.lua)
    page, last, ended = deps_waiting_page(after, count, rev)
    out[2] = deps_waiting_count()
  elseif state == 'active' then
    page, last, ended = active_list(sets, after, count, rev)
    out[2] = active_count(sets)
  elseif state == 'dead' then
    page, last, ended = dead_list(sets, after, count, rev)
    out[2] = dead_count(sets)
  else
    -- cancelled ids kept without their data (scored below 0: CANCELLED_GONE) are not listed
    local gone = state == 'cancelled' and redis.call('ZCOUNT', sets[state], '-inf', '(0') or 0
    page, last, ended = zset_page(sets[state], after, count, rev, gone)
    out[2] = redis.call('ZCARD', sets[state]) - gone
  end
  for i = 1, #page, 2 do
    if not put(page[i], page[i + 1]) then
      if i + 1 < #page or not ended then out[1] = page[i + 1] .. ':' .. page[i] end
      return
    end
  end
  if not ended and last then out[1] = last[1] .. ':' .. last[2] end
end
