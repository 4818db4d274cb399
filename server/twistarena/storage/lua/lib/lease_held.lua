-- Whether the lease hash at `key` is held by `token` and still valid by the store's
-- clock: the fence of every write made under a lease. A match whose end is
-- stored (`ended`, set by finish.lua) takes no more writes: its end is final.
local function lease_held(key, token)
  local o = redis.call('HMGET', key, 'token', 'until', 'ended')
  if o[1] ~= token or o[3] then return false end
  local t = redis.call('TIME')
  return tonumber(o[2]) > tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
