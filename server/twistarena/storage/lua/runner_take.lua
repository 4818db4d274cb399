-- Hand the oldest waiting hosted seat to a runner.
-- KEYS: pending, seats, held, holder. ARGV: runner id, hold ms.
-- Returns {seat key, SeatAssignment bytes, handoffs} or false when none waits.
-- A seat whose match ended meanwhile (no assignment left) is skipped.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
while true do
  local item = redis.call('LPOP', KEYS[1])
  if not item then return false end
  local assignment = redis.call('HGET', KEYS[2], item)
  if assignment then
    redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), item)
    redis.call('HSET', KEYS[4], item, ARGV[1])
    local handoffs = redis.call('HINCRBY', KEYS[2], item .. '#handoffs', 1) - 1
    return {item, assignment, handoffs}
  end
end
