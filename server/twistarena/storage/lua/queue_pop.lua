-- Take one match's worth of agents out of a matchmaking queue.
-- KEYS: order, alive, fill, rating, bot. ARGV: seats, mode ('fifo' | 'rating').
-- Drops agents nobody vouches for, then takes the oldest agents (or the oldest
-- and those closest to it in rating), or, when fewer wait, everyone waiting if
-- one of them may have house bots by now. Returns a flat list agent, bot,
-- agent, bot... (empty: no match yet).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function drop(a)
  redis.call('ZREM', KEYS[1], a)
  redis.call('ZREM', KEYS[2], a)
  redis.call('ZREM', KEYS[3], a)
  redis.call('HDEL', KEYS[4], a)
  redis.call('HDEL', KEYS[5], a)
end
for _, a in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do drop(a) end
local n = tonumber(ARGV[1])
local all = redis.call('ZRANGE', KEYS[1], 0, -1)
if #all == 0 then return {} end
local picked = {}
if #all >= n then
  if ARGV[2] == 'rating' and #all > n then
    local r0 = tonumber(redis.call('HGET', KEYS[4], all[1]) or '0') or 0
    local others = {}
    for i = 2, #all do
      local r = tonumber(redis.call('HGET', KEYS[4], all[i]) or '0') or 0
      table.insert(others, {math.abs(r - r0), i, all[i]})
    end
    table.sort(others, function(x, y)
      if x[1] == y[1] then return x[2] < y[2] end
      return x[1] < y[1]
    end)
    picked = {all[1]}
    for i = 1, n - 1 do table.insert(picked, others[i][3]) end
  else
    for i = 1, n do picked[i] = all[i] end
  end
else
  local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 1)
  if #due == 0 then return {} end
  picked = {due[1]}
  for i = 1, #all do
    if all[i] ~= due[1] then table.insert(picked, all[i]) end
  end
end
local out = {}
for _, a in ipairs(picked) do
  table.insert(out, a)
  table.insert(out, redis.call('HGET', KEYS[5], a) or '')
  drop(a)
end
return out
