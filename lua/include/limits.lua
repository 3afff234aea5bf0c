-- out_of_range: the refusal for a size argument of a call outside 0..max, or false when it
-- is a whole number in range. A script checks its own limits before its first write:
-- a Lua `unpack` of more than a few thousand values fails, and a script that fails after
-- a write leaves that write done (Redis does not roll a script back). Maps to
-- InvalidOptions in src/engine/calls/Replies.ts.
--   script  the script's name, for the message
--   name    the argument's name (as in the script's header)
--   value   the argument as sent (string) or a count the script made (number)
--   max     its largest value
-- returns {'OUT_OF_RANGE', script, name, value, max}, or false
local function out_of_range(script, name, value, max)
  local n = tonumber(value)
  if n and n >= 0 and n <= max and n == math.floor(n) then return false end
  return {'OUT_OF_RANGE', script, name, tostring(value), max}
end
