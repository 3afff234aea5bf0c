--[[
  upgrade — one bounded step of moving a queue from key layout 1 to 2 (the one hash of a
  lease: holder entries "<workerId>|<token>|<startedAt>|<until>", no `lease` hash). The
  state lives in meta (`upgrade`: the phase, `upgradeCursor`), so a caller that crashed
  between steps resumes where the last step left off; every step may be re-run.

    copy   (meta.layout still 1: clients of both layouts run) each active job's holder
           entry rewritten with its token, a page of `active` per step (ZSCAN); layout 1
           readers parse that form alike (include/active). At the end of a pass: while a
           live worker's registry record names no layout 2 (a layout 1 worker: its leases
           could not be acknowledged once it is refused), the answer is WAIT and the next
           step makes another pass; with `force`, or none left, layout 2 is written (from
           then on layout 1 clients are refused: LAYOUT_MISMATCH, found 2).
    clean  (layout 2) one more pass over `active`: the leases a layout 1 worker took
           behind the copy pass get their token into their holder entry.
    drop   the `lease` hash deleted a page per step (HSCAN + HDEL); then the upgrade
           fields leave meta and the queue is of layout 2.

  Until drop is done, layout 2 scripts read both forms (include/active: a holder entry
  without a token takes it from `lease`).

  KEYS[1] active    ZSET  id -> lease deadline (ms, Redis clock)
  KEYS[2] lease     HASH  id -> fencing token (layout 1)
  KEYS[3] holder    HASH  id -> holder entry of the lease (include/active)
  KEYS[4] meta      HASH  layout version; upgrade, upgradeCursor while moving
  KEYS[5] workers   HASH  worker id -> its registry record (JSON, `"layout":"2"` from layout 2 on)
  KEYS[6] workersAt ZSET  worker id -> time its record goes stale (ms)

  ARGV[1] layout    the layout moved to (2)
  ARGV[2] count     entries per step (1 to 1000)
  ARGV[3] force     "1": write layout 2 even while layout 1 workers are live

  Returns
    {'STEP', phase, n}     a step done (phase: the one now under way; n: entries it rewrote or deleted): call again
    {'WAIT', n, id_1, …}   the copy pass is over but layout 1 workers are live (their ids, at
                           most 100): call again once they stop (or with force)
    {'DONE', layout}       the queue is of layout `layout` (nothing left to move; a queue
                           nothing has written yet is left as it is)
    {'LAYOUT_MISMATCH', found}  meta.layout is neither 1 nor ARGV[1]; nothing written
    {'OUT_OF_RANGE', 'upgrade', 'count', value, 1000}  nothing written
]]
--!include limits
--!include active

local refused = out_of_range('upgrade', 'count', ARGV[2], 1000)
if refused then return refused end
local count = math.max(1, tonumber(ARGV[2]))
local meta = redis.call('HMGET', KEYS[4], 'layout', 'upgrade', 'upgradeCursor')
local layout, phase, cursor = meta[1], meta[2], meta[3] or '0'
if not layout then return {'DONE', ARGV[1]} end
if layout ~= '1' and layout ~= ARGV[1] then return {'LAYOUT_MISMATCH', layout} end
if layout == ARGV[1] and not phase then return {'DONE', layout} end
if not phase then phase = 'copy' end

local A = {active = KEYS[1], lease = KEYS[2], holder = KEYS[3]}

if phase == 'drop' then
  local page = active_scan_field(A, 'lease', cursor, count)
  local fields = {}
  for i = 1, #page[2], 2 do fields[#fields + 1] = page[2][i] end
  -- a lease still in the layout 1 form keeps its token (none should be left after clean)
  local n = active_drop_tokens(A, fields, page[1] == '0')
  if page[1] == '0' then
    redis.call('HDEL', KEYS[4], 'upgrade', 'upgradeCursor')
    return {'DONE', layout}
  end
  redis.call('HSET', KEYS[4], 'upgrade', phase, 'upgradeCursor', page[1])
  return {'STEP', phase, n}
end

-- copy or clean: a page of active
local page = active_scan(A, cursor, count)
local ids = {}
for i = 1, #page[2], 2 do ids[#ids + 1] = page[2][i] end
local n = active_upgrade(A, ids)
if page[1] ~= '0' then
  redis.call('HSET', KEYS[4], 'upgrade', phase, 'upgradeCursor', page[1])
  return {'STEP', phase, n}
end
if phase == 'clean' then
  redis.call('HSET', KEYS[4], 'upgrade', 'drop', 'upgradeCursor', '0')
  return {'STEP', 'drop', n}
end

-- the copy pass is over: layout 2 once no layout 1 worker is live (or forced)
if ARGV[3] ~= '1' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local live = redis.call('ZRANGE', KEYS[6], string.format('%d', now), '+inf', 'BYSCORE', 'LIMIT', 0, 1000)
  local old = {}
  if #live > 0 then
    local records = redis.call('HMGET', KEYS[5], unpack(live))
    for i, id in ipairs(live) do
      local r = records[i]
      if r and not string.find(r, '"layout":"' .. ARGV[1] .. '"', 1, true) and #old < 100 then old[#old + 1] = id end
    end
  end
  if #old > 0 then
    redis.call('HSET', KEYS[4], 'upgrade', 'copy', 'upgradeCursor', '0')
    local out = {'WAIT', #old}
    for _, id in ipairs(old) do out[#out + 1] = id end
    return out
  end
end
redis.call('HSET', KEYS[4], 'layout', ARGV[1], 'upgrade', 'clean', 'upgradeCursor', '0')
return {'STEP', 'clean', n}
