-- admit.lua - one atomic multi-resource admission (paper Algorithm 1, SPEC 4).
--
-- Rule (README "The gate"): L1 is a token bucket per dimension (rate C_d,
-- capacity C_d * burst_s). Fairness is start-time fair queuing in dominant-
-- share units (DRFQ) over the set of backlogged queues, with queue weight
-- w_t * omega_k. Each queue q = (k, tenant) carries a virtual tag F_q that an
-- admission advances by sigma / w_q, sigma = max_d c_d / C_d. V is the least
-- tag among backlogged queues. A call is admitted when L1 holds its cost and
-- its start tag S_q = max(F_q, V) is at most V + slack (or when L1 is so full
-- that nobody backlogged is using it: lending). Otherwise it is DEFERred until
-- its turn, at the virtual-clock speed X* of equation (1).
-- L2 (per class and dimension, rate omega_k / sum(omega) * C_d) is an HTB
-- meter: it is debited first and what it cannot cover is counted as borrowed.
--
-- KEYS[1] = "bp:{target}" (prefix; routes the call to the target's shard)
-- ARGV: tenant, priority, requests, tokens, max_tokens, mode, ablation,
--       queue_ttl_ms, [now_ms]   (now_ms > 0 only in tests; else server TIME)
-- Reply: {"ADMIT", ticket} | {"DEFER", delta_ms, binding} | {"REJECT", reason}

local P = KEYS[1]
local CFG, TW, G, L2 = P .. ':cfg', P .. ':tw', P .. ':g', P .. ':l2'
local BL, BX, SEEN = P .. ':bl', P .. ':bx', P .. ':seen'

---------------------------------------------------------------- arguments
local tenant = ARGV[1]
local k = tonumber(ARGV[2])
local creq, ctok = tonumber(ARGV[3]), tonumber(ARGV[4])
local maxtok = tonumber(ARGV[5]) or 0
local mode, ablation = ARGV[6], ARGV[7]
local ttl = tonumber(ARGV[8]) or 10000
local now = tonumber(ARGV[9] or '0') or 0
if not tenant or tenant == '' or #tenant > 128 then
  return redis.error_reply('ERR bp: tenant must be 1-128 bytes')
end
if not k or k < 1 or k ~= math.floor(k) then
  return redis.error_reply('ERR bp: priority must be an integer >= 1')
end
if not creq or not ctok or creq < 0 or ctok < 0 or maxtok < 0 then
  return redis.error_reply('ERR bp: costs must be numbers >= 0')
end
if now <= 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
if ablation == 'nopriority' then k = 1 end
local tdebit = ctok
if mode == 'reservation' then tdebit = ctok + maxtok end

---------------------------------------------------------------- config (I2)
local c = redis.call('HMGET', CFG, 'requests_per_s', 'tokens_per_s', 'burst_s',
  'omega_sum', 'omega:' .. k, 'lend_fraction', 'slack_ms', 'grace_ms',
  'ticket_ttl_ms')
local Cr, Ct = tonumber(c[1]), tonumber(c[2]) or 0
if not Cr or Cr <= 0 then
  return redis.error_reply('ERR bp: target not configured (set caps)')
end
local burst = tonumber(c[3]) or 1
local omega = tonumber(c[5]) or 1
local omega_sum = tonumber(c[4]) or omega
if ablation == 'nopriority' then omega, omega_sum = 1, 1 end
local lend = tonumber(c[6]) or 0.5
local slack_ms = tonumber(c[7]) or 50
local grace_ms = tonumber(c[8]) or 200
local ticket_ttl = tonumber(c[9]) or 600000
local wt = tonumber(redis.call('HGET', TW, tenant)) or 1
local w = wt * omega
if w <= 0 then w = 1e-9 end
local capr, capt = Cr * burst, Ct * burst

if creq > capr or (Ct > 0 and tdebit > capt) then
  return {'REJECT', string.format('cost (%g requests, %g tokens) above the burst capacity (%g, %g)',
    creq, tdebit, capr, capt)}
end

---------------------------------------------------------------- L1 refill
local g = redis.call('HMGET', G, 'r', 't', 'ts', 'V', 'Dr', 'Dt')
local r, t = tonumber(g[1]) or capr, tonumber(g[2]) or capt
local ts = tonumber(g[3]) or now
local V = tonumber(g[4]) or 0
local Dr, Dt = tonumber(g[5]) or 0, tonumber(g[6]) or 0
local el = now - ts
if el < 0 then el = 0 end
r = math.min(capr, r + Cr * el / 1000)
t = math.min(capt, t + Ct * el / 1000)
if ts < now then ts = now end

---------------------------------------------------------------- eviction
-- Bounded per call (amortized O(1): each queue enters each set once per
-- episode). Leaving the backlog subtracts the queue's share of D_d (eq. 1).
local function qkey(id) return P .. ':q:' .. id end
local function leave_backlog(id)
  local d = redis.call('HMGET', qkey(id), 'dr', 'dt')
  Dr = Dr - (tonumber(d[1]) or 0)
  Dt = Dt - (tonumber(d[2]) or 0)
  redis.call('HSET', qkey(id), 'dr', 0, 'dt', 0)
  redis.call('ZREM', BL, id)
  redis.call('ZREM', BX, id)
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', BX, '-inf', now, 'LIMIT', 0, 8)) do
  leave_backlog(id)
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', SEEN, '-inf', now - ttl, 'LIMIT', 0, 4)) do
  if redis.call('ZSCORE', BL, id) then leave_backlog(id) end
  redis.call('DEL', qkey(id))
  redis.call('ZREM', SEEN, id)
end
if redis.call('ZCARD', BL) == 0 then Dr, Dt = 0, 0 end  -- no float drift

---------------------------------------------------------------- queue state
local qid = k .. ':' .. tenant
local QK = qkey(qid)
local q = redis.call('HMGET', QK, 'F', 'T', 'dr', 'dt')
local sigma = creq / Cr
if ablation ~= 'nodrf' and Ct > 0 then sigma = math.max(sigma, tdebit / Ct) end
local quantum = sigma / w
local in_bl = redis.call('ZSCORE', BL, qid)
local first = redis.call('ZRANGE', BL, 0, 1, 'WITHSCORES')
local others = #first > 0 and not (first[1] == qid and #first == 2)
if #first > 0 then V = math.max(V, tonumber(first[2])) end
local F = tonumber(q[1]) or V
local S = math.max(F, V)

-- Virtual-clock speed X* (eq. 1) over the backlogged set plus this queue.
local my_dr, my_dt = 0, 0
if sigma > 0 then
  my_dr = w * creq / sigma
  if ablation ~= 'nodrf' then my_dt = w * tdebit / sigma end
end
local Dr_all, Dt_all = Dr, Dt
if not in_bl then Dr_all, Dt_all = Dr + my_dr, Dt + my_dt end
local X = math.huge
if Dr_all > 0 then X = math.min(X, Cr / Dr_all) end
if Ct > 0 and Dt_all > 0 then X = math.min(X, Ct / Dt_all) end
local slack = slack_ms / 1000 * X
if slack == math.huge or slack < quantum then slack = quantum end

---------------------------------------------------------------- decision
local fair = (not others) or sigma == 0 or (S - V) <= slack + 1e-12
local l1_ok = r >= creq - 1e-9 and (Ct == 0 or t >= tdebit - 1e-9)
local lent = false
if l1_ok and not fair then
  lent = (r - creq) >= lend * capr and (Ct == 0 or (t - tdebit) >= lend * capt)
end

if l1_ok and (fair or lent) then
  r, t = r - creq, (Ct > 0) and (t - tdebit) or t
  -- L2 meter (HTB): the class's assured tokens first, the rest is borrowed.
  local l2 = redis.call('HMGET', L2, k .. ':r', k .. ':t', k .. ':ts')
  local share = math.min(1, omega / omega_sum)
  local l2r, l2t = tonumber(l2[1]) or share * capr, tonumber(l2[2]) or share * capt
  local l2el = math.max(0, now - (tonumber(l2[3]) or now))
  l2r = math.min(share * capr, l2r + share * Cr * l2el / 1000)
  l2t = math.min(share * capt, l2t + share * Ct * l2el / 1000)
  local own_r, own_t = math.max(0, math.min(l2r, creq)), math.max(0, math.min(l2t, tdebit))
  redis.call('HSET', L2, k .. ':r', l2r - own_r, k .. ':t', l2t - own_t, k .. ':ts', now)
  redis.call('HINCRBYFLOAT', L2, k .. ':borrowed_r', creq - own_r)
  redis.call('HINCRBYFLOAT', L2, k .. ':borrowed_t', tdebit - own_t)
  -- Tags: F advances one quantum; V follows the least backlogged tag.
  F = S + quantum
  if in_bl then redis.call('ZADD', BL, F, qid) end
  local m = redis.call('ZRANGE', BL, 0, 0, 'WITHSCORES')
  if #m > 0 then V = math.max(V, tonumber(m[2])) elseif not others then V = math.max(V, S) end
  redis.call('HSET', G, 'r', r, 't', t, 'ts', ts, 'V', V, 'Dr', Dr, 'Dt', Dt)
  redis.call('HSET', QK, 'F', F, 'w', w, 'seen', now)
  redis.call('HINCRBY', QK, 'admits', 1)
  if lent then redis.call('HINCRBY', QK, 'lent', 1) end
  redis.call('ZADD', SEEN, now, qid)
  local ticket = '0'
  if mode ~= 'estimate' then
    ticket = tostring(redis.call('HINCRBY', G, 'seq', 1))
    local tk = P .. ':tk:' .. ticket
    redis.call('HSET', tk, 'q', qid, 'k', k, 'r', creq, 't', tdebit,
      'sigma', sigma, 'w', w, 'drf', (ablation ~= 'nodrf') and 1 or 0)
    redis.call('PEXPIRE', tk, math.floor(ticket_ttl))
  end
  return {'ADMIT', ticket}
end

---------------------------------------------------------------- defer
-- delta = the later of: the time until this queue's start tag is within the
-- slack of V at speed X*, and the time until L1 holds the cost. Deferred
-- callers of one queue then queue up in a line: while the last promised
-- wake-up T_q is in the future, the next caller wakes one fair gap
-- (quantum / X*) after it, so a cohort of workers does not wake at once.
local delta, binding = 0, 'fair'
if S - V > slack and X < math.huge then
  delta = (S - V - slack) / X * 1000
end
if not l1_ok then
  local dr_ms = math.max(0, (creq - r) / Cr * 1000)
  local dt_ms = 0
  if Ct > 0 then dt_ms = math.max(0, (tdebit - t) / Ct * 1000) end
  if math.max(dr_ms, dt_ms) >= delta then
    delta = math.max(dr_ms, dt_ms)
    binding = (dt_ms > dr_ms) and 'l1:tokens' or 'l1:requests'
  end
end
local line = tonumber(q[2])
if line and line > now and X < math.huge then
  delta = math.max(delta, line - now + quantum / X * 1000)
end
delta = math.max(1, math.min(60000, math.ceil(delta - 1e-6)))
-- Join (or stay in) the backlog with start tag S and this call's D_d share.
if in_bl then
  Dr = Dr - (tonumber(q[3]) or 0) + my_dr
  Dt = Dt - (tonumber(q[4]) or 0) + my_dt
else
  Dr, Dt = Dr + my_dr, Dt + my_dt
end
redis.call('ZADD', BL, S, qid)
redis.call('ZADD', BX, 'GT', now + delta + grace_ms, qid)
redis.call('HSET', QK, 'F', S, 'T', now + delta, 'dr', my_dr, 'dt', my_dt, 'w', w, 'seen', now)
redis.call('HINCRBY', QK, 'defers', 1)
redis.call('ZADD', SEEN, now, qid)
redis.call('HSET', G, 'r', r, 't', t, 'ts', ts, 'V', V, 'Dr', Dr, 'Dt', Dt)
return {'DEFER', delta, binding}
