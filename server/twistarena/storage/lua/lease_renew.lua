-- Extend a lease that is still valid.
-- KEYS: lease. ARGV: token, lease ms.
-- Returns the new expiry (ms, Redis TIME), 0 (not ours, or the match's end is
-- stored: its referee has nothing left to hold it for) or -1 (expired).
local o = redis.call('HMGET', KEYS[1], 'token', 'until', 'ended')
if o[1] ~= ARGV[1] or o[3] then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(o[2]) <= now then return -1 end
local untilms = now + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'until', untilms)
return untilms
