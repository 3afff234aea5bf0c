--[[
  deps-page — a page of a parent's children: each one's queue, id and where its dependency
  stands (pending, or the outcome that counted), with its result when it is in this queue
  and retained, else the result it completed with, kept on its edge (cut at 64 KiB; a
  larger one is left out and its size given).

  KEYS[1] meta     HASH  layout version (not written)
  KEYS[2] result   HASH  id -> result of a retained completed job
  KEYS[3..] ready  READY_KEYS (src/engine/model/Keys.ts): the dependencies' keys (only
                   lua/include/deps.lua)

  ARGV[1] layout   layout version
  ARGV[2] parent   the parent's id
  ARGV[3] after    the cursor: the last member of the previous page ("" from the start);
                   it starts with "<parent>|" (the caller refuses another: a lex range from
                   it would read other parents' children, src/engine/calls/DependencyPage.ts)
  ARGV[4] count    the most children (1 to 1000)

  Returns
    {cursor, pending, open, waiting, queue_1, id_1, state_1, result_1, …}  cursor "" at the end;
      pending: the children still counted as pending; open 1 while open; waiting 1 while the
      parent waits for children; state "<policy>" pending or "<policy>|<outcome>"; result
      the JSON text, "" for none (a child of another queue: read it there), or "#<bytes>";
      a "remove" child that counted without completing is left out (a page may be short)
    {'LAYOUT_MISMATCH', found} layout mismatch
]]
local META = KEYS[1]
--!include layout-guard
--!include ready
--!include deps
local page, cursor = deps_page(ARGV[2], ARGV[3], tonumber(ARGV[4]))
local pending, open = deps_pending(ARGV[2])
local out = {cursor, pending, open and 1 or 0, deps_waiting_since(ARGV[2]) and 1 or 0}
local prefix = #ARGV[2] + 2
for i = 1, #page, 2 do
  local rest = string.sub(page[i], prefix)
  local bar = string.find(rest, '|', 1, true)
  local cq, cid = string.sub(rest, 1, bar - 1), string.sub(rest, bar + 1)
  local result = ''
  -- "<policy>|<outcome>|<result>": the result a completed child counted with (of this queue,
  -- or of another whose complete released it in its script)
  local st, kept = page[i + 1], ''
  local second = string.find(st, '|', (string.find(st, '|', 1, true) or #st) + 1, true)
  if second then st, kept = string.sub(st, 1, second - 1), string.sub(st, second + 1) end
  if cq == '' then
    local size = redis.call('HSTRLEN', KEYS[2], cid)
    if size > 65536 then result = '#' .. size elseif size > 0 then result = redis.call('HGET', KEYS[2], cid) else result = kept end
  else
    -- a child of another queue: the result its complete kept here (fan-in, deps-fanin.lua)
    result = kept
  end
  -- a 'remove' dependency that counted without completing is not listed (its edge stays,
  -- the idempotence of its note, and goes with the parent: lua/include/deps-gone.lua)
  if string.sub(st, 1, 7) ~= 'remove|' or st == 'remove|completed' then
    out[#out + 1], out[#out + 2], out[#out + 3], out[#out + 4] = cq, cid, st, result
  end
end
return out
