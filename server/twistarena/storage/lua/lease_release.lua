-- Give a lease up at once: nobody may write until the next claim, which may
-- happen immediately; `next` names the successor chosen (drain handoff).
-- KEYS: lease. ARGV: token, next node, next address. Returns 1, or 0 (not ours).
local o = redis.call('HMGET', KEYS[1], 'token', 'node')
if o[1] ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'token', '', 'node', '', 'until', 0, 'released_ms', now,
           'prev', o[2], 'next', ARGV[2], 'next_addr', ARGV[3])
return 1
