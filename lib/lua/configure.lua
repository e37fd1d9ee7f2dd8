-- configure.lua - hot update of a target's configuration (I2).
--
-- Sets (or, with an empty value, deletes) fields of the state hash and
-- rebuilds the packed 'cfg' field that admit.lua reads on every call, in one
-- atomic step. Fields: requests_per_s, tokens_per_s, burst_s,
-- max_cost_requests, max_cost_tokens (read by admit.lua directly), omega:<k>,
-- omega_sum, classes, tw:<tenant>, lend_fraction, slack_ms, grace_ms,
-- ticket_ttl_ms (README "Key schema").
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
