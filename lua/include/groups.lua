-- groups: fair groups (add's `group` option), the part of ready.lua (which includes this file
-- after naming its keys in the table G) that holds the ready jobs of groups. No other file
-- calls these functions but ready.lua and the group scripts (group-limits, group-pause,
-- group-list), through ready.lua.
--
--   G.wait   ZSET  score 0, "<group>\0<order>\0<id>" per waiting grouped job: a group's jobs
--                  in order read BYLEX; <order> is 23 digits made by ready_order (include/ready):
--                  the job's priority (7), then its place (16): 10^15 - sequence at the front
--                  (released, reclaimed: they run next among their priority), 10^15 + sequence
--                  at the back (the sequence: push order, kept in state)
--   G.ready  ZSET  participant -> turn: the groups that can run now (jobs waiting, not paused,
--                  under their concurrency, not held), and "" for the ungrouped jobs while any
--                  grouped one exists. Reserve serves the lowest turns first and puts each
--                  participant it served at the back (highest turn + 1): a round robin
--   G.held   ZSET  group -> time (ms, Redis clock) its rate window ends: out of G.ready till then
--                  while the window is full; an emptied group whose window is open is kept here
--                  too (group_tidy), and runs again at once if a job comes while there is room;
--                  "inf" for a group at its concurrency (so a change of the default finds it)
--   G.job    HASH  id -> "<group>\0<order>" of each job added with a group, while it exists
--   G.state  HASH  "a\0<g>" jobs active (a 0 stays while the group has jobs waiting), "p\0<g>"
--                  paused, "c\0<g>" own limits and "c\0" the default ("<concurrency>|<max>|<perMs>", "" for none), "w\0<g>" rate window
--                  "<start>|<leased>", "seq" the order sequence, "lim" how many groups have own
--                  limits (with no default and none, serving and ending read no limits; set at
--                  the first push, so a state begun before it keeps reading them)
--   G.index  ZSET  score 0, every group with jobs waiting or active, own limits, paused, or an open
--                  rate window under the default limits
--   G.count  ZSET  unused: written by earlier versions (a group's jobs waiting, kept on every
--                  move); a group's waiting jobs are counted when asked (group_waiting_count)
-- Group names are 1..128 bytes without "\0" (checked by the client). A queue that never saw
-- a group has no G.job key: the one EXISTS of groups_used() per call is all it pays.

local g_used = nil
-- groups_used(): true when a job with a group exists (read once per call).
local function groups_used()
  if g_used == nil then g_used = redis.call('EXISTS', G.job) == 1 end
  return g_used
end

local GL = nil
-- groups_lib(): the group functions, built once per call and only when a script reaches a
-- group (a queue without groups never builds them: a Lua main chunk holds at most 200 locals,
-- and these are one local there).
local function groups_lib()
  if GL then return GL end

  -- the most held groups a change of the default limits looks at again (group_set_limits)
  local GROUP_HELD_VISIT = 1000
  -- the most groups stats looks at for its busiest (group_stats)
  local GROUP_BUSIEST_LOOK = 49
  -- without group limits, a round of group_take serves at least this many participants (when
  -- the call wants that many) and takes up to GROUP_TURN jobs of each: a 16-job call serves 4
  -- groups, not 16 (every group costs its own commands, on reserve and on complete)
  local GROUP_ROUND_MIN, GROUP_TURN = 4, 4
  -- group_limited's answer, once read this call
  local limited_read = nil

  -- group_waiting_count(g): how many jobs the group has waiting (O(log N), ZLEXCOUNT).
  local function group_waiting_count(g)
    return redis.call('ZLEXCOUNT', G.wait, '[' .. g .. '\0', '(' .. g .. '\1')
  end

  -- group_limits(own, default): concurrency, max, perMs, maxSize (false for none) of a group
  -- (a spec "<concurrency>|<max>|<perMs>" with "|<maxSize>" after it when one is set).
  local function group_limits(own, default)
    local spec = own or default
    if not spec then return false, false, false, false end
    local _, _, c, m, p, z = string.find(spec, '^(%d*)|(%d*)|(%d*)|?(%d*)$')
    return tonumber(c) or false, tonumber(m) or false, tonumber(p) or false, tonumber(z) or false
  end

  -- group_sizes(groups): for each of `groups` whose limits set a maxSize, {maxSize, its jobs
  -- waiting now}; an empty table when none does. One HMGET for the limits, and a ZLEXCOUNT
  -- per group with a maxSize.
  local function group_sizes(groups)
    local fields = {'c\0'}
    for i, g in ipairs(groups) do fields[i + 1] = 'c\0' .. g end
    local specs = redis.call('HMGET', G.state, unpack(fields))
    local out = {}
    for i, g in ipairs(groups) do
      local _, _, _, z = group_limits(specs[i + 1], specs[1])
      if z then out[g] = {z, group_waiting_count(g)} end
    end
    return out
  end

  -- group_window(w, per): when the rate window `w` ("<start>|<leased>", or false) ends (ms)
  -- and how many it leased, while it is open under a window of `per` ms (false: no rate
  -- limit); false when none is open now (Redis clock).
  local function group_window(w, per)
    if not (w and per) then return false, 0 end
    local _, _, s, c = string.find(w, '^(%d+)|(%d+)$')
    if not s then return false, 0 end
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    if now >= tonumber(s) + per then return false, 0 end
    return tonumber(s) + per, tonumber(c)
  end

  -- group_waits(g): true when the group has a job waiting.
  local function group_waits(g)
    return #redis.call('ZRANGE', G.wait, '[' .. g .. '\0', '(' .. g .. '\1', 'BYLEX', 'LIMIT', 0, 1) > 0
  end

  -- group_back(member): put `member` at the back of the round robin (once: NX).
  local function group_back(member)
    local top = redis.call('ZRANGE', G.ready, -1, -1, 'WITHSCORES')
    redis.call('ZADD', G.ready, 'NX', string.format('%d', (tonumber(top[2]) or 0) + 1), member)
  end

  -- group_arm(g, waits): make the group a participant of the round robin when it can run:
  -- it has jobs waiting (`waits` true: known), is not paused, not held, under its concurrency.
  -- True when it is one now.
  local function group_arm(g, waits)
    local st = redis.call('HMGET', G.state, 'p\0' .. g, 'a\0' .. g, 'c\0' .. g, 'c\0', 'w\0' .. g)
    if st[1] then return false end
    local conc, max, per = group_limits(st[3], st[4])
    if conc and (tonumber(st[2]) or 0) >= conc then
      -- at its concurrency: one of its jobs ending or a change of the limits arms it again
      redis.call('ZADD', G.held, 'NX', 'inf', g)
      return false
    end
    if redis.call('ZSCORE', G.held, g) then
      -- held: it stays so while its window is full under the limits that apply now (they may
      -- have been raised or cleared, or it was held with room left: see group_tidy)
      local ends, leased = group_window(st[5], per)
      if ends and max and leased >= max then
        redis.call('ZADD', G.held, string.format('%d', ends), g)
        return false
      end
      redis.call('ZREM', G.held, g)
    end
    if not waits and not group_waits(g) then return false end
    group_back(g)
    return true
  end

  -- group_tidy(g): drop the group from the index when nothing is left of it. A rate window
  -- still open under the default limits is something left: the group stays, held till the
  -- window ends (group_arm lets it run before then while the window has room), and
  -- group_unhold tidies it then; so emptying a group does not restart its window.
  local function group_tidy(g)
    local st = redis.call('HMGET', G.state, 'a\0' .. g, 'p\0' .. g, 'c\0' .. g, 'c\0', 'w\0' .. g)
    if (tonumber(st[1]) or 0) > 0 or st[2] or st[3] or group_waits(g) then return end
    local _, _, per = group_limits(false, st[4])
    local ends = group_window(st[5], per)
    if ends then
      redis.call('ZADD', G.held, string.format('%d', ends), g)
      return
    end
    redis.call('ZREM', G.index, g)
    redis.call('ZREM', G.held, g)
    redis.call('HDEL', G.state, 'w\0' .. g, 'a\0' .. g)
  end

  -- group_limited(): true when a group limit may apply (a default, or a group with its own;
  -- or no "lim" count, kept since the groups' state began, to say there is none): false lets
  -- group_serve and group_left skip reading them (one HMGET a call, read once: a reserve's
  -- completions and its take share it; group_set_limits and group_push forget it).
  local function group_limited()
    if limited_read == nil then
      local st = redis.call('HMGET', G.state, 'c\0', 'lim')
      limited_read = st[1] ~= false or not st[2] or tonumber(st[2]) > 0
    end
    return limited_read
  end

  -- group_push(ids, groups, prios, front): make grouped jobs ready in their groups, at their
  -- priority (prios[i]; see G.wait).
  local function group_push(ids, groups, prios, front)
    local n = #ids
    local seq = redis.call('HINCRBY', G.state, 'seq', n) - n
    -- the groups' state begins: no group has own limits unless set_limits already counted one
    if seq == 0 then
      redis.call('HSETNX', G.state, 'lim', '0')
      limited_read = nil
    end
    local zargs, hargs, touched, list = {}, {}, {}, {}
    for i, id in ipairs(ids) do
      local s = seq + i
      -- the order within the group (ready_order, include/ready): the back above 10^15, the front below
      local order = ready_order(prios[i], front, 1e15, s, true)
      local g = groups[i]
      zargs[2 * i - 1], zargs[2 * i] = '0', g .. '\0' .. order .. '\0' .. id
      hargs[2 * i - 1], hargs[2 * i] = id, g .. '\0' .. order
      if not touched[g] then
        touched[g] = true
        list[#list + 1] = g
      end
    end
    for i = 1, 2 * n, 500 do
      local j = math.min(i + 499, 2 * n)
      redis.call('ZADD', G.wait, unpack(zargs, i, j))
      redis.call('HSET', G.job, unpack(hargs, i, j))
    end
    g_used = true
    if group_limited() then
      for _, g in ipairs(list) do
        redis.call('ZADD', G.index, 'NX', 0, g)
        group_arm(g, true)
      end
      return
    end
    -- no group limits: group_arm for every group at once (each has jobs waiting now): the
    -- paused stay out, the others leave a hold left from limits since cleared and join the
    -- round robin at the back, in the call's order (NX: one already in keeps its turn)
    local m = #list
    local iargs, fields = {}, {}
    for i, g in ipairs(list) do iargs[2 * i - 1], iargs[2 * i], fields[i] = '0', g, 'p\0' .. g end
    local paused, run = {}, {}
    for i = 1, m, 250 do
      local j = math.min(i + 249, m)
      redis.call('ZADD', G.index, 'NX', unpack(iargs, 2 * i - 1, 2 * j))
      local p = redis.call('HMGET', G.state, unpack(fields, i, j))
      for k = i, j do paused[k] = p[k - i + 1] end
    end
    for i, g in ipairs(list) do
      if not paused[i] then run[#run + 1] = g end
    end
    if #run == 0 then return end
    local top = tonumber(redis.call('ZRANGE', G.ready, -1, -1, 'WITHSCORES')[2]) or 0
    local rargs = {}
    for i, g in ipairs(run) do rargs[2 * i - 1], rargs[2 * i] = string.format('%d', top + i), g end
    for i = 1, #run, 250 do
      local j = math.min(i + 249, #run)
      redis.call('ZREM', G.held, unpack(run, i, j))
      redis.call('ZADD', G.ready, 'NX', unpack(rargs, 2 * i - 1, 2 * j))
    end
  end

  -- group_member_id(m): the job id of a G.wait member.
  local function group_member_id(m)
    return string.sub(m, string.find(m, '\0', 1, true) + 25)
  end

  -- group_of(ids): the group of each job ('' for none), by one HMGET.
  local function group_of(ids)
    local out = {}
    if #ids == 0 then return out end
    local found = redis.call('HMGET', G.job, unpack(ids))
    for i = 1, #ids do
      local v = found[i]
      out[i] = v and string.sub(v, 1, (string.find(v, '\0', 1, true) or #v + 1) - 1) or ''
    end
    return out
  end

  -- group_assign(ids, groups): record the group of jobs that are not ready yet (delayed).
  local function group_assign(ids, groups)
    local args = {}
    for i, id in ipairs(ids) do
      args[2 * i - 1], args[2 * i] = id, groups[i] .. '\0'
      redis.call('ZADD', G.index, 'NX', 0, groups[i])
    end
    if #args > 0 then
      redis.call('HSET', G.job, unpack(args))
      g_used = true
    end
  end

  -- group_serve(g, want, now, limited): lease up to `want` jobs of the group g, within its
  -- limits (none to read when `limited` is false): their ids, and whether it stays in the round
  -- robin (jobs left, under its limits). A group that reaches its rate window's max is held
  -- till the window ends.
  local function group_serve(g, want, now, limited)
    if not limited then
      local members = redis.call('ZRANGE', G.wait, '[' .. g .. '\0', '(' .. g .. '\1', 'BYLEX', 'LIMIT', 0, want + 1)
      local more = #members > want
      if more then members[want + 1] = nil end
      local ids, n = {}, #members
      if n == 0 then return ids, false end
      redis.call('ZREMRANGEBYLEX', G.wait, '[' .. g .. '\0', '[' .. members[n])
      for i, m in ipairs(members) do ids[i] = group_member_id(m) end
      redis.call('HINCRBY', G.state, 'a\0' .. g, n)
      return ids, more
    end
    local st = redis.call('HMGET', G.state, 'a\0' .. g, 'c\0' .. g, 'c\0', 'w\0' .. g)
    local active = tonumber(st[1]) or 0
    local conc, max, per = group_limits(st[2], st[3])
    local cap = want
    if conc and conc - active < cap then cap = conc - active end
    local wstart, wcount = now, 0
    if max and per then
      local _, _, s, c = string.find(st[4] or '', '^(%d+)|(%d+)$')
      if s and now < tonumber(s) + per then wstart, wcount = tonumber(s), tonumber(c) end
      if max - wcount < cap then cap = max - wcount end
    end
    local ids = {}
    if cap <= 0 then
      if max and per and wcount >= max then
        redis.call('ZADD', G.held, string.format('%d', wstart + per), g)
      else
        redis.call('ZADD', G.held, 'NX', 'inf', g)
      end
      return ids, false
    end
    local members = redis.call('ZRANGE', G.wait, '[' .. g .. '\0', '(' .. g .. '\1', 'BYLEX', 'LIMIT', 0, cap + 1)
    local more = #members > cap
    if more then members[cap + 1] = nil end
    local n = #members
    if n == 0 then return ids, false end
    redis.call('ZREMRANGEBYLEX', G.wait, '[' .. g .. '\0', '[' .. members[n])
    for i, m in ipairs(members) do ids[i] = group_member_id(m) end
    redis.call('HINCRBY', G.state, 'a\0' .. g, n)
    if max and per then
      redis.call('HSET', G.state, 'w\0' .. g, string.format('%d|%d', wstart, wcount + n))
      if wcount + n >= max then
        redis.call('ZADD', G.held, string.format('%d', wstart + per), g)
        more = false
      end
    end
    if conc and active + n >= conc then
      redis.call('ZADD', G.held, 'NX', 'inf', g)
      more = false
    end
    return ids, more
  end

  -- group_unhold(now): groups whose rate window ended join the round robin again.
  local function group_unhold(now)
    local due = redis.call('ZRANGE', G.held, '-inf', now, 'BYSCORE', 'LIMIT', 0, 100)
    if #due == 0 then return end
    redis.call('ZREM', G.held, unpack(due))
    for _, g in ipairs(due) do
      if not group_arm(g, false) then group_tidy(g) end
    end
  end

  -- group_take(count, now, take_ungrouped): up to `count` ready jobs, round robin over the groups
  -- that can run and the ungrouped jobs (taken with take_ungrouped(n)), one share each per round:
  -- floor(left / participants this round), at least 1, so one call serves many participants;
  -- a participant a call did not reach keeps its turn and is served first by the next call.
  -- With group limits a round looks at up to `left` participants (one job each at most, when
  -- that many can run); without, at up to max(GROUP_ROUND_MIN, left / GROUP_TURN): a turn then
  -- takes up to GROUP_TURN jobs of a group (fewer commands per job), still in turn.
  local function group_take(count, now, take_ungrouped)
    group_unhold(now)
    local limited = group_limited()
    local out, n = {}, 0
    while n < count do
      local left = count - n
      local look = left
      if not limited then look = math.min(left, math.max(GROUP_ROUND_MIN, math.ceil(left / GROUP_TURN))) end
      local parts = redis.call('ZRANGE', G.ready, 0, look - 1)
      if #parts == 0 then break end
      local top = tonumber(redis.call('ZRANGE', G.ready, -1, -1, 'WITHSCORES')[2])
      local share = math.max(1, math.floor((count - n) / #parts))
      local again, drop = {}, {}
      for _, p in ipairs(parts) do
        if n >= count then break end
        local want = math.min(share, count - n)
        local got, more
        if p == '' then
          got = take_ungrouped(want) or {}
          more = #got == want
        else
          got, more = group_serve(p, want, now, limited)
        end
        for _, e in ipairs(got) do
          n = n + 1
          out[n] = e
        end
        if more then
          top = top + 1
          again[#again + 1] = string.format('%d', top)
          again[#again + 1] = p
        else
          drop[#drop + 1] = p
        end
      end
      if #again > 0 then redis.call('ZADD', G.ready, 'XX', unpack(again)) end
      if #drop > 0 then redis.call('ZREM', G.ready, unpack(drop)) end
    end
    if n == 0 then return false end
    return out
  end

  -- group_settle_unlimited(g): group_arm then group_tidy for a group with none active and out
  -- of the round robin, while no group limits apply (group_limited() false: no default, no
  -- group with own limits, so no concurrency, window or maxSize to read): a paused group
  -- stays as it is; one with jobs waiting joins the round robin again (true: wake a worker);
  -- else it is dropped from the index. One HGET and one ZRANGE before that, where the two
  -- calls read the group's state and its waiting jobs twice each.
  local function group_settle_unlimited(g)
    if redis.call('HGET', G.state, 'p\0' .. g) then return false end
    -- a hold left from limits since cleared (a page of group_set_limits not run) ends here
    redis.call('ZREM', G.held, g)
    if group_waits(g) then
      group_back(g)
      return true
    end
    redis.call('ZREM', G.index, g)
    redis.call('HDEL', G.state, 'w\0' .. g, 'a\0' .. g)
    return false
  end

  -- group_left(ids, forget): the jobs `ids` just left active (each exactly once: the caller
  -- removed them): their groups' active counts go down, and a group that can run again joins
  -- the round robin (the marker is set). With `forget` (the job finished) its group is dropped.
  local function group_left(ids, forget)
    if #ids == 0 or not groups_used() then return end
    local groups = group_of(ids)
    local per, list, mine = {}, {}, {}
    for i, g in ipairs(groups) do
      if g ~= '' then
        if not per[g] then
          per[g] = 0
          list[#list + 1] = g
        end
        per[g] = per[g] + 1
        mine[#mine + 1] = ids[i]
      end
    end
    if #mine == 0 then return end
    if forget then redis.call('HDEL', G.job, unpack(mine)) end
    local woke = false
    -- without limits a group with jobs active is never held: only an emptied one is looked at
    local limited = group_limited()
    for _, g in ipairs(list) do
      -- a count down to 0 stays (one HDEL a job saved) until the group is tidied away
      local a = redis.call('HINCRBY', G.state, 'a\0' .. g, -per[g])
      if (limited or a <= 0) and not redis.call('ZSCORE', G.ready, g) then
        if not limited then
          if group_settle_unlimited(g) then woke = true end
        elseif group_arm(g, false) then
          woke = true
        elseif a <= 0 then
          group_tidy(g)
        end
      end
    end
    if woke then redis.call('ZADD', G.marker, '0', '0') end
  end

  -- group_forget(ids): the finished jobs `ids` (not active) lose their group record.
  local function group_forget(ids)
    if #ids == 0 or not groups_used() then return end
    redis.call('HDEL', G.job, unpack(ids))
  end

  -- group_remove(id): take the grouped job `id` out of its group's waiting jobs; 1 or 0.
  local function group_remove(id)
    if not groups_used() then return 0 end
    local v = redis.call('HGET', G.job, id)
    if not v then return 0 end
    local removed = redis.call('ZREM', G.wait, v .. '\0' .. id)
    if removed == 1 then
      local g = string.sub(v, 1, string.find(v, '\0', 1, true) - 1)
      if not group_waits(g) then
        redis.call('ZREM', G.ready, g)
        group_tidy(g)
      end
    end
    return removed
  end

  -- group_set_limits(g, spec, skip): set (spec "<concurrency>|<max>|<perMs>") or clear (spec
  -- false) the own limits of group g, or the default of every group (g ''). A group's own
  -- limits replace the default. A new default reaches a group the next time it is served or
  -- one of its jobs ends, and the held groups at once, a page of GROUP_HELD_VISIT a call (the
  -- soonest windows first): each runs again when its window has room under the limits that
  -- apply now. `skip` (default only): the held groups an earlier page of the same change kept
  -- held, passed over; 0 stores the spec, a later page only looks. Answers the `skip` of the
  -- next page, or -1 when the last was looked at (always -1 for a group's own).
  local function group_set_limits(g, spec, skip)
    limited_read = nil
    if g == '' and skip == 0 then
      if spec then redis.call('HSET', G.state, 'c\0', spec) else redis.call('HDEL', G.state, 'c\0') end
    elseif g ~= '' then
      -- "lim" counts the groups with own limits (see G.state)
      local changed
      if spec then changed = redis.call('HSET', G.state, 'c\0' .. g, spec) else changed = redis.call('HDEL', G.state, 'c\0' .. g) end
      -- counted from the start of the groups' state only (one begun without "lim" reads limits)
      if changed == 1 then
        local st = redis.call('HMGET', G.state, 'lim', 'seq')
        if st[1] or not st[2] then redis.call('HINCRBY', G.state, 'lim', spec and 1 or -1) end
      end
    end
    if g == '' then
      local woke, kept = false, skip
      local page = redis.call('ZRANGE', G.held, skip, skip + GROUP_HELD_VISIT - 1)
      for _, h in ipairs(page) do
        if group_arm(h, false) then
          woke = true
        else
          if not redis.call('ZSCORE', G.held, h) then group_tidy(h) end
          if redis.call('ZSCORE', G.held, h) then kept = kept + 1 end
        end
      end
      if woke then redis.call('ZADD', G.marker, '0', '0') end
      return #page == GROUP_HELD_VISIT and kept or -1
    end
    redis.call('ZADD', G.index, 'NX', 0, g)
    redis.call('ZREM', G.ready, g)
    redis.call('ZREM', G.held, g)
    if group_arm(g, false) then redis.call('ZADD', G.marker, '0', '0') else group_tidy(g) end
    return -1
  end

  -- group_pause(g, on): pause (on true) or resume the group g; true when that changed it.
  local function group_pause(g, on)
    if on then
      if redis.call('HSETNX', G.state, 'p\0' .. g, '1') == 0 then return false end
      redis.call('ZADD', G.index, 'NX', 0, g)
      redis.call('ZREM', G.ready, g)
      return true
    end
    if redis.call('HDEL', G.state, 'p\0' .. g) == 0 then return false end
    if group_arm(g, false) then redis.call('ZADD', G.marker, '0', '0') else group_tidy(g) end
    return true
  end

  -- group_page(after, count): up to `count` groups named after `after` ('' from the first), in
  -- name order: {next ('' at the end), default limits, then per group: name, waiting, active,
  -- paused (0/1), own limits ('' none)}. O(log N) per group.
  local function group_page(after, count)
    local from = after == '' and '-' or '(' .. after
    local names = redis.call('ZRANGE', G.index, from, '+', 'BYLEX', 'LIMIT', 0, count)
    local out = {#names == count and names[count] or '', redis.call('HGET', G.state, 'c\0') or ''}
    for _, g in ipairs(names) do
      local st = redis.call('HMGET', G.state, 'a\0' .. g, 'p\0' .. g, 'c\0' .. g)
      out[#out + 1] = g
      out[#out + 1] = group_waiting_count(g)
      out[#out + 1] = tonumber(st[1]) or 0
      out[#out + 1] = st[2] and 1 or 0
      out[#out + 1] = st[3] or ''
    end
    return out
  end

  -- group_stats(top): how many groups are known, and the `top` with the most jobs waiting
  -- among at most GROUP_BUSIEST_LOOK groups: every group when there are no more, else the
  -- groups of as many waiting jobs drawn at random (a group's chance to be looked at grows
  -- with its backlog): {groups, {group, waiting, …}}, the busiest first, a tie by name
  -- (O(49 log N); for stats and metrics: a count kept on every move cost each grouped job
  -- more than this costs a read).
  local function group_stats(top)
    local known = redis.call('ZCARD', G.index)
    local names = {}
    if known <= GROUP_BUSIEST_LOOK then
      names = redis.call('ZRANGE', G.index, 0, -1)
    else
      local seen = {}
      for _, m in ipairs(redis.call('ZRANDMEMBER', G.wait, GROUP_BUSIEST_LOOK)) do
        local g = string.sub(m, 1, string.find(m, '\0', 1, true) - 1)
        if not seen[g] then
          seen[g] = true
          names[#names + 1] = g
        end
      end
    end
    local found = {}
    for _, g in ipairs(names) do
      local c = group_waiting_count(g)
      if c > 0 then found[#found + 1] = {g, c} end
    end
    table.sort(found, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1]) end)
    local busiest = {}
    for i = 1, math.min(top, #found) do busiest[2 * i - 1], busiest[2 * i] = found[i][1], found[i][2] end
    return known, busiest
  end

  -- group_drain(n, into): take up to n grouped jobs out of ready for good (drain), by group
  -- name: their ids appended to `into`.
  local function group_drain(n, into)
    local members = redis.call('ZRANGE', G.wait, 0, n - 1)
    if #members == 0 then return end
    redis.call('ZREM', G.wait, unpack(members))
    local per, list = {}, {}
    for _, m in ipairs(members) do
      into[#into + 1] = group_member_id(m)
      local g = string.sub(m, 1, string.find(m, '\0', 1, true) - 1)
      if not per[g] then
        per[g] = 0
        list[#list + 1] = g
      end
      per[g] = per[g] + 1
    end
    for _, g in ipairs(list) do
      if not group_waits(g) then
        redis.call('ZREM', G.ready, g)
        group_tidy(g)
      end
    end
  end

  -- group_waiting(id): true when the grouped job `id` waits in its group, false when it is a
  -- grouped job not waiting, nil when it has no group.
  local function group_waiting(id)
    local v = redis.call('HGET', G.job, id)
    if not v then return nil end
    return redis.call('ZSCORE', G.wait, v .. '\0' .. id) ~= false
  end

  GL = {
    limits = group_limits,
    sizes = group_sizes,
    waits = group_waits,
    back = group_back,
    arm = group_arm,
    tidy = group_tidy,
    push = group_push,
    waiting_count = group_waiting_count,
    member_id = group_member_id,
    of = group_of,
    assign = group_assign,
    serve = group_serve,
    unhold = group_unhold,
    take = group_take,
    left = group_left,
    forget = group_forget,
    remove = group_remove,
    set_limits = group_set_limits,
    pause = group_pause,
    page = group_page,
    stats = group_stats,
    drain = group_drain,
    waiting = group_waiting,
  }
  return GL
end
