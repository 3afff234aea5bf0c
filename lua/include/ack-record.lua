-- ack-record: what makes a re-sent acknowledgement (complete, fail, release) answer what
-- its first run did. The client re-sends a call whose reply it lost with the same ARGV; a
-- caller (a worker, a manual consumer) sends each ack on a lane, a field
-- "<workerId>:a<n>" of reqs that it uses for one call at a time (its next call on a lane
-- goes only once the last one is answered), with a request id drawn per call. The first
-- run records "<requestId>|<ms>|<answer>" there; a re-send finds its own request id and
-- answers the recorded answer, changing nothing (no second count in meta.refused).
-- Bounded: one field per lane of a caller (at most its acks in flight at once); reserve's
-- housekeeping drops the fields older than 10 minutes (sampled). Lane "" records nothing.
--   reqs  HASH  "<workerId>:a<n>" -> "<requestId>|<ms>|<answer>"

-- ack_again(reqs, lane, req): the answer recorded for call `req` on `lane` (text), or nil.
local function ack_again(reqs, lane, req)
  if lane == '' then return nil end
  local rec = redis.call('HGET', reqs, lane)
  if not rec or string.sub(rec, 1, #req + 1) ~= req .. '|' then return nil end
  local _, e = string.find(rec, '|%d+|', #req + 1)
  return e and string.sub(rec, e + 1) or nil
end

-- ack_record(reqs, lane, req, answer): record the answer (text) of call `req` on `lane`.
-- pcall: best effort, a refusal must stay a refusal (not an OOM error) when Redis is full.
local function ack_record(reqs, lane, req, answer)
  if lane == '' then return end
  local t = redis.call('TIME')
  local ms = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  redis.pcall('HSET', reqs, lane, req .. '|' .. ms .. '|' .. answer)
end

-- ack_list(text): a recorded answer "1,0,…" as the list of numbers it was.
local function ack_list(text)
  local out = {}
  for n in string.gmatch(text, '[^,]+') do out[#out + 1] = tonumber(n) end
  return out
end
