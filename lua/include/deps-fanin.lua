--!include ready
--!include events
--!include deps
-- deps-fanin: a completed child releases its parent in another queue in the same script
-- (complete, given the parent queue's keys as its `peer`: the same slot, docs/architecture.md),
-- through the transition the outbox's note would take later (deps_apply: counted once, the
-- result kept on the edge, released through ready.lua when nothing is left pending). A note
-- applied afterwards for the same child (a re-completed retry, a sweep) answers 'again'.

-- deps_fanin(peer, self, layout): the `fanin` function of complete_jobs' k (deps_ended calls
--   it for each 'completed' note): for a parent of the queue `peer` it applies the note at once
--   on the peer's keys (ready_bind) and answers true; for any other queue, or a peer whose meta
--   names a layout complete refuses (not `layout`, not '1': an upgrade under way), false (to the outbox).
--   `self` is the child's queue, as the parent's edges name it.
local function deps_fanin(peer, self, layout)
  return function(pq, pid, cid, result)
    if pq ~= peer then return false end
    local meta, events = ready_bind('peer')
    local found = redis.call('HGET', meta, 'layout')
    if found and found ~= layout and found ~= '1' then
      ready_bind('own')
      return false
    end
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    deps_apply(now, pid, self, cid, 'completed', events, events_maxlen(meta), result)
    ready_bind('own')
    return true
  end
end
