-- Put an agent in a matchmaking queue.
-- KEYS: order, alive, fill, rating, bot. ARGV: agent, fill after ms (-1: never),
-- mu, bot, alive ms. Returns 1 (queued) or 0 (already in this queue).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local added = redis.call('ZADD', KEYS[1], 'NX', now, ARGV[1])
local fill = tonumber(ARGV[2])
if fill < 0 then fill = 1125899906842624 else fill = now + fill end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[1])
redis.call('ZADD', KEYS[3], fill, ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[5], ARGV[1], ARGV[4])
return added
