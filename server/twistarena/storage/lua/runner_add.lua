-- Put a hosted seat in the waiting line unless it waits there or a runner holds
-- it already, so that a node putting back a seat the store lost (and the node
-- that creates it) may both ask: the seat is in the line once.
-- KEYS: pending, seats, holder, handout (the seat's). ARGV: seat key,
-- SeatAssignment bytes, skip (1: a runner may have been given the seat in a
-- write the store lost).
-- The seat's next hand-out is above every one the store knows of (and, with
-- skip, one more), so a runner given it before is still refused.
-- Returns 1 if added, 0 if it was waiting or held.
local item = ARGV[1]
if redis.call('HEXISTS', KEYS[3], item) == 1 then return 0 end
if redis.call('LPOS', KEYS[1], item) then return 0 end
local counted = tonumber(redis.call('HGET', KEYS[2], item .. '#handoffs') or '0')
local latest = tonumber(redis.call('GET', KEYS[4]) or '0')
local handoffs = math.max(counted, latest) + tonumber(ARGV[3])
redis.call('HSET', KEYS[2], item, ARGV[2])
if handoffs > 0 then
  redis.call('HSET', KEYS[2], item .. '#handoffs', handoffs)
end
redis.call('RPUSH', KEYS[1], item)
return 1
