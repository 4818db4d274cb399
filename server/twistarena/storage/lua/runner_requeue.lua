-- Seats of a runner that died go back to the front of the waiting line.
-- KEYS: pending, seats, held, holder. ARGV: runner id ('' for any holder), seat key...
-- Only seats still held by that runner (or any, for '') and still assigned move.
-- Returns how many moved.
local moved = 0
for i = 2, #ARGV do
  local item = ARGV[i]
  local holder = redis.call('HGET', KEYS[4], item)
  if holder and (ARGV[1] == '' or holder == ARGV[1]) then
    redis.call('HDEL', KEYS[4], item)
    redis.call('ZREM', KEYS[3], item)
    if redis.call('HEXISTS', KEYS[2], item) == 1 then
      redis.call('LPUSH', KEYS[1], item)
      moved = moved + 1
    end
  end
end
return moved
