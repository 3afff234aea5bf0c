--[[
  verify-rate — the queue-wide rate window checked against its count (read-only), for
  verify: meta.rateCount must be the sum of the n of the window's entries (set-limits,
  include/flow). One call, so the check is exact even while workers lease; bounded: a
  window longer than 10,000 entries is not read (it has at most one entry per reserve
  call in the window).

  KEYS[1] meta    HASH  layout version; rateMax, rateCount
  KEYS[2] rate    LIST  the rate window: "<ms>|<n>" per reserve call that leased n jobs

  ARGV[1] layout  layout version

  Returns
    {stored, counted, entries}  stored: meta.rateCount (-1 when not set); counted: the sum
                                of the entries' n (-1 when the window was not read: more
                                than 10,000 entries); entries: the window's length
    {'LAYOUT_MISMATCH', found}  layout mismatch
]]
local META = KEYS[1]
--!include layout-guard

local stored = tonumber(redis.call('HGET', KEYS[1], 'rateCount')) or -1
local entries = redis.call('LLEN', KEYS[2])
local counted = -1
if entries <= 10000 then
  counted = 0
  for from = 0, entries - 1, 1000 do
    for _, e in ipairs(redis.call('LRANGE', KEYS[2], from, from + 999)) do
      counted = counted + (tonumber(string.match(e, '|(%d+)$')) or 0)
    end
  end
end
return {stored, counted, entries}
