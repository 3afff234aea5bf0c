--!include active
-- flow: the queue-wide limits reserve applies before it leases (set by set-limits.lua). All
-- live in meta, read by reserve's one HMGET (so a queue without them pays nothing):
--   rateMax, ratePer   at most rateMax leases in any ratePer ms of the Redis clock; the
--                      window is the `rate` LIST of "<ms>|<n>" (n jobs leased at ms by one
--                      call; newest at the left, oldest at the right) and meta.rateCount,
--                      the sum of its n (the commands are those the documented ACL grants)
--   concurrency        at most that many leases held at once (the active ZSET's ZCARD:
--                      a lease leaves active by complete, fail, release, cancel, snooze,
--                      dead or the sweep's reclaim, and frees its slot then)
--   heldUntil          nothing is leased before this time (ms), set by a handler's RateLimited
-- A re-sent reserve answers its record before any of this runs: it counts nothing twice.

-- flow_window(rate, count, now, per): the rate window's count once the entries of leases
-- made at or before now - per are dropped from the right (the oldest end), and the ms until the oldest one
-- left drops out (0 when none is left)
local function flow_window(rate, count, now, per)
  local cutoff = now - per
  while count > 0 do
    local head = redis.call('LINDEX', rate, -1)
    if not head then return 0, 0 end
    local bar = string.find(head, '|', 1, true)
    local t = tonumber(string.sub(head, 1, bar - 1))
    if t > cutoff then return count, t + per - now end
    redis.call('RPOP', rate)
    count = count - tonumber(string.sub(head, bar + 1))
  end
  return 0, 0
end

-- flow_room(k, lim, now, count): of `count` jobs, how many the limits let reserve lease now;
-- when fewer, also which limit held it back ('held', 'rate' or 'concurrency') and the ms
-- until it may allow more (0: not known, a lease must leave active first).
--   k    {active = active ZSET, rate = rate LIST}
--   lim  {heldUntil, concurrency, rateMax, ratePer, rateCount} as meta holds them (or false);
--        lim.window is set to the rate window's count after the trim (for flow_count)
local function flow_room(k, lim, now, count)
  local held = tonumber(lim.heldUntil)
  if held and held > now then return 0, 'held', held - now end
  local allowed, kind, waitMs = count, false, 0
  local max, per = tonumber(lim.rateMax), tonumber(lim.ratePer)
  if max and per then
    local n, waitRate = flow_window(k.rate, tonumber(lim.rateCount) or 0, now, per)
    lim.window = n
    -- an empty window: its next opening is when this call's own leases drop out
    if waitRate == 0 then waitRate = per end
    if max - n < allowed then allowed, kind, waitMs = math.max(max - n, 0), 'rate', waitRate end
  end
  local conc = tonumber(lim.concurrency)
  if conc then
    local room = conc - active_count(k)
    if room < allowed then allowed, kind, waitMs = math.max(room, 0), 'concurrency', 0 end
  end
  return allowed, kind, waitMs
end

-- flow_count(k, meta, lim, now, n): count the `n` jobs just leased in the rate window (when
-- a rate limit is set), and store the window's count when the trim or the leases changed it
--   meta  the meta HASH
local function flow_count(k, meta, lim, now, n)
  if lim.window == nil then return end
  if n > 0 then redis.call('LPUSH', k.rate, string.format('%d', now) .. '|' .. string.format('%d', n)) end
  local total = lim.window + n
  if total ~= (tonumber(lim.rateCount) or 0) then redis.call('HSET', meta, 'rateCount', string.format('%d', total)) end
end
