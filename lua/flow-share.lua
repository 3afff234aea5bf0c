--[[
  flow-share — one partition's share of its partitioned queue's rate limit and concurrency
  cap (docs/scaling.md, "Limits of a partitioned queue"). The share is what reserve
  enforces (meta.rateMax, meta.concurrency, include/flow); the queue-wide limit is kept
  beside it (meta.rateTotal, meta.concurrencyTotal). The sum of the partitions' shares never
  passes the total: a share is lowered only down to what the partition uses now (its rate
  window's count, its active leases), and raised only by the rebalancer of the newest
  epoch that looked at every partition (meta.flowEpoch: the newest epoch seen here).

  KEYS[1] meta    HASH  layout version; rateMax, ratePer, rateCount, concurrency (the shares),
                        rateTotal, concurrencyTotal, flowEpoch, heldUntil
  KEYS[2] rate    LIST  the rate limit's window (include/flow)
  KEYS[3] active  ZSET  id -> lease deadline (its ZCARD: the leases held)
  KEYS[4..] ready READY_KEYS (src/engine/model/Keys.ts): the jobs ready and delayed, the wake-up
                  marker; read and written only by lua/include/ready.lua

  ARGV[1] layout       layout version
  ARGV[2] op           "look", "lower", "raise" or "set"
  ARGV[3] epoch        from flow-epoch (look, raise, set)
  ARGV[4] rate         lower: the rate share's target (lowered to it when above); raise:
                       added to the share; set: the share; "" leaves it
  ARGV[5] concurrency  the same for the concurrency share
  ARGV[6] rateTotal    set: the queue-wide rate max, "" clears the rate limit (and lifts a
                       hold, as set-limits does), "-" leaves it
  ARGV[7] concTotal    set: the queue-wide cap, "" clears it, "-" leaves it
  ARGV[8] perMs        set, with a rateTotal: the rate window in ms

  look records the epoch (a look from an older epoch than flowEpoch is refused); raise
  applies only when no newer epoch looked; set always applies (it writes the shares whole)
  and raises flowEpoch past any epoch seen, so a rebalancer that looked before it raises
  nothing here. lower is always safe and not fenced.

  Returns
    look:  {1, rateTotal, rateShare, rateUsed, ratePer, concTotal, concShare, concUsed, ready}
           (-1 for a limit not set; rateUsed: the window's count now, concUsed: the leases held;
           ready: the jobs ready), or {0, flowEpoch} when a newer epoch looked (nothing written)
    lower: {1, rateShare, rateHeld, concShare, concHeld} as they are now (-1 when not set;
           held: max(share, used))
    raise: {1}, or {0, flowEpoch} when a newer epoch looked (nothing written)
    set:   {1}
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
--!include ready
--!include flow
--!include active

local META = KEYS[1]
--!include layout-guard
local op = ARGV[2]
local f = redis.call('HMGET', KEYS[1], 'flowEpoch', 'rateTotal', 'rateMax', 'ratePer', 'rateCount',
  'concurrencyTotal', 'concurrency')
local seen, epoch = tonumber(f[1]) or 0, tonumber(ARGV[3]) or 0
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function fmt(n) return string.format('%d', n) end
-- the rate window's count now (the trim stored, as reserve stores it)
local function rate_used()
  if not f[3] or not f[4] then return -1 end
  local n = flow_window(KEYS[2], tonumber(f[5]) or 0, now, tonumber(f[4]))
  if n ~= (tonumber(f[5]) or 0) then redis.call('HSET', KEYS[1], 'rateCount', fmt(n)) end
  return n
end
local function num(v) return tonumber(v) or -1 end

if op == 'look' then
  if epoch < seen then return {0, fmt(seen)} end
  if not layout then redis.call('HSET', KEYS[1], 'layout', ARGV[1]) end
  redis.call('HSET', KEYS[1], 'flowEpoch', ARGV[3])
  local concUsed = f[7] and active_count({active = KEYS[3]}) or -1
  return {1, num(f[2]), num(f[3]), rate_used(), num(f[4]), num(f[6]), num(f[7]), concUsed, ready_count()}
elseif op == 'lower' then
  local rate, conc = num(f[3]), num(f[7])
  if ARGV[4] ~= '' and rate > tonumber(ARGV[4]) then
    rate = tonumber(ARGV[4])
    redis.call('HSET', KEYS[1], 'rateMax', ARGV[4])
  end
  if ARGV[5] ~= '' and conc > tonumber(ARGV[5]) then
    conc = tonumber(ARGV[5])
    redis.call('HSET', KEYS[1], 'concurrency', ARGV[5])
  end
  local rateHeld = rate >= 0 and math.max(rate, rate_used()) or -1
  local concHeld = conc >= 0 and math.max(conc, active_count({active = KEYS[3]})) or -1
  return {1, rate, rateHeld, conc, concHeld}
elseif op == 'raise' then
  if epoch ~= seen then return {0, fmt(seen)} end
  if ARGV[4] ~= '' and f[3] and f[2] then redis.call('HINCRBY', KEYS[1], 'rateMax', ARGV[4]) end
  if ARGV[5] ~= '' and f[7] and f[6] then redis.call('HINCRBY', KEYS[1], 'concurrency', ARGV[5]) end
  ready_wake_if_any()
  return {1}
elseif op == 'set' then
  if not layout then redis.call('HSET', KEYS[1], 'layout', ARGV[1]) end
  redis.call('HSET', KEYS[1], 'flowEpoch', fmt(math.max(seen + 1, epoch)))
  if ARGV[6] == '' then
    redis.call('HDEL', KEYS[1], 'rateTotal', 'rateMax', 'ratePer', 'rateCount', 'heldUntil')
    -- emptied with RPOP (a command the documented ACL grants; DEL is not granted)
    local n = redis.call('LLEN', KEYS[2])
    if n > 0 then redis.call('RPOP', KEYS[2], n) end
  elseif ARGV[6] ~= '-' then
    redis.call('HSET', KEYS[1], 'rateTotal', ARGV[6], 'rateMax', ARGV[4], 'ratePer', ARGV[8])
  end
  if ARGV[7] == '' then redis.call('HDEL', KEYS[1], 'concurrencyTotal', 'concurrency')
  elseif ARGV[7] ~= '-' then redis.call('HSET', KEYS[1], 'concurrencyTotal', ARGV[7], 'concurrency', ARGV[5]) end
  ready_wake_if_any()
  return {1}
end
return redis.error_reply('ERR flow-share: op (ARGV[2]) must be "look", "lower", "raise" or "set", got ' .. tostring(op))
