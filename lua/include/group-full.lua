--!include ready
-- add_group_full(n, job_at, job_group, stored, dedupe, now): add's check of the groups' maxSize
-- (setGroupLimits), read-only, before the call writes anything: the first group of the call
-- whose jobs waiting plus the jobs this call adds to it would pass its maxSize, as
-- {group, maxSize, waiting}, else false. The jobs counted are those the call would add: not a
-- copy of a stored job (`stored`: id -> true), not a second job with an id of the call, not
-- one whose dedupe key is held (in the ZSET `dedupe`, unexpired at `now`) or was claimed by
-- an earlier job of the call. job_at(i) and job_group(i) read job i's fields and group (lua/add.lua).
-- Costs one HMGET of the limits when the call has grouped jobs, and more only when a maxSize applies.
local function add_group_full(n, job_at, job_group, stored, dedupe, now)
  local per, names = {}, {}
  for i = 0, n - 1 do
    local g = job_group(i)
    if g ~= '' and not per[g] then
      per[g] = 0
      names[#names + 1] = g
    end
  end
  if #names == 0 then return false end
  local sizes = ready_group_sizes(names)
  if next(sizes) == nil then return false end
  local seenId, seenKey = {}, {}
  for i = 0, n - 1 do
    local id, _, _, _, dedupeKey = job_at(i)
    local g, dkey = job_group(i), dedupeKey
    local adds = not stored[id] and not seenId[id]
    seenId[id] = true
    if adds and dkey ~= '' then
      if seenKey[dkey] then
        adds = false
      else
        local exp = redis.call('ZSCORE', dedupe, dkey)
        if exp and (exp == 'inf' or tonumber(exp) > now) then adds = false end
      end
      if adds then seenKey[dkey] = true end
    end
    if adds and sizes[g] then per[g] = per[g] + 1 end
  end
  for _, g in ipairs(names) do
    local s = sizes[g]
    if s and per[g] > 0 and s[2] + per[g] > s[1] then return {g, s[1], s[2]} end
  end
  return false
end
