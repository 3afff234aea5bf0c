--!include ready
--!include events
-- deps: dependencies between jobs (flows: a parent waits for its children). Not flow
-- control (include/flow.lua: rate limit, concurrency cap): docs/flows.md.
--
-- The one owner of the waiting-children state and of the notes a finished child leaves for
-- its parents. Its keys lead the READY_KEYS group (src/engine/model/Keys.ts, DEPS_KEYS; found
-- by ready.lua as READY_DEPS), so every script that declares that group can end a child or
-- release a parent through these functions (and deps-gone.lua's), and no script names them:
--   depParents  HASH  child id -> its parents, "<queue>|<id>" joined by "," (queue "" = this
--                     queue); dropped with the child's other fields (drop_jobs)
--   depOutbox   LIST  notes "<parent queue>|<parent id>|<child id>|<outcome>" for parents in
--                     other queues, appended by the child's terminal transition; a completed
--                     child's carries "|<result>" after (its result, "#<bytes>" past 64 KiB),
--                     kept on the parent's edge; applied by deps-apply on the parent's queue,
--                     then removed by deps-ack
--   depWaiting  ZSET  parent id -> when it began waiting for children (the state
--                     `waiting-children`)
--   depChildren ZSET  (score 0) "<parent id>|<child queue>|<child id>" of every child, paged BYLEX
--   depState    HASH  "<parent id>|<child queue>|<child id>" -> "<policy>" while pending,
--                     "<policy>|<outcome>" once it counted (the idempotence of a note)
--   depCount    HASH  parent id -> children pending; "o|<id>" -> 1 while open (takes more
--                     children, never released); "d|<id>" -> its delay (ms) once released
--   depGone     ZSET  (score 0) dropped parents whose edges the sweep deletes: deps-gone.lua
--   depBuild    ZSET  parent id -> build deadline (ms) of an unsealed addFlow: deps-build.lua
-- meta.deps is set once a job of the queue has a parent or children: a queue without flows
-- reads that one field (complete: in the HMGET it makes anyway) and does nothing more.
local DEP = READY_DEPS

-- deps_parents_hash(): the per-job hash of a child's parents, for drop_jobs (include/finish).
local function deps_parents_hash()
  return DEP.parents
end

-- deps_link(meta, ids, parents): record the parents of the jobs `ids` (parents[i]:
--   "<queue>|<id>,…" for ids[i]), appended to those already recorded (a link already there
--   is not written twice); sets meta.deps.
local function deps_link(meta, ids, parents)
  if #ids == 0 then return end
  for from = 1, #ids, 500 do
    local to = math.min(from + 499, #ids)
    local had = redis.call('HMGET', DEP.parents, unpack(ids, from, to))
    local args = {}
    for i = from, to do
      local v = had[i - from + 1] or ''
      for entry in string.gmatch(parents[i], '[^,]+') do
        if not string.find(',' .. v .. ',', ',' .. entry .. ',', 1, true) then
          v = v == '' and entry or (v .. ',' .. entry)
        end
      end
      args[#args + 1], args[#args + 2] = ids[i], v
    end
    redis.call('HSET', DEP.parents, unpack(args))
  end
  redis.call('HSET', meta, 'deps', '1')
end

-- deps_hold(meta, ids, delays, now): the new jobs `ids` wait for children (open: they take
--   children until sealed, deps-children); delays[i] (ms, 0 none) applies once released.
local function deps_hold(meta, ids, delays, now)
  if #ids == 0 then return end
  local z, c = {}, {}
  for i, id in ipairs(ids) do
    z[#z + 1], z[#z + 2] = now, id
    c[#c + 1], c[#c + 2] = 'o|' .. id, '1'
    if tonumber(delays[i]) > 0 then c[#c + 1], c[#c + 2] = 'd|' .. id, delays[i] end
  end
  for i = 1, #z, 500 do redis.call('ZADD', DEP.waiting, unpack(z, i, math.min(i + 499, #z))) end
  for i = 1, #c, 500 do redis.call('HSET', DEP.count, unpack(c, i, math.min(i + 499, #c))) end
  redis.call('HSET', meta, 'deps', '1')
end

-- deps_waiting_since(id): when the job `id` began waiting for children, or false.
local function deps_waiting_since(id)
  return redis.call('ZSCORE', DEP.waiting, id)
end

-- deps_waiting_count(): how many jobs wait for children.
local function deps_waiting_count()
  return redis.call('ZCARD', DEP.waiting)
end

-- deps_waiting_page(after, count, rev): a page of the parents waiting for children by the
--   time they began (zset_page, lua/include/zset-page.lua).
local function deps_waiting_page(after, count, rev)
  return zset_page(DEP.waiting, after, count, rev)
end

-- deps_pending(id): the children the parent `id` still waits for, and whether it is open.
local function deps_pending(id)
  local r = redis.call('HMGET', DEP.count, id, 'o|' .. id)
  return tonumber(r[1]) or 0, r[2] and true or false
end

-- deps_release(now, id, events, maxlen): the parent `id` in waiting-children, sealed and
--   with nothing pending, becomes ready (or delayed by its own delay): through ready.lua at
--   its priority and group. One `dependencies-done` event. Returns true when released.
local function deps_release(now, id, events, maxlen)
  local c = redis.call('HMGET', DEP.count, id, 'o|' .. id, 'd|' .. id)
  if c[2] or (tonumber(c[1]) or 0) > 0 then return false end
  if redis.call('ZREM', DEP.waiting, id) == 0 then return false end
  redis.call('HDEL', DEP.count, id, 'd|' .. id)
  local delay = tonumber(c[3]) or 0
  if delay > 0 then
    to_delayed({now + delay, id})
  else
    ready_push({id}, false)
  end
  ready_wake()
  if events then emit_event(events, maxlen, 'dependencies-done', id) end
  return true
end

-- deps_register(pid, members, policies, new): count the children `members` ("<pid>|<cq>|<cid>",
--   each with its policy) pending for `pid`, each once; an HMGET, HSET, ZADD a 500, one HINCRBY.
--   new: the members are new edges, each once (jobs of this add: not read, no HMGET).
local function deps_register(pid, members, policies, new)
  local added = 0
  for i = 1, #members, 500 do
    local j = math.min(i + 499, #members)
    local had = new and {} or redis.call('HMGET', DEP.state, unpack(members, i, j))
    local h, z, seen = {}, {}, {}
    for k = i, j do
      local m = members[k]
      if not had[k - i + 1] and not seen[m] then
        seen[m] = true
        h[#h + 1], h[#h + 2] = m, policies[k]
        z[#z + 1], z[#z + 2] = 0, m
        added = added + 1
      end
    end
    if #h > 0 then
      redis.call('HSET', DEP.state, unpack(h))
      redis.call('ZADD', DEP.children, unpack(z))
    end
  end
  if added > 0 then redis.call('HINCRBY', DEP.count, pid, added) end
  return added
end

-- deps_children(pid, children, seal, now, events, maxlen): register the children of the
--   parent `pid` (children: cq, cid, policy triples): each once (HSETNX), counted pending;
--   seal: it takes no more and is released once nothing is pending. Returns
--   'ok', pending | 'NOT_WAITING' (the parent is not in waiting-children) | 'SEALED'.
local function deps_children(pid, children, seal, now, events, maxlen)
  if not redis.call('ZSCORE', DEP.waiting, pid) then return 'NOT_WAITING', 0 end
  local open = redis.call('HEXISTS', DEP.count, 'o|' .. pid) == 1
  if not open and #children > 0 then return 'SEALED', 0 end
  local members, policies = {}, {}
  for i = 1, #children, 3 do
    members[#members + 1], policies[#members + 1] = pid .. '|' .. children[i] .. '|' .. children[i + 1], children[i + 2]
  end
  deps_register(pid, members, policies)
  if seal and open then
    redis.call('HDEL', DEP.count, 'o|' .. pid)
    deps_release(now, pid, events, maxlen)
  end
  return 'ok', tonumber(redis.call('HGET', DEP.count, pid)) or 0
end

-- deps_apply(now, pid, cq, cid, outcome, events, maxlen, result): a child's end, once:
--   'completed' counts done; another outcome (dead, cancelled, removed) follows the
--   dependency's policy: 'ignore' counts done, 'remove' counts done and leaves the listing
--   (deps-page), 'fail' fails the parent, 'wait' (the default) keeps the parent waiting (a
--   dead child may be retried; a cancelled or removed one cannot come back: it fails the
--   parent). `result` (a completed child's result, from its complete or its note; nil or ""
--   for none): kept on the edge, "<policy>|completed|<result>" ("#<bytes>" past
--   DEPS_RESULT_MAX), so the parent reads it after the child's retention dropped it.
--   Returns 'counted' | 'again' (applied before) | 'unknown' (no such child) | 'ended' (the
--   parent no longer waits) | 'waiting' | 'fail' (the caller moves the parent to dead, see deps_fail).
local DEPS_RESULT_MAX = 65536
local function deps_apply(now, pid, cq, cid, outcome, events, maxlen, result)
  local member = pid .. '|' .. cq .. '|' .. cid
  local st = redis.call('HGET', DEP.state, member)
  if not st then return 'unknown' end
  if string.find(st, '|', 1, true) then return 'again' end
  local ended = outcome
  if result and result ~= '' then
    ended = outcome .. '|' .. (#result > DEPS_RESULT_MAX and ('#' .. #result) or result)
  end
  -- a parent no longer waiting (cancelled, or failed by another child) counts nothing more:
  -- the edge is marked, the parent's count is gone with its waiting (no count left dangling)
  if not redis.call('ZSCORE', DEP.waiting, pid) then
    redis.call('HSET', DEP.state, member, st .. '|' .. ended)
    return 'ended'
  end
  if outcome ~= 'completed' then
    if st == 'wait' and outcome == 'dead' then return 'waiting' end
    if st == 'fail' or st == 'wait' then
      redis.call('HSET', DEP.state, member, st .. '|' .. outcome)
      return 'fail'
    end
  end
  redis.call('HSET', DEP.state, member, st .. '|' .. ended)
  redis.call('HINCRBY', DEP.count, pid, -1)
  deps_release(now, pid, events, maxlen)
  return 'counted'
end

-- deps_fail(pid): the parent `pid` leaves waiting-children to die (the caller's to_dead);
--   true when it was waiting.
local function deps_fail(pid)
  if redis.call('ZREM', DEP.waiting, pid) == 0 then return false end
  redis.call('HDEL', DEP.count, pid, 'o|' .. pid, 'd|' .. pid)
  return true
end

-- deps_ended(k, ids, outcome, used, results): the jobs `ids` ended (outcome 'completed',
--   'dead', 'cancelled', 'removed'): a note for each of their parents, atomically with the
--   end. A parent in this queue takes a 'completed' note at once (deps_apply, events to
--   k.events when given; results[i], if given, the result of ids[i], kept on its edge); so
--   does a parent of another queue k.fanin takes (complete's peer: lua/include/deps-fanin.lua);
--   every other note goes to the outbox. `used`: meta.deps as the caller read it (nil:
--   read here). Returns how many notes went to the outbox.
local function deps_ended(k, ids, outcome, used, results)
  if used == nil then used = redis.call('HEXISTS', k.meta, 'deps') == 1 end
  if not used or #ids == 0 then return 0 end
  local ps = {}
  for i = 1, #ids, 500 do
    local part = redis.call('HMGET', DEP.parents, unpack(ids, i, math.min(i + 499, #ids)))
    for _, p in ipairs(part) do ps[#ps + 1] = p end
  end
  local notes, now, maxlen = {}, nil, 0
  for i, id in ipairs(ids) do
    if ps[i] then
      for pq, pid in string.gmatch(ps[i], '([^,|]*)|([^,]+)') do
        if pq == '' and outcome == 'completed' then
          if not now then
            local t = redis.call('TIME')
            now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            if k.events then maxlen = events_maxlen(k.meta) end
          end
          deps_apply(now, pid, '', id, outcome, k.events, maxlen, results and results[i])
        elseif not (k.fanin and outcome == 'completed' and k.fanin(pq, pid, id, results and results[i])) then
          local note = pq .. '|' .. pid .. '|' .. id .. '|' .. outcome
          local r = outcome == 'completed' and results and results[i]
          -- the result travels with the note, so the parent keeps it however short the child's retention
          if r and r ~= '' then note = note .. '|' .. (#r > DEPS_RESULT_MAX and ('#' .. #r) or r) end
          notes[#notes + 1] = note
        end
      end
    end
  end
  for i = 1, #notes, 500 do redis.call('RPUSH', DEP.outbox, unpack(notes, i, math.min(i + 499, #notes))) end
  return #notes
end

-- deps_dropped(ids): the jobs `ids` are being deleted (drop_jobs, include/finish: drained,
--   cleaned, purged, trimmed): a 'removed' note for each of their parents, to the outbox (a
--   parent that already counted the child answers 'again'). Called only when a per-job hash
--   of the queue other than data exists (drop_jobs' EXISTS), so a queue without flows pays
--   nothing; one HMGET otherwise.
local function deps_dropped(ids)
  local ps = redis.call('HMGET', DEP.parents, unpack(ids))
  local notes = {}
  for i, id in ipairs(ids) do
    if ps[i] then
      for pq, pid in string.gmatch(ps[i], '([^,|]*)|([^,]+)') do
        notes[#notes + 1] = pq .. '|' .. pid .. '|' .. id .. '|removed'
      end
    end
  end
  for i = 1, #notes, 500 do redis.call('RPUSH', DEP.outbox, unpack(notes, i, math.min(i + 499, #notes))) end
end

-- deps_forget(ids): the jobs `ids` ended and told their parents, and are deleted now (a
--   completed job not retained): their parents record goes first, so no 'removed' note follows.
local function deps_forget(ids)
  redis.call('HDEL', DEP.parents, unpack(ids))
end

-- deps_parents_scan(cursor, count): one HSCAN page of the jobs' parents records: the next
--   cursor and {child id, "<queue>|<id>,…", …} (obliterate's, lua/deps-parents.lua).
local function deps_parents_scan(cursor, count)
  local r = redis.call('HSCAN', DEP.parents, cursor, 'COUNT', count)
  return r[1], r[2]
end

-- Most bytes of notes one read of the outbox answers (a note carries a result of up to 64 KiB).
local DEPS_NOTES_BYTES = 1048576

-- deps_bounded(notes): the first of `notes` within DEPS_NOTES_BYTES (at least one), and
--   whether some were left out.
local function deps_bounded(notes)
  local bytes = 0
  for i, note in ipairs(notes) do
    bytes = bytes + #note
    if bytes > DEPS_NOTES_BYTES and i > 1 then return {unpack(notes, 1, i - 1)}, true end
  end
  return notes, false
end

-- deps_outbox(limit): the oldest `limit` notes of the outbox, within DEPS_NOTES_BYTES, and
--   whether more were in those `limit` (cut by bytes).
local function deps_outbox(limit)
  return deps_bounded(redis.call('LRANGE', DEP.outbox, 0, limit - 1))
end

-- deps_outbox_len(): how many notes the outbox holds (complete: where its own notes begin).
local function deps_outbox_len()
  return redis.call('LLEN', DEP.outbox)
end

-- deps_outbox_from(i, limit): the notes from index i (0-based) on, at most `limit` (the
--   notes a call appended after it read deps_outbox_len), within DEPS_NOTES_BYTES; and
--   whether some were left out.
local function deps_outbox_from(i, limit)
  return deps_bounded(redis.call('LRANGE', DEP.outbox, i, i + limit - 1))
end

-- deps_ack(notes): remove the applied notes (one copy each).
local function deps_ack(notes)
  local n = 0
  for _, note in ipairs(notes) do n = n + redis.call('LREM', DEP.outbox, 1, note) end
  return n
end

-- deps_page(pid, after, count): a page of the parent's children, after the member `after`
--   ('' from the start): {member, state, …} and the last member ('' at the end).
local function deps_page(pid, after, count)
  local from = after == '' and ('[' .. pid .. '|') or ('(' .. after)
  local members = redis.call('ZRANGE', DEP.children, from, '[' .. pid .. '|\255', 'BYLEX', 'LIMIT', 0, count)
  if #members == 0 then return {}, '' end
  local states = redis.call('HMGET', DEP.state, unpack(members))
  local out = {}
  for i, m in ipairs(members) do out[#out + 1], out[#out + 2] = m, states[i] or '' end
  return out, #members < count and '' or members[#members]
end

-- deps_verify(cursor, count): one page of verify over the parents waiting for children (see
--   lua/deps-verify.lua): {next cursor, line, …}.
local function deps_verify(cursor, count)
  local scan = redis.call('ZSCAN', DEP.waiting, cursor, 'COUNT', count)
  local out = {scan[1]}
  local page = scan[2]
  for i = 1, #page, 2 do
    local pid = page[i]
    local members = redis.call('ZRANGE', DEP.children, '[' .. pid .. '|', '[' .. pid .. '|\255', 'BYLEX', 'LIMIT', 0, count + 1)
    local says, open = deps_pending(pid)
    if #members > count then
      out[#out + 1] = 'deps-large ' .. pid .. ' has more than ' .. count .. ' children: not checked'
    else
      local pending = 0
      if #members > 0 then
        for _, st in ipairs(redis.call('HMGET', DEP.state, unpack(members))) do
          if st and not string.find(st, '|', 1, true) then pending = pending + 1 end
        end
      end
      if pending ~= says then
        out[#out + 1] = 'deps-count ' .. pid .. ' counts ' .. says .. ' pending but ' .. pending .. ' of its children are'
      elseif says == 0 and not open then
        out[#out + 1] = 'deps-stuck ' .. pid .. ' is sealed with nothing pending but still waits for children'
      end
    end
  end
  return out
end
