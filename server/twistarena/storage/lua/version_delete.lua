-- Delete a version no seat may still be playing and that is not the active one.
-- KEYS: version hash, the agent's version index, its active version, its archive
-- bytes, the version's playing seats, its failures, its stats counts, its cpumax.
-- ARGV: version id, now ms, then the stats counters' names.
-- Returns {1, content hash, packed bytes}, {-1} (no such version), {-2} (it is
-- the active one) or {-3, seats} (seats handed out with it may still be playing).
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
if redis.call('GET', KEYS[3]) == ARGV[1] then return {-2} end
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', ARGV[2])
local playing = redis.call('ZCARD', KEYS[5])
if playing > 0 then return {-3, playing} end
local found = redis.call('HMGET', KEYS[1], 'content_hash', 'size')
local size = tonumber(found[2] or '0')
redis.call('DEL', KEYS[1], KEYS[5], KEYS[6])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[8], ARGV[1])
for i = 3, #ARGV do redis.call('HDEL', KEYS[7], ARGV[1] .. ':' .. ARGV[i]) end
if redis.call('DECRBY', KEYS[4], size) < 0 then redis.call('SET', KEYS[4], 0) end
return {1, found[1] or '', size}
