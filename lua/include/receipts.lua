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

-- receipt_again(receipts, receiptsAt, req): the reply a call `req` that acted gave (its
-- receipt, as receipt_keep stored it), or nil; req "" has none. For the calls whose reply
-- says what they did (cancel, changePriority, pauseGroup, unschedule): a re-send answers it.
local function receipt_again(receipts, receiptsAt, req)
  if req == '' or not redis.call('ZSCORE', receiptsAt, req) then return nil end
  local out = {}
  for v in string.gmatch(redis.call('HGET', receipts, req) or '', '[^,]+') do
    out[#out + 1] = string.find(v, '^%-?%d+$') and tonumber(v) or v
  end
  return out
end

-- receipt_keep(receipts, receiptsAt, req, reply): keep the reply (numbers and words) of a
-- call `req` that acted as its receipt (trimmed after RECEIPT_WINDOW_MS); answers reply.
local function receipt_keep(receipts, receiptsAt, req, reply)
  if req == '' or reply[1] ~= 1 then return reply end
  local t = redis.call('TIME')
  redis.call('ZADD', receiptsAt, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), req)
  redis.call('HSET', receipts, req, table.concat(reply, ','))
  return reply
end
