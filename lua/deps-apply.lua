--[[
  deps-apply — apply the notes finished children left for parents of this queue: each
  counts once (a note applied again changes nothing), a parent with nothing pending and
  sealed becomes ready, a parent whose child's policy says so dies.

  Run on the parents' queue by the sweep (and any drainer) with notes read from a child
  queue's outbox (deps-outbox removes them after this answered: a crash in between applies
  them again, which is a no-op), or by an add with the states deps-link answered.

  KEYS[1] meta     HASH  layout version; counters (dead); eventsMaxLen
  KEYS[2] events   STREAM job events: `dependencies-done` per parent released, `dead`
                   {reason child-failed} per parent failed by a child
  KEYS[3] dead     ZSET  id -> time of death (a parent failed by its child)
  KEYS[4] err      HASH  id -> last error (JSON: reason child-failed, the child)
  KEYS[5] dkey     HASH  id -> dedupe key (freed when the parent dies)
  KEYS[6] dedupe   ZSET  dedupe key -> expiry
  KEYS[7] dedupeid HASH  dedupe key -> holder id
  KEYS[8..] ready  READY_KEYS (src/engine/model/Keys.ts): the dependencies' keys (only
                   lua/include/deps.lua), the jobs ready and delayed (only lua/include/ready.lua)

  ARGV[1] layout   layout version
  ARGV[2..] parent, queue, child, outcome, result  one group per note: the parent's id, the
                   child's queue ("" = this one), its id, its outcome (completed, dead,
                   cancelled, removed), the result a completed child left ("" none; kept on
                   the edge, lua/include/deps.lua deps_apply); at most 1000. Outcome parent-cancelled turns it round (a
                   cancelled parent's cascade, lua/include/deps-cascade.lua): `parent` is a
                   child of this queue to cancel, `queue` and `child` the cancelled parent

  Returns
    {status_1, …}  per note: counted, again, unknown, ended, waiting, failed (see deps_apply);
                   for parent-cancelled: cancelling (queued for the sweep) or unknown
    {'LAYOUT_MISMATCH', found} layout mismatch; nothing written
]]
local META = KEYS[1]
--!include layout-guard
--!include ready
--!include deps
--!include deps-cascade
--!include dead
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local maxlen = events_maxlen(META)
local out = {}
for i = 2, #ARGV, 5 do
  local pid, cq, cid, outcome = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local st
  if outcome == 'parent-cancelled' then
    st = deps_cancel_asked(pid, cq .. '|' .. cid) and 'cancelling' or 'unknown'
  else
    st = deps_apply(now, pid, cq, cid, outcome, KEYS[2], maxlen, ARGV[i + 4])
  end
  if st == 'fail' then
    st = 'failed'
    if deps_fail(pid) then
      local err = cjson.encode({name = 'ChildFailed', message = 'child ' .. cid .. (cq ~= '' and (' of queue ' .. cq) or '')
        .. ' ended ' .. outcome, reason = 'child-failed', child = {queue = cq, id = cid, outcome = outcome}})
      redis.call('HSET', KEYS[4], pid, err)
      to_dead({dead = KEYS[3], meta = META, dkey = KEYS[5], dedupe = KEYS[6], dedupeid = KEYS[7]}, now, {pid})
      emit_event(KEYS[2], maxlen, 'dead', pid, 'reason', 'child-failed')
    end
  end
  out[#out + 1] = st
end
return out
