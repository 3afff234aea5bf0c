-- layout-guard: refuse a queue whose meta.layout names another key layout than ARGV[1]
-- (the one this client speaks) or layout 1 (spoken while a queue is upgraded from it,
-- lua/upgrade.lua): the script returns {'LAYOUT_MISMATCH', found} at once,
-- having written nothing. Included as statements (not a function, so that it can return
-- from the script) before the script's first write; the script names its meta HASH just
-- above the include: `local META = KEYS[i]`. Leaves `layout`: the stored version, or
-- false for a queue nothing has written yet.
local layout = redis.call('HGET', META, 'layout')
if layout and layout ~= ARGV[1] and layout ~= '1' then return {'LAYOUT_MISMATCH', layout} end
