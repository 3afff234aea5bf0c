-- job-name: a job's name as its stored payload carries it.
-- payload_name(p): the job name a stored payload carries in front (src/engine/model/Carrier.ts:
--   "~n:<name>\0", after a "~tp:<55>;" traceparent if any), or false. One byte compare for a
--   payload without one.
local function payload_name(p)
  if not p or string.byte(p, 1) ~= 126 then return false end
  local from = 1
  if string.sub(p, 1, 4) == '~tp:' and string.sub(p, 60, 60) == ';' then from = 61 end
  if string.sub(p, from, from + 2) ~= '~n:' then return false end
  local stop = string.find(p, '\0', from + 3, true)
  return stop and string.sub(p, from + 3, stop - 1) or false
end
