-- peek: the start of a hash field's value, with Redis' work bounded by bytes. HSTRLEN (O(1))
-- gives the length first; a value longer than PEEK_LOAD_MAX, or than what is left of
-- PEEK_BUDGET (bytes this call may still copy into Lua), or any value when `hide` is true,
-- is not loaded at all: peek returns false and its length. A value loaded is cut to
-- PEEK_CUT bytes with string.sub (it was still copied into Lua whole: that copy is what
-- the load limit and the budget bound). The script sets PEEK_CUT, PEEK_LOAD_MAX and
-- PEEK_BUDGET (locals: numbers) above the include. A missing field is false, length 0.
local function peek(key, id, hide)
  local len = redis.call('HSTRLEN', key, id)
  if len == 0 then return false, 0 end
  if hide or len > PEEK_LOAD_MAX or len > PEEK_BUDGET then return false, len end
  PEEK_BUDGET = PEEK_BUDGET - len
  local v = redis.call('HGET', key, id)
  if len > PEEK_CUT then v = string.sub(v, 1, PEEK_CUT) end
  return v, len
end
