-- release.lua - signed correction of an admission's debit (P4, paper IV-C).
--
-- The ticket (bp:{target}:tk:<n>, a string written by admit.lua:
-- "<k> <requests> <tokens debited> <ablation 0|1|2> <queue id>", ablation
-- 1 = no-DRF, 2 = no-priority) records what was debited. Release debits (actual > debited) or refunds (actual < debited)
-- the difference on L1, on the class's admitted total and on the queue's
-- virtual tag (dominant-share units at the current caps and weights), then
-- deletes the ticket: a second release of the same ticket changes nothing.
--
-- With ARGV[5] = "refused" the provider refused the admitted call (a 429):
-- L1 and the class totals keep the debit (the provider's window was full,
-- the gate's view of it stays conservative), and the queue's tag gives back
-- the call's whole dominant share, so a queue is charged once per call served
-- (a large call refused by a window edge keeps its turn; issue 16).
--
-- KEYS[1] = "bp:{target}"
-- ARGV: ticket, actual_requests, actual_tokens, [now_ms] (tests only), ["refused"]
-- Reply: 1 if applied, 0 if the ticket was unknown (released, expired, "0")

local P = KEYS[1]
local H, BL = P .. ':state', P .. ':bl'
-- Packed fields: "1 2.5 3" -> {1, 2.5, 3} (nil -> {}), one pattern per layout.
local P2 = '^(%S+) (%S+)$'
local P8 = '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$'
local P9 = '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$'
local function nums(str, pat)
  if not str then return {} end
  local v = {string.match(str, pat)}
  for i = 1, #v do v[i] = tonumber(v[i]) end
  return v
end
local TK = P .. ':tk:' .. (ARGV[1] or '')
local areq, atok = tonumber(ARGV[2]), tonumber(ARGV[3])
local now = (tonumber(ARGV[4] or '0') or 0) * 1000
local refused = ARGV[5] == 'refused'
if not areq or not atok or areq < 0 or atok < 0 or areq ~= math.floor(areq)
    or atok ~= math.floor(atok) then
  return redis.error_reply('ERR bp: actual costs must be integers >= 0')
end
local raw = redis.call('GET', TK)
if not raw then return 0 end
redis.call('DEL', TK)
local k, dreq, dtok, abl, qid = string.match(raw, '^(%S+) (%S+) (%S+) (%S+) (%S+)$')
if not qid then return redis.error_reply('ERR bp: malformed ticket') end
dreq, dtok = tonumber(dreq), tonumber(dtok)
local tenant = string.match(qid, '^[^:]+:(.+)$')
if now <= 0 then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
end
local s = redis.call('HMGET', H, 'cfg', 'g', 'q:' .. qid, 'c:' .. k, 'tw:' .. tenant,
  'omega:' .. k)
local c = nums(s[1], P8)
local Cr, Ct = c[1], c[2] or 0
if not Cr or Cr <= 0 then return 1 end
local burst = c[3] or 1
local capr, capt = Cr * burst, Ct * burst
local dr, dt = areq - dreq, atok - dtok
if Ct == 0 or refused then dt = 0 end
if refused then dr = 0 end

-- L1: refill to now, then apply the signed difference (may go below zero:
-- a debt that later admissions wait out).
local g = nums(s[2], P8)
local r, t, ts = g[1] or capr, g[2] or capt, g[3] or now
local el = math.max(0, now - ts)
r = math.min(capr, r + Cr * el / 1e6 - dr)
t = math.min(capt, t + Ct * el / 1e6 - dt)
local hw = {'g', string.format('%.17g %.17g %d %.17g %.17g %.17g %d %d', r, t, math.max(ts, now),
  g[4] or 0, g[5] or 0, g[6] or 0, g[7] or 0, g[8] or 0)}
local cl = nums(s[4], P2)
hw[3], hw[4] = 'c:' .. k, string.format('%d %d', (cl[1] or 0) + dr, (cl[2] or 0) + dt)

-- L3: the queue's tag moves by the change in its dominant share.
local q = nums(s[3], P9)
if q[1] then
  local function sig(req, tok)
    local x = req / Cr
    if abl ~= '1' and Ct > 0 then x = math.max(x, tok / Ct) end
    return x
  end
  local w = (tonumber(s[5]) or 1) * ((abl == '2') and 1 or (tonumber(s[6]) or 1))
  local dF = (sig(areq, atok) - sig(dreq, dtok)) / w
  if refused then dF = -sig(dreq, dtok) / w end
  if dF ~= 0 then
    q[1] = q[1] + dF
    hw[5], hw[6] = 'q:' .. qid, string.format('%.17g %d %.17g %.17g %d %d %d %d %d', q[1],
      q[2] or 0, q[3] or 0, q[4] or 0, q[5] or 0, q[6] or 0, q[7] or 0, q[8] or 0, q[9] or 0)
    redis.call('ZADD', BL, 'XX', q[1], qid)  -- only if backlogged
  end
end
redis.call('HSET', H, unpack(hw))
return 1
