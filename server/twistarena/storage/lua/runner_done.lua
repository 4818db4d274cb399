-- A runner is done with a seat (its match is over for it): forget the seat,
-- if that runner still holds it.
-- KEYS: seats, held, holder. ARGV: runner id, seat key.
-- Returns 1 if forgotten, 0 if the seat is another runner's (or gone).
if redis.call('HGET', KEYS[3], ARGV[2]) ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[1], ARGV[2], ARGV[2] .. '#handoffs')
return 1
