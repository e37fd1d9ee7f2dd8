-- configure.lua - hot update of a target's configuration (I2).
--
-- Sets (or, with an empty value, deletes) fields of the state hash and
-- rebuilds the packed 'cfg' field that admit.lua reads on every call, in one
-- atomic step. Fields: requests_per_s, tokens_per_s, burst_s,
-- max_cost_requests, max_cost_tokens (read by admit.lua directly), omega:<k>,
-- omega_sum, classes, tw:<tenant>, lend_fraction, slack_ms, grace_ms,
-- ticket_ttl_ms, adapt, adapt_beta, adapt_recover_ms, adapt_window_ms,
-- adapt_min_429 (README "Key schema").
--
-- Adaptive caps: with adapt not "1" the learned state 'ad' is deleted (the
-- configured caps apply at once); a changed adapt_recover_ms re-bases 'ad'
-- (each fraction as of now, recovering at the new rate from now on).
--
-- KEYS[1] = "bp:{target}"
-- ARGV: field1, value1, field2, value2, ...
-- Reply: the packed cfg string, or nil if requests_per_s is not set.

local H = KEYS[1] .. ':state'
for i = 1, #ARGV, 2 do
  if ARGV[i + 1] == '' then
    redis.call('HDEL', H, ARGV[i])
  else
    redis.call('HSET', H, ARGV[i], ARGV[i + 1])
  end
end
local ad = redis.call('HMGET', H, 'adapt', 'ad', 'adapt_recover_ms')
if ad[1] ~= '1' then
  redis.call('HDEL', H, 'ad')
elseif ad[2] then
  local a = {}
  for x in string.gmatch(ad[2], '%S+') do a[#a + 1] = tonumber(x) end
  local tau = (tonumber(ad[3]) or 120000) * 1000
  if #a == 10 and a[5] ~= tau and tau > 0 then
    local tm = redis.call('TIME')
    local now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
    for _, i in ipairs({1, 3}) do
      a[i] = math.min(1, a[i] + math.max(0, now - a[i + 1]) / a[5])
      a[i + 1] = now
    end
    a[5] = tau
    redis.call('HSET', H, 'ad', string.format('%.17g %d %.17g %d %d %d %d %d %d %d', unpack(a)))
  end
end
local f = redis.call('HMGET', H, 'requests_per_s', 'tokens_per_s', 'burst_s', 'omega_sum',
  'lend_fraction', 'slack_ms', 'grace_ms', 'ticket_ttl_ms')
if not f[1] then
  redis.call('HDEL', H, 'cfg')
  return nil
end
for i = 1, 8 do f[i] = f[i] or '-' end  -- '-' = default (tonumber gives nil)
local cfg = table.concat(f, ' ')
redis.call('HSET', H, 'cfg', cfg)
return cfg
