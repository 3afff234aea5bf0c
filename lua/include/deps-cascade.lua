--!include deps-gone
-- deps-cascade: a cancelled parent's cancel carried to its pending children (cancel's
-- children "cancel", the default): a part of deps.lua (its DEP keys), kept apart to bound the
-- file's size. The work list is depGone, by score (deps_gone_sweep takes only score 0):
--   DEPS_CASCADE (1)  a parent cancelled with its children: the sweep pages its edges (the
--                     cursor, the last edge done, in depCount "c|<id>"), asking each pending
--                     child's queue to cancel it (here: DEPS_CANCEL; another queue: a
--                     "parent-cancelled" note in the outbox, applied there by deps-apply)
--   DEPS_CANCEL (2)   a child of this queue to cancel, unless another parent still waits on it
-- A child drops the cancelled parent from its parents first (deps_unlink), so "another
-- parent" is every parent left: one of this queue waits while it is in depWaiting; one of
-- another queue (another hash slot, out of reach) is taken as waiting, and the child is kept.
local DEPS_CASCADE, DEPS_CANCEL = 1, 2

-- deps_cascade_mark(pid): the parent `pid` was cancelled while waiting for children: its
--   pending children are to be cancelled by the sweep (deps_cascade_sweep, include/cancel-job).
local function deps_cascade_mark(pid)
  redis.call('ZADD', DEP.gone, DEPS_CASCADE, pid)
end

-- deps_unlink(cid, ref): the job `cid` no longer tells the parent `ref` ("<queue>|<id>", as
--   depParents records it) of its end.
local function deps_unlink(cid, ref)
  local v = redis.call('HGET', DEP.parents, cid)
  if not v then return end
  local kept = {}
  for entry in string.gmatch(v, '[^,]+') do
    if entry ~= ref then kept[#kept + 1] = entry end
  end
  if #kept == 0 then
    redis.call('HDEL', DEP.parents, cid)
  else
    redis.call('HSET', DEP.parents, cid, table.concat(kept, ','))
  end
end

-- deps_cancel_asked(cid, ref): the parent `ref` of the job `cid` was cancelled with its
--   children: cid leaves it (deps_unlink) and is queued for the sweep to cancel (DEPS_CANCEL;
--   an entry already there keeps its score: a job cascading or dropped is past cancelling).
--   False when cid records no parents (gone, or finished and forgotten): nothing is queued.
local function deps_cancel_asked(cid, ref)
  if redis.call('HEXISTS', DEP.parents, cid) == 0 then return false end
  deps_unlink(cid, ref)
  redis.call('ZADD', DEP.gone, 'NX', DEPS_CANCEL, cid)
  return true
end

-- deps_cascade_notes(notes): the "parent-cancelled" notes for children in other queues, to
--   the outbox (applied there by deps-apply, like a child's end).
local function deps_cascade_notes(notes)
  for i = 1, #notes, 500 do redis.call('RPUSH', DEP.outbox, unpack(notes, i, math.min(i + 499, #notes))) end
end

-- deps_still_wanted(id): true when a parent of the job `id` may still wait on it: one of
--   this queue in waiting-children, or any of another queue (not readable from here).
local function deps_still_wanted(id)
  local v = redis.call('HGET', DEP.parents, id)
  if not v then return false end
  for pq, pid in string.gmatch(v, '([^,|]*)|([^,]+)') do
    if pq ~= '' or redis.call('ZSCORE', DEP.waiting, pid) then return true end
  end
  return false
end
