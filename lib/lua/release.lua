-- release.lua - signed correction of an admission's debit (P4, paper IV-C).
--
-- The ticket (bp:{target}:tk:<n>, written by admit.lua) records what was
-- debited. Release debits (actual > debited) or refunds (actual < debited)
-- the difference on L1, on the class's L2 meter and on the queue's virtual
-- tag (in dominant-share units), then deletes the ticket: a second release
-- of the same ticket finds nothing and changes nothing.
--
-- KEYS[1] = "bp:{target}"
-- ARGV: ticket, actual_requests, actual_tokens, [now_ms] (tests only)
-- Reply: 1 if applied, 0 if the ticket was unknown (released, expired, "0")

local P = KEYS[1]
local CFG, G, L2, BL = P .. ':cfg', P .. ':g', P .. ':l2', P .. ':bl'
local TK = P .. ':tk:' .. (ARGV[1] or '')
local areq, atok = tonumber(ARGV[2]), tonumber(ARGV[3])
local now = tonumber(ARGV[4] or '0') or 0
if not areq or not atok or areq < 0 or atok < 0 then
  return redis.error_reply('ERR bp: actual costs must be numbers >= 0')
end
local tk = redis.call('HMGET', TK, 'q', 'k', 'r', 't', 'sigma', 'w', 'drf')
if not tk[1] then return 0 end
redis.call('DEL', TK)
if now <= 0 then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + tonumber(tm[2]) / 1000
end
local c = redis.call('HMGET', CFG, 'requests_per_s', 'tokens_per_s', 'burst_s',
  'omega_sum', 'omega:' .. tk[2])
local Cr, Ct = tonumber(c[1]) or 0, tonumber(c[2]) or 0
if Cr <= 0 then return 1 end
local burst = tonumber(c[3]) or 1
local capr, capt = Cr * burst, Ct * burst
local dr = areq - tonumber(tk[3])
local dt = atok - tonumber(tk[4])
if Ct == 0 then dt = 0 end

-- L1: refill to now, then apply the signed difference (may go below zero:
-- a debt that later admissions wait out).
local g = redis.call('HMGET', G, 'r', 't', 'ts')
local r, t = tonumber(g[1]) or capr, tonumber(g[2]) or capt
local ts = tonumber(g[3]) or now
local el = math.max(0, now - ts)
r = math.min(capr, r + Cr * el / 1000) - dr
t = math.min(capt, t + Ct * el / 1000) - dt
redis.call('HSET', G, 'r', math.min(capr, r), 't', math.min(capt, t), 'ts', math.max(ts, now))

-- L2 meter of the class: same correction, clamped to its capacity.
local k = tk[2]
local omega = tonumber(c[5]) or 1
local share = math.min(1, omega / (tonumber(c[4]) or omega))
local l2 = redis.call('HMGET', L2, k .. ':t')
if l2[1] then
  redis.call('HSET', L2, k .. ':t', math.min(share * capt, tonumber(l2[1]) - dt))
end

-- L3: the queue's tag moves by the change in its dominant share.
local sig = areq / Cr
if tk[7] == '1' and Ct > 0 then sig = math.max(sig, atok / Ct) end
local dF = (sig - tonumber(tk[5])) / tonumber(tk[6])
local QK = P .. ':q:' .. tk[1]
local F = tonumber(redis.call('HGET', QK, 'F'))
if F and dF ~= 0 then
  F = F + dF
  redis.call('HSET', QK, 'F', F)
  if redis.call('ZSCORE', BL, tk[1]) then redis.call('ZADD', BL, F, tk[1]) end
end
return 1
