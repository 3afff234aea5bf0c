--[[
  flow-epoch — the next epoch of a partitioned queue's limit split (docs/scaling.md,
  "Limits of a partitioned queue"), from its coordinator: partition 0's meta. Each change
  of the split (flow-share) carries one; a partition refuses a raise from an epoch older
  than the newest that looked at it. An epoch is at least the Redis clock in ms, so one
  never repeats after a failover lost the writes that raised the counter (while the
  Redis hosts' clocks agree).

  KEYS[1] meta    HASH  layout version; flowCounter (the last epoch handed out), and
                        rateTotal, concurrencyTotal (the split limits, see flow-share)

  ARGV[1] layout  layout version
  ARGV[2] need    "split": only when partition 0 holds a split limit; "any": always
  ARGV[3] gapMs   with "split": none when the last epoch is younger than this (another
                  rebalancer ran that recently: one rebalance per gap, however many workers;
                  0: never refused)

  Returns
    {epoch}  the epoch, stored as meta.flowCounter
    {0}      need "split" and no split limit is stored (nothing written)
    {-1}     need "split" and the last epoch is younger than gapMs (nothing written)
    {'LAYOUT_MISMATCH', found}  layout mismatch; nothing written
]]
local meta = redis.call('HMGET', KEYS[1], 'layout', 'flowCounter', 'rateTotal', 'concurrencyTotal')
if meta[1] and meta[1] ~= ARGV[1] then return {'LAYOUT_MISMATCH', meta[1]} end
if ARGV[2] == 'split' and not meta[3] and not meta[4] then return {0} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local last = tonumber(meta[2]) or 0
local gap = tonumber(ARGV[3]) or 0
-- gap 0 (an asked-for rebalance) is never refused: an epoch counted past the clock (two
-- epochs in one ms, or set's raise) would otherwise read as younger than no gap at all
if ARGV[2] == 'split' and gap > 0 and last > now - gap then return {-1} end
local epoch = math.max(last + 1, now)
if not meta[1] then redis.call('HSET', KEYS[1], 'layout', ARGV[1]) end
local e = string.format('%d', epoch)
redis.call('HSET', KEYS[1], 'flowCounter', e)
return {e}
