-- admit.lua - one atomic multi-resource admission (paper Algorithm 1, SPEC 4).
--
-- Rule (README "The gate"): L1 is a token bucket per dimension (rate C_d,
-- capacity C_d * burst_s). Fairness is start-time fair queuing in dominant-
-- share units (DRFQ) over the set of backlogged queues, with queue weight
-- w_t * omega_k. Each queue q = (k, tenant) carries a virtual tag F_q that an
-- admission advances by sigma / w_q, sigma = max_d c_d / C_d. V is the least
-- tag among backlogged queues. A call is admitted when L1 holds its cost (the
-- whole bucket for a cost above the bucket's capacity, which leaves a debt)
-- and its start tag S_q = max(F_q, V) is at most V + slack (or when L1 is so full
-- that nobody backlogged is using it: lending). Otherwise it is DEFERred until
-- its turn, at the virtual-clock speed X* of equation (1). L2 (the class
-- split omega_k / sum(omega)) is realized by the weights; per-class admitted
-- totals are kept for bpctl.
--
-- Cost: 4-6 Valkey commands per call (an HMGET of six and an HSET of three
-- packed fields of the state hash, a ZRANGE of the two least tags, a ZADD when
-- backlogged, a SET for the ticket), O(log n) in the n active queues.
-- Eviction is bounded (at most 12 queues) and runs at most once per 10 ms.
-- Numbers are packed into space-separated fields because converting numbers
-- to strings dominates a script's cost; times are integer microseconds.
--
-- KEYS[1] = "bp:{target}" (prefix; routes the call to the target's shard)
-- ARGV: tenant, priority, requests, tokens, max_tokens, mode, ablation,
--       queue_ttl_ms, [now_ms]   (now_ms > 0 only in tests; else server TIME)
-- Reply: {"ADMIT", ticket} | {"DEFER", delta_ms, binding} | {"REJECT", reason}

local P = KEYS[1]
local H, BL, BX, SEEN = P .. ':state', P .. ':bl', P .. ':bx', P .. ':seen'
-- Packed fields: "1 2.5 3" -> {1, 2.5, 3} (nil -> {}), one pattern per layout.
local P2 = '^(%S+) (%S+)$'
local P8 = '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$'
local P9 = '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$'
local function nums(str, pat)  -- numbers, and the raw text of each
  if not str then return {}, {} end
  local raw = {string.match(str, pat)}
  local v = {}
  for i = 1, #raw do v[i] = tonumber(raw[i]) end
  return v, raw
end
-- Formatting numbers is the costliest step: reuse the stored text of a field
-- that did not change.
local function keep(x, old, raw)
  if raw and x == old then return raw end
  return string.format('%.17g', x)
end
-- Packed layouts (README "Key schema"):
local QFMT = '%.17g %d %.17g %.17g %d %d %d %d %d'  -- F T_us dr dt bl zs_us admits defers lent
local GFMT = '%.17g %.17g %d %.17g %.17g %.17g %d %d'  -- r t ts_us V Dr Dt seq evt_us

---------------------------------------------------------------- arguments
local tenant = ARGV[1]
local k = tonumber(ARGV[2])
local creq, ctok = tonumber(ARGV[3]), tonumber(ARGV[4])
local maxtok = tonumber(ARGV[5]) or 0
local mode, ablation = ARGV[6], ARGV[7]
local ttl = (tonumber(ARGV[8]) or 10000) * 1000
local now = (tonumber(ARGV[9] or '0') or 0) * 1000
if not tenant or tenant == '' or #tenant > 128 or tenant:find('[%s:]') then
  return redis.error_reply('ERR bp: tenant must be 1-128 bytes without spaces or colons')
end
if not k or k < 1 or k ~= math.floor(k) then
  return redis.error_reply('ERR bp: priority must be an integer >= 1')
end
if not creq or not ctok or creq < 0 or ctok < 0 or maxtok < 0 or creq ~= math.floor(creq)
    or ctok ~= math.floor(ctok) or maxtok ~= math.floor(maxtok) then
  return redis.error_reply('ERR bp: costs must be integers >= 0')
end
if now <= 0 then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
end
if ablation == 'nopriority' then k = 1 end
-- L1 debits tdebit (reservation: the worst case prompt + max_tokens, so L1
-- never admits more than the cap). The fair rule charges ttag, the estimate
-- (prompt tokens), in every mode: release corrects the tag to the actual
-- usage, so shares and the virtual-clock speed follow the tokens used, not
-- the reserved ones (issue 12; reserved costs paced the fair rule at
-- C_t / (prompt + max_tokens) calls per second).
local tdebit, ttag = ctok, ctok
if mode == 'reservation' then tdebit = ctok + maxtok end
local qid = k .. ':' .. tenant

---------------------------------------------------------------- one read
local s = redis.call('HMGET', H, 'cfg', 'omega:' .. k, 'tw:' .. tenant, 'g', 'q:' .. qid,
  'c:' .. k, 'ad', 'max_cost_requests', 'max_cost_tokens', 'l1hold')
-- cfg: Cr Ct burst_s omega_sum lend_fraction slack_ms grace_ms ticket_ttl_ms
-- (written by configure.lua; read on every call: hot updates, I2)
local c = nums(s[1], P8)
local Cr, Ct = c[1], c[2] or 0
if not Cr or Cr <= 0 then
  return redis.error_reply('ERR bp: target not configured (set caps)')
end
local burst = c[3] or 1
local omega = tonumber(s[2]) or 1
local omega_sum = c[4] or omega
-- A class beyond the configured omega_1..omega_K would get the default weight
-- 1 and could outrank P1 (omega_1 < 1): refuse it. Without priority weights
-- (no omega_sum) every class has weight 1.
if not s[2] and c[4] then
  return {'REJECT', string.format('priority %d above the configured classes 1..%s',
    k, redis.call('HGET', H, 'classes') or '?')}
end
if ablation == 'nopriority' then omega, omega_sum = 1, 1 end
local lend, slack_us, grace_us = c[5] or 0.5, (c[6] or 50) * 1000, (c[7] or 200) * 1000
local ticket_ttl = c[8] or 600000
local w = (tonumber(s[3]) or 1) * omega
if w <= 0 then w = 1e-9 end
local capr, capt = Cr * burst, Ct * burst
-- Largest admissible cost per dimension: the provider's own capacity for one
-- window (max_cost_*, set by the operator), else one minute of cap (RPM, TPM),
-- never less than the bucket. Only a cost the provider itself would refuse
-- ("Request too large") is REJECTed; a cost above the bucket capacity is
-- admitted into debt (see "L1 need" below).
local maxr = tonumber(s[8]) or math.max(Cr * 60, capr)
local maxt = tonumber(s[9]) or math.max(Ct * 60, capt)
if creq > maxr then
  return {'REJECT', string.format('request too large: %g requests exceed max_cost_requests %g '
    .. '(the provider\'s limit per window) by %g', creq, maxr, creq - maxr)}
end
if Ct > 0 and tdebit > maxt then
  return {'REJECT', string.format('request too large: %g tokens%s exceed max_cost_tokens %g '
    .. '(the provider\'s limit per window) by %g', tdebit,
    mode == 'reservation' and ' (prompt + max_tokens)' or '', maxt, tdebit - maxt)}
end
-- Adaptive caps (README "Adaptive caps"; written by release.lua when the
-- tuning switch adapt is on): 'ad' = "fr tr_us ft tt_us tau_us ...", the
-- learned fraction f_d of each cap, recovering by (now - t_d) / tau up to 1.
-- L1 refills and equation (1) use the learned caps; the burst capacity (and
-- so REJECT) stays at the configured ones.
if s[7] then
  local a = nums(s[7], '^(%S+) (%S+) (%S+) (%S+) (%S+)')
  if a[5] and a[5] > 0 then
    Cr = Cr * math.min(1, a[1] + math.max(0, now - a[2]) / a[5])
    Ct = Ct * math.min(1, a[3] + math.max(0, now - a[4]) / a[5])
  end
end

---------------------------------------------------------------- L1 refill
local g, graw = nums(s[4], P8)
local r, t = g[1] or capr, g[2] or capt
local ts = g[3] or now
local V, Dr, Dt = g[4] or 0, g[5] or 0, g[6] or 0
local seq, evt = g[7] or 0, g[8]
local el = math.max(0, now - ts)
r = math.min(capr, r + Cr * el / 1e6)
t = math.min(capt, t + Ct * el / 1e6)
if ts < now then ts = now end

---------------------------------------------------------------- eviction
-- Bounded (amortized O(1): each queue enters each set once per episode),
-- at most once per 10 ms. Leaving the backlog subtracts the queue's share of
-- D_d (eq. 1). SEEN scores are refreshed every ttl / 8, so an idle queue is
-- evicted after between 7/8 and 1 times the TTL.
local q, qraw = nums(s[5], P9)
local function leave_backlog(id)
  local e = (id == qid) and q or nums(redis.call('HGET', H, 'q:' .. id), P9)
  if id == qid then qraw[3], qraw[4], qraw[5] = '0', '0', '0' end
  if e[1] then
    Dr, Dt = Dr - (e[3] or 0), Dt - (e[4] or 0)
    e[3], e[4], e[5] = 0, 0, 0
    redis.call('HSET', H, 'q:' .. id, string.format(QFMT, e[1], e[2] or 0, 0, 0, 0, e[6] or 0,
      e[7] or 0, e[8] or 0, e[9] or 0))
  end
  redis.call('ZREM', BL, id)
  redis.call('ZREM', BX, id)
end
if not evt or now >= evt + 10000 or now < evt then
  evt = now
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', BX, '-inf', now, 'LIMIT', 0, 8)) do
    leave_backlog(id)
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', SEEN, '-inf', now - ttl, 'LIMIT', 0, 4)) do
    if redis.call('ZSCORE', BL, id) then leave_backlog(id) end
    redis.call('HDEL', H, 'q:' .. id)
    redis.call('ZREM', SEEN, id)
    if id == qid then q, qraw = {}, {} end
  end
end

---------------------------------------------------------------- queue state
local sigma = creq / Cr
if ablation ~= 'nodrf' and Ct > 0 then sigma = math.max(sigma, ttag / Ct) end
local quantum = sigma / w
local in_bl = q[5] == 1
local first = redis.call('ZRANGE', BL, 0, 1, 'WITHSCORES')
if #first == 0 then Dr, Dt = 0, 0 end  -- empty backlog: no float drift
local others = #first > 0 and not (first[1] == qid and #first == 2)
if #first > 0 then V = math.max(V, tonumber(first[2])) end
local F = q[1] or V
local S = math.max(F, V)
local zs = q[6]
if not zs or now - zs >= ttl / 8 or now < zs then
  redis.call('ZADD', SEEN, now, qid)
  zs = now
end

-- Virtual-clock speed X* (eq. 1, per second) over the backlog plus this queue.
local my_dr, my_dt = 0, 0
if sigma > 0 then
  my_dr = w * creq / sigma
  if ablation ~= 'nodrf' then my_dt = w * ttag / sigma end
end
local Dr_all, Dt_all = Dr, Dt
if not in_bl then Dr_all, Dt_all = Dr + my_dr, Dt + my_dt end
local X = math.huge
if Dr_all > 0 then X = math.min(X, Cr / Dr_all) end
if Ct > 0 and Dt_all > 0 then X = math.min(X, Ct / Dt_all) end
local slack = slack_us / 1e6 * X
if slack == math.huge or slack < quantum then slack = quantum end

---------------------------------------------------------------- decision
local fair = (not others) or sigma == 0 or (S - V) <= slack + 1e-12
-- L1 need: the cost, or the whole bucket for a cost above its capacity. The
-- debit may then leave a negative level (a debt): a later call of cost c at
-- level -D waits (D + c) / C_d, so admitted cost over any span stays within
-- C_d * span + max(capacity, largest cost) (README "The gate"; the same
-- bound as GCRA's, ITU-T I.371, with tolerance = the bucket).
local needr, needt = math.min(creq, capr), math.min(tdebit, capt)
local l1_ok = r >= needr - 1e-9 and (Ct == 0 or t >= needt - 1e-9)
-- l1hold "<until_us> <queue id>": a queue that is due waits for L1 to refill
-- (e.g. for a full bucket); nobody borrows that refill meanwhile.
local hold_us, hold_q = string.match(s[10] or '', '^(%S+) (%S+)$')
hold_us = tonumber(hold_us) or 0
local lent = false
if l1_ok and not fair and (now >= hold_us or hold_q == qid) then
  lent = (r - creq) >= lend * capr and (Ct == 0 or (t - tdebit) >= lend * capt)
end

if l1_ok and (fair or lent) then
  r = r - creq
  if Ct > 0 then t = t - tdebit end
  -- Tags: F advances one quantum; V follows the least backlogged tag. Raising
  -- this queue's tag changes the least tag only if it was the least.
  F = S + quantum
  if in_bl then
    redis.call('ZADD', BL, F, qid)
    local m = F
    if first[1] ~= qid then m = tonumber(first[2])
    elseif #first == 4 then m = math.min(F, tonumber(first[4])) end
    V = math.max(V, m)
  elseif not others then
    V = math.max(V, S)
  end
  local ticket = '0'
  if mode ~= 'estimate' then
    seq = seq + 1
    ticket = string.format('%d', seq)
    -- "<k> <requests> <tokens debited> <ablation 0|1|2> <queue id> <tokens on the tag>"
    local abl = (ablation == 'nodrf' and 1) or (ablation == 'nopriority' and 2) or 0
    redis.call('SET', P .. ':tk:' .. ticket, string.format('%d %d %d %d %s %d', k, creq, tdebit,
      abl, qid, ttag), 'PX', math.floor(ticket_ttl))
  end
  local cl = nums(s[6], P2)  -- per-class admitted requests and tokens (L2 view)
  if hold_q == qid then redis.call('HDEL', H, 'l1hold') end  -- the holder got its turn
  redis.call('HSET', H,
    'g', string.format('%.17g %.17g %d %s %s %s %d %d', r, t, ts, keep(V, g[4], graw[4]),
      keep(Dr, g[5], graw[5]), keep(Dt, g[6], graw[6]), seq, evt),
    'q:' .. qid, string.format('%.17g %s %s %s %s %d %d %s %d', F, qraw[2] or '0',
      qraw[3] or '0', qraw[4] or '0', qraw[5] or '0', zs, (q[7] or 0) + 1, qraw[8] or '0',
      (q[9] or 0) + (lent and 1 or 0)),
    'c:' .. k, string.format('%d %d', (cl[1] or 0) + creq, (cl[2] or 0) + tdebit))
  return {'ADMIT', ticket}
end

---------------------------------------------------------------- defer
-- delta = the later of: the time until this queue's start tag is within the
-- slack of V at speed X*, and the time until L1 holds the cost. Deferred
-- callers of one queue then queue up in a line: while the last promised
-- wake-up T_q is in the future, the next caller wakes one fair gap
-- (quantum / X*) after it, so a cohort of workers does not wake at once.
local delta, binding = 0, 'fair'  -- microseconds
if S - V > slack and X < math.huge then
  delta = (S - V - slack) / X * 1e6
end
if not l1_ok then
  -- Refill time of the need: (debt + cost) / C_d when the level is -debt.
  local dr_us = math.max(0, (needr - r) / Cr * 1e6)
  local dt_us = 0
  if Ct > 0 then dt_us = math.max(0, (needt - t) / Ct * 1e6) end
  if math.max(dr_us, dt_us) >= delta then
    delta = math.max(dr_us, dt_us)
    binding = (dt_us > dr_us) and 'l1:tokens' or 'l1:requests'
  end
end
local line = q[2]
-- A due call above the bucket waits only for the full bucket (it holds the
-- refill, l1hold): sending it behind its queue's line would idle the cap.
local oversized = creq > capr or (Ct > 0 and tdebit > capt)
if fair and oversized and not l1_ok then line = nil end
if line and line > now and X < math.huge then
  delta = math.max(delta, line - now + quantum / X * 1e6)
end
local delta_ms = math.max(1, math.min(60000, math.ceil(delta / 1000 - 1e-6)))
if fair and not l1_ok and (now >= hold_us or hold_q == qid) then
  -- Due, and only L1 is short: hold lending off until this wake-up (+ grace).
  redis.call('HSET', H, 'l1hold', string.format('%d %s', now + delta_ms * 1000 + grace_us, qid))
end
-- Join (or stay in) the backlog with start tag S and this call's D_d share.
if in_bl then
  Dr, Dt = Dr - (q[3] or 0) + my_dr, Dt - (q[4] or 0) + my_dt
else
  Dr, Dt = Dr + my_dr, Dt + my_dt
end
redis.call('ZADD', BL, S, qid)
redis.call('ZADD', BX, 'GT', now + (delta_ms * 1000) + grace_us, qid)
redis.call('HSET', H,
  'g', string.format(GFMT, r, t, ts, V, Dr, Dt, seq, evt),
  'q:' .. qid, string.format(QFMT, S, now + delta_ms * 1000, my_dr, my_dt, 1, zs, q[7] or 0,
    (q[8] or 0) + 1, q[9] or 0))
return {'DEFER', delta_ms, binding}
