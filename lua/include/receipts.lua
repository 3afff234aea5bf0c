-- trim_receipts: drop at most `limit` add receipts older than the receipt window
-- (RECEIPT_WINDOW_MS, 60 s: longer than any re-send of a call by the client).
-- Bounded per call; shared by add and reserve, which both trim so that receipts
-- go away whether producers or workers keep running.
--   receipts    HASH request ids an earlier version wrote (add no longer does): the
--                    ids dropped from receiptsAt are dropped here too
--   receiptsAt  ZSET request id -> time (ms): the receipts
local RECEIPT_WINDOW_MS = 60000
local function trim_receipts(receipts, receiptsAt, now, limit)
  local old = redis.call('ZRANGE', receiptsAt, '-inf', now - RECEIPT_WINDOW_MS, 'BYSCORE', 'LIMIT', 0, limit)
  if #old > 0 then
    redis.call('ZREM', receiptsAt, unpack(old))
    redis.call('HDEL', receipts, unpack(old))
  end
end
