-- A seat was handed to a runner: remember what the runner plays it with (until
-- it reports), and raise the seat's latest hand-out to this one (never lower:
-- two nodes may note their hand-outs of one seat out of order).
-- KEYS: played, handout. ARGV: played value, hand-out, ttl s.
-- Returns the seat's latest hand-out.
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
local latest = tonumber(redis.call('GET', KEYS[2]) or '0')
local handout = tonumber(ARGV[2])
if handout > latest then
  redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
  return handout
end
return latest
