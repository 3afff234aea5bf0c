--!include deps
-- deps-build: the nodes of a multi-call addFlow (depBuild, lua/include/deps.lua). A parent
-- written before its children are all registered is held open with a build deadline (add's
-- hold "b<ms>", Redis clock); the flow's last call (deps-seal) takes it out of depBuild and
-- seals it. A flow whose writer stopped part-way (a crash, a lost connection) is never
-- sealed: the sweep fails its parents past their deadline (reason flow-incomplete), so none
-- runs early and none waits for ever. A part of deps.lua (its DEP keys), kept apart to bound
-- the file's size.

-- deps_build_done(now, id, keep, events, maxlen): the flow of the building parent `id` is
--   written: it leaves depBuild and, unless `keep` (open: true), is sealed (released once
--   nothing is pending). Returns 'ok', or 'expired' when it was not building (the sweep failed
--   it past its deadline: the flow is incomplete).
local function deps_build_done(now, id, keep, events, maxlen)
  if redis.call('ZREM', DEP.build, id) == 0 then return 'expired' end
  if not keep and redis.call('HDEL', DEP.count, 'o|' .. id) == 1 then deps_release(now, id, events, maxlen) end
  return 'ok'
end

-- deps_build_expired(now, limit): the building parents past their deadline, at most `limit`:
--   out of depBuild, and out of waiting-children (deps_fail) for the caller to move to dead.
--   Returns the ids leaving waiting-children, and 1 when more are past their deadline.
local function deps_build_expired(now, limit)
  local ids = redis.call('ZRANGE', DEP.build, '-inf', now, 'BYSCORE', 'LIMIT', 0, limit)
  if #ids == 0 then return ids, 0 end
  for i = 1, #ids, 500 do redis.call('ZREM', DEP.build, unpack(ids, i, math.min(i + 499, #ids))) end
  local dying = {}
  for _, id in ipairs(ids) do
    if deps_fail(id) then dying[#dying + 1] = id end
  end
  local more = #ids == limit and #redis.call('ZRANGE', DEP.build, '-inf', now, 'BYSCORE', 'LIMIT', 0, 1) or 0
  return dying, more
end
