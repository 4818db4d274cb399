-- Seats whose runner stopped renewing them (dead, cut off, or its node died)
-- go back to the front of the waiting line.
-- KEYS: pending, seats, held, holder. ARGV: at most this many.
-- Returns the seat keys that moved.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
for _, item in ipairs(expired) do
  redis.call('ZREM', KEYS[3], item)
  redis.call('HDEL', KEYS[4], item)
  if redis.call('HEXISTS', KEYS[2], item) == 1 then
    redis.call('LPUSH', KEYS[1], item)
  end
end
return expired
