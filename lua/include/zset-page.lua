-- zset-page: read a sorted set page by page with a cursor that survives changes (the
-- listing of jobs by state, lua/job-list.lua).
--
-- zset_page(key, after, count, rev): up to `count` members of the ZSET `key` in score
--   order (rev: the highest first), after the cursor `after` ({score, member} of the last
--   one read, or false for the first page). Returns the page {member, score, …}, the
--   cursor of its last entry ({score, member}, or false) and whether the set ends there.
--   O(log N + count): the cursor's member is found by ZRANK; one that left or moved is
--   replaced by its score (ZCOUNT), skipping the members of equal score read before it.
--   `low` (optional, default 0): the lowest ranks left out (the members scored below 0).
local function bytes_after(a, b)
  -- true when a sorts after b as Redis orders equal scores (bytewise; Lua's < uses the locale)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end
local function zset_page(key, after, count, rev, low)
  low = low or 0
  local start, skip = 0, false
  if after then
    local rank = redis.call(rev and 'ZREVRANK' or 'ZRANK', key, after[2])
    local score = rank and redis.call('ZSCORE', key, after[2])
    if rank and tonumber(score) == tonumber(after[1]) then
      start = rank + 1
    else
      skip = after
      if rev then
        start = redis.call('ZCOUNT', key, '(' .. after[1], '+inf')
      else
        start = redis.call('ZCOUNT', key, '-inf', '(' .. after[1])
      end
    end
  end
  if not rev and start < low then start = low end
  local stop = start + count - 1
  local cut = false
  if rev and low > 0 then
    local n = redis.call('ZCARD', key) - low
    if stop >= n then stop, cut = n - 1, true end
  end
  local page = stop >= start and redis.call(rev and 'ZREVRANGE' or 'ZRANGE', key, start, stop, 'WITHSCORES') or {}
  local out = {}
  for i = 1, #page, 2 do
    local m, s = page[i], page[i + 1]
    local seen = skip and tonumber(s) == tonumber(skip[1]) and (m == skip[2] or (bytes_after(m, skip[2]) == rev))
    if not seen then
      out[#out + 1] = m
      out[#out + 1] = s
    end
  end
  local last = #page > 0 and {page[#page], page[#page - 1]} or after
  return out, last, cut or #page < 2 * count
end
