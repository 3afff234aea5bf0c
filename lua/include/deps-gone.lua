--!include deps
-- deps-gone: the children edges of dropped parents (depGone, lua/include/deps.lua): recorded
-- when a parent's job data is dropped (drop_jobs, include/finish), deleted by the sweep a
-- bounded page a call, and checked by verify (deps-verify "edges"). A part of deps.lua (its
-- DEP keys), kept apart to bound the file's size.

-- deps_gone(ids): the jobs `ids` are being deleted (drop_jobs): each one that has children
--   edges is recorded in depGone for the sweep (deps_gone_sweep; one already there for the
--   cascade, deps-cascade.lua, keeps its score: the cascade records it after). One EXISTS when the queue
--   has no edges; else one BYLEX probe (O(log N)) per id, never O(children).
local function deps_gone(ids)
  if redis.call('EXISTS', DEP.children) == 0 then return end
  local gone = {}
  for _, id in ipairs(ids) do
    if #redis.call('ZRANGE', DEP.children, '[' .. id .. '|', '[' .. id .. '|\255', 'BYLEX', 'LIMIT', 0, 1) > 0 then
      gone[#gone + 1], gone[#gone + 2] = 0, id
    end
  end
  if #gone > 0 then redis.call('ZADD', DEP.gone, 'NX', unpack(gone)) end
end

-- DEPS_GONE_PAGE: the most edges deps_gone_sweep deletes in one call.
local DEPS_GONE_PAGE = 1000

-- deps_gone_sweep(limit): delete the edges (depChildren members, depState fields) of the
--   parents in depGone (score 0; the others are the cascade's), at most min(limit,
--   DEPS_GONE_PAGE) edges, a parent leaving depGone once it has none. Returns how many edges
--   went, and 1 when work remains in depGone, the cascade's included (else 0).
local function deps_gone_sweep(limit)
  local budget = math.min(tonumber(limit), DEPS_GONE_PAGE)
  local deleted = 0
  while budget > 0 do
    local first = redis.call('ZRANGE', DEP.gone, 0, 0, 'BYSCORE', 'LIMIT', 0, 1)
    if #first == 0 then break end
    local pid = first[1]
    local members = redis.call('ZRANGE', DEP.children, '[' .. pid .. '|', '[' .. pid .. '|\255', 'BYLEX', 'LIMIT', 0, budget)
    if #members > 0 then
      redis.call('ZREM', DEP.children, unpack(members))
      redis.call('HDEL', DEP.state, unpack(members))
      deleted = deleted + #members
    end
    if #members < budget then redis.call('ZREM', DEP.gone, pid) end
    -- a parent with no edges left costs one of the budget too: the loop stays bounded
    budget = budget - math.max(#members, 1)
  end
  return deleted, redis.call('EXISTS', DEP.gone)
end

-- deps_verify_edges(data, after, count): one page of verify over every children edge, after
--   the edge `after` ("0" from the start): {next edge ("0" at the end), line, …}, a line
--   "deps-orphan <pid> …" per parent of the page whose job data (HASH `data`) is gone while
--   it neither waits for children nor is in depGone (the sweep's cleanup).
local function deps_verify_edges(data, after, count)
  local from = after == '0' and '-' or ('(' .. after)
  local members = redis.call('ZRANGE', DEP.children, from, '+', 'BYLEX', 'LIMIT', 0, count)
  local out = {#members < count and '0' or members[#members]}
  local seen = {}
  for _, m in ipairs(members) do
    local pid = string.match(m, '^([^|]*)|')
    if pid and not seen[pid] then
      seen[pid] = true
      if redis.call('HEXISTS', data, pid) == 0 and not redis.call('ZSCORE', DEP.waiting, pid)
        and not redis.call('ZSCORE', DEP.gone, pid) then
        out[#out + 1] = 'deps-orphan ' .. pid .. ' is gone but its children edges remain'
      end
    end
  end
  return out
end
