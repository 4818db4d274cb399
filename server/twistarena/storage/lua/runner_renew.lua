-- A runner's heartbeat: keep the seats it still holds for another hold period.
-- KEYS: held, holder. ARGV: runner id, hold ms, seat key...
-- Returns the seat keys among ARGV[3..] that are not this runner's (to revoke).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lost = {}
for i = 3, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[1] then
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[i])
  else
    table.insert(lost, ARGV[i])
  end
end
return lost
