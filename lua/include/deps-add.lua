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
--   with its add (deps_register). deps_take notes a job added (true when it is held: add
--   leaves it out of ready and delayed); deps_added writes them all.
local function deps_new()
  return {ids = {}, parents = {}, hold = {}, delays = {}, seal = {}, build = {}, reg = {}, regOrder = {}}
end
local function deps_take(D, id, field, delay)
  if field == '' then return false end
  local hold, parents, policy = string.match(field, '^([^;]*);([^;]*);?(.*)$')
  if parents ~= '' then
    D.ids[#D.ids + 1] = id
    D.parents[#D.ids] = parents
    if policy ~= '' then
      local pid = string.sub(parents, 2)
      local r = D.reg[pid]
      if not r then
        r = {members = {}, policies = {}}
        D.reg[pid] = r
        D.regOrder[#D.regOrder + 1] = pid
      end
      r.members[#r.members + 1], r.policies[#r.members + 1] = pid .. '||' .. id, policy
    end
  end
  local h = string.sub(hold, 1, 1)
  if h ~= '1' and h ~= 's' and h ~= 'b' then return false end
  D.hold[#D.hold + 1], D.delays[#D.hold + 1] = id, delay
  if h == 's' then
    D.seal[#D.seal + 1] = id
  elseif h == 'b' then
    D.build[#D.build + 1], D.build[#D.build + 2] = tonumber(string.sub(hold, 2)), id
  end
  return true
end
local function deps_added(meta, D, now, events, maxlen)
  deps_link(meta, D.ids, D.parents)
  deps_hold(meta, D.hold, D.delays, now)
  for i = 1, #D.build, 2 do D.build[i] = now + D.build[i] end
  for i = 1, #D.build, 500 do redis.call('ZADD', DEP.build, unpack(D.build, i, math.min(i + 499, #D.build))) end
  -- a parent no longer waiting and open (failed meanwhile) takes no children: they run alone
  for _, pid in ipairs(D.regOrder) do
    if redis.call('HEXISTS', DEP.count, 'o|' .. pid) == 1 then
      deps_register(pid, D.reg[pid].members, D.reg[pid].policies)
    end
  end
  for _, id in ipairs(D.seal) do
    redis.call('HDEL', DEP.count, 'o|' .. id)
    deps_release(now, id, events, maxlen)
  end
end
