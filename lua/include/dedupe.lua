-- free_dedupe: the jobs `ids` finished (completed, dead or cancelled): free each one's
-- dedupe key when it was held "until finished" (score +inf) by that very job, so a new
-- add with the key is accepted. A key held for a TTL is left to expire.
--   dkey      HASH id -> dedupe key of a job added with one
--   dedupe    ZSET dedupe key -> expiry (+inf: until finished)
--   dedupeid  HASH dedupe key -> id of the job holding it
-- Cost: one HMGET, then per job with a key one ZSCORE and one HGET.
local function free_dedupe(dkey, dedupe, dedupeid, ids)
  if #ids == 0 then return end
  local keys = redis.call('HMGET', dkey, unpack(ids))
  for i, id in ipairs(ids) do
    local key = keys[i]
    if key and redis.call('ZSCORE', dedupe, key) == 'inf' and redis.call('HGET', dedupeid, key) == id then
      redis.call('ZREM', dedupe, key)
      redis.call('HDEL', dedupeid, key)
    end
  end
end
