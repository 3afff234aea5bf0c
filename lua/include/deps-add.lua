--!include deps
-- deps-add: add's side of the dependencies (lua/include/deps.lua): the deps field of each job
-- an add call carries, read (deps_take) and written (deps_added). A part of deps.lua (its DEP
-- keys), kept apart to bound the file's size.

-- deps_new(), deps_take(D, id, field, delay), deps_added(meta, D, now, events, maxlen): add's
--   dependencies. field (one per job, ARGV[4 + 11n..] of add) is "" for none, else
--   "<hold>;<parents>[;<policy>]": hold "1" = the job waits for children, open (takes
--   children until sealed by deps-children), "s" = waits and is sealed at the end of this
--   call (its children all come in it), "b<ms>" = waits, open, building: a node of a
--   multi-call addFlow, sealed by deps-seal, failed by the sweep once <ms> passed
--   (include/deps-build); its delay applies once released. parents "<queue>|<id>,…" = the
--   jobs waiting for it (queue "" = this one). policy: the job has one parent, in this queue,
--   added before it (this call or an earlier one): it is registered there now, atomically
--   with its add (deps_register); being a new job of this call, its parents record and edge
--   are written without reading them first. deps_take notes a job added (true when it is
--   held: add leaves it out of ready and delayed), parsing a field once for a run of equal
--   ones (a parent's children); deps_added writes them all.
local function deps_new()
  return {ids = {}, parents = {}, hold = {}, delays = {}, seal = {}, build = {}, reg = {}, regOrder = {}, fresh = {},
    freshParents = {}, last = nil, lastParsed = nil}
end
local function deps_take(D, id, field, delay)
  if field == '' then return false end
  -- the children of one parent carry the same field: parsed once (Lua strings are interned,
  -- so the comparison is a pointer's)
  local f = D.lastParsed
  if field ~= D.last then
    local hold, parents, policy = string.match(field, '^([^;]*);([^;]*);?(.*)$')
    f = {hold = hold, h = string.sub(hold, 1, 1), parents = parents, policy = policy}
    if policy ~= '' then
      local pid = string.sub(parents, 2)
      f.pid, f.prefix = pid, pid .. '||'
      f.reg = D.reg[pid]
      if not f.reg then
        f.reg = {members = {}, policies = {}}
        D.reg[pid] = f.reg
        D.regOrder[#D.regOrder + 1] = pid
      end
    end
    D.last, D.lastParsed = field, f
  end
  if f.parents ~= '' then
    if f.policy ~= '' then
      -- registered here with its one parent: a new job (an id this client drew, not stored),
      -- so its parents record and its edge are new too (deps_added writes them unread)
      D.fresh[#D.fresh + 1], D.freshParents[#D.fresh + 1] = id, f.parents
      local r = f.reg
      r.members[#r.members + 1], r.policies[#r.members + 1] = f.prefix .. id, f.policy
    else
      D.ids[#D.ids + 1] = id
      D.parents[#D.ids] = f.parents
    end
  end
  local h = f.h
  if h ~= '1' and h ~= 's' and h ~= 'b' then return false end
  D.hold[#D.hold + 1], D.delays[#D.hold + 1] = id, delay
  if h == 's' then
    D.seal[#D.seal + 1] = id
  elseif h == 'b' then
    D.build[#D.build + 1], D.build[#D.build + 2] = tonumber(string.sub(f.hold, 2)), id
  end
  return true
end
local function deps_added(meta, D, now, events, maxlen)
  deps_link(meta, D.ids, D.parents)
  if #D.fresh > 0 then
    for i = 1, #D.fresh, 500 do
      local args = {}
      for k = i, math.min(i + 499, #D.fresh) do args[#args + 1], args[#args + 2] = D.fresh[k], D.freshParents[k] end
      redis.call('HSET', DEP.parents, unpack(args))
    end
    redis.call('HSET', meta, 'deps', '1')
  end
  deps_hold(meta, D.hold, D.delays, now)
  for i = 1, #D.build, 2 do D.build[i] = now + D.build[i] end
  for i = 1, #D.build, 500 do redis.call('ZADD', DEP.build, unpack(D.build, i, math.min(i + 499, #D.build))) end
  -- a parent no longer waiting and open (failed meanwhile) takes no children: they run alone
  for _, pid in ipairs(D.regOrder) do
    if redis.call('HEXISTS', DEP.count, 'o|' .. pid) == 1 then
      deps_register(pid, D.reg[pid].members, D.reg[pid].policies, true)
    end
  end
  for _, id in ipairs(D.seal) do
    redis.call('HDEL', DEP.count, 'o|' .. id)
    deps_release(now, id, events, maxlen)
  end
end
