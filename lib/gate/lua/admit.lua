-- admit.lua - one atomic multi-resource admission (paper Algorithm 1, SPEC 4).
--
-- Notation (paper section IV; docs/gate.md "The rule"; d = r, t for requests
-- and tokens):
--   C_d      cap per second (the learned cap f_d * C_d with adaptive caps on)
--   B_d      L1 capacity C_d * burst_s; the L1 level L_d refills at C_d up
--            to B_d and may go below 0 (a debt)
--   c_d      this call's cost (tokens: the L1 debit; reservation mode debits
--            prompt + max_tokens, the fair rule charges the prompt)
--   w_q      queue weight of queue q = (class k, tenant t): omega_k w_t / W_k,
--            W_k the summed w_t of class k's backlogged tenants, q's
--            included (hierarchical share); omega_k w_t with share_rule flat
--   sigma    dominant share of the call, max_d c_d / C_d (seconds of cap)
--   F_q      the queue's virtual tag; S_q its start tag: F_q while the
--            queue is backlogged, else max(F_q, V)
--   V        system virtual time, never below the least backlogged tag
--   D_d      eq. (1): the sum over backlogged queues of w_q c_d / sigma,
--            kept as the sum over classes of E_d = omega_k A_d / W_k, A_d the
--            class's sum of w_t c_d / sigma (so a change of W_k is exact)
--   X*       the virtual clock's speed, min_d C_d / D_d (per second)
--   slack    slack_ms of time in virtual units, slack_ms * X*
--
-- The algorithm: fair queuing in dominant-share units (DRFQ) over the
-- backlogged queues, eligibility by start tag and order by finish tag as in
-- WF2Q+ (Bennett and Zhang 1997), in front of a token bucket per dimension
-- (L1). A call is
--   fair      when its queue is alone, or S_q <= V + slack (its turn);
--   admitted  when fair, or lent (L1 so full that no backlogged queue is
--             using it), and L1 holds its need (its cost, or the whole
--             bucket for a cost above B_d, which leaves a debt) plus the
--             need of the L1 holder if the holder's finish tag is the
--             smaller;
--   deferred  otherwise, for the later of its turn ((S_q - V - slack) / X*)
--             and L1's refill of its need after the needs already promised
--             to callers deferred for L1 (the L1 line); a due call that
--             only L1 holds back takes the L1 hold, so nobody borrows the
--             refill it waits for.
-- An admission advances F_q by sigma / w_q and a fair one V by c_b / D_b (b
-- the binding dimension of eq. 1). With w_q = omega_k w_t / W_k the weights
-- of class k's backlogged queues sum to omega_k: the fluid rates are the
-- hierarchical ones (Bennett and Zhang 1997, H-GPS): class k gets
-- omega_k / sum(omega of backlogged classes) of the binding cap, tenant t
-- w_t / W_k of its class's (L2 of the paper, with borrowing at both levels).
-- bp::gate_model (lib/gate/include/bp/gate_model.h) is the same rule in C++;
-- tests/gate/gate_model_diff_test.cpp checks the two agree.
--
-- Cost: 5-7 Valkey commands per call (TIME, an HMGET of nine fields and an
-- HSET of three records of the state hash, four when a deferral takes a
-- place in the L1 line, a ZRANGE of the two least tags, a ZADD when
-- backlogged, a SET for the ticket; reservation mode: a ZADD and a fourth
-- field), O(log n) in the n active queues. Eviction is bounded (at
-- most 12 queues) and runs at most once per 10 ms. The records are
-- struct-packed (prelude.lua): converting numbers to and from text dominated
-- the script's cost. Times are integer microseconds.
-- The key names, record layouts, defaults, the tenant rule and the weight
-- rule are prelude.lua's (embedded before this text at build time).
-- The script is two files sent as one chunk (parts.txt): this one reads
-- the arguments and records, refills L1, evicts and derives the queue's
-- state; admit_decision.lua follows it with the decision and the writes.
--
-- KEYS[1] = "bp:{target}:state" (the other keys are named from it)
-- ARGV: tenant, priority, requests, tokens, max_tokens, mode, ablation,
--       queue_ttl_ms, [now_ms], [ahead_ms]   (now_ms > 0 only in tests; else
--       server TIME. ahead_ms: the longest wait before calling the provider
--       the caller keeps, 0 or absent = never admitted ahead)
-- Reply: {"ADMIT", ticket} | {"ADMIT", ticket, start_in_ms} (admitted ahead:
--        call the provider start_in_ms from now, not before) |
--        {"DEFER", delta_ms, binding} | {"REJECT", reason}

---------------------------------------------------------------- arguments
local tenant = ARGV[1]
local k = tonumber(ARGV[2])
local creq, ctok = tonumber(ARGV[3]), tonumber(ARGV[4])
local maxtok = tonumber(ARGV[5]) or 0
local mode, ablation = ARGV[6], ARGV[7]
local ttl = (tonumber(ARGV[8]) or DEFAULT_QUEUE_TTL_MS) * 1000
local now = (tonumber(ARGV[9] or '0') or 0) * 1000
local ahead_ms = tonumber(ARGV[10] or '0')
if not valid_tenant(tenant) then
  return redis.error_reply('ERR bp: tenant must match ' .. TENANT_RULE)
end
if not k or k < 1 or k ~= math.floor(k) then
  return redis.error_reply('ERR bp: priority must be an integer >= 1')
end
if not creq or not ctok or creq < 0 or ctok < 0 or maxtok < 0 or creq ~= math.floor(creq)
    or ctok ~= math.floor(ctok) or maxtok ~= math.floor(maxtok) then
  return redis.error_reply('ERR bp: costs must be integers >= 0')
end
if not ahead_ms or ahead_ms < 0 or ahead_ms ~= math.floor(ahead_ms) then
  return redis.error_reply('ERR bp: ahead_ms must be an integer >= 0')
end
if now <= 0 then now = server_us() end
local no_drf, no_priority = ablation == 'nodrf', ablation == 'nopriority'
-- The class as text: ARGV[2] itself when canonical (formatting a number
-- costs more than this match), else the number formatted.
local kstr = ARGV[2]
if no_priority then
  k, kstr = 1, '1'
elseif not string.find(kstr, '^[1-9]%d*$') then
  kstr = string.format('%d', k)
end
-- L1 debits tdebit (reservation: the worst case prompt + max_tokens, so L1
-- never admits more than the cap). The fair rule charges ttag, the estimate
-- (prompt tokens), in every mode: release corrects the tag to the actual
-- usage, so shares and the virtual-clock speed follow the tokens used, not
-- the reserved ones (reserved costs would pace the fair rule at
-- C_t / (prompt + max_tokens) calls per second).
local tdebit, ttag = ctok, ctok
if mode == 'reservation' then tdebit = ctok + maxtok end
local qid = kstr .. ':' .. tenant
local qfield, cfield = 'q:' .. qid, 'c:' .. kstr

---------------------------------------------------------------- one read
-- 'ad' rides along (read only with adapt on; absent until a 429 taught a
-- cap): with adapt on, one command instead of two; off, one more field.
local cfg_rec, tw_text, g_rec, q_rec, c_rec, hold_rec, rsv_text, ad_text, line_rec = unpack(
  redis.call('HMGET', H, 'cfg', 'tw:' .. tenant, 'g', qfield, cfield, 'l1hold', 'rsv', 'ad',
    'l1line'))

---------------------------------------------------------------- configuration
-- cfg (configure.lua; read on every call: hot updates, I2), with omega_k
local Cr, Ct, burst, omega_sum, lend, slack_us, grace_us, ticket_ttl, maxr, maxt, adapt,
  classes, flat, strict = rec(CFGREC, CFGLEN, cfg_rec)
if not Cr or Cr <= 0 then
  return redis.error_reply('ERR bp: target not configured (set caps)')
end
slack_us, grace_us = slack_us * 1000, grace_us * 1000
local omega
if k <= classes and #cfg_rec >= CFGLEN + 8 * k then
  omega = struct.unpack('<d', cfg_rec, CFGLEN + 1 + 8 * (k - 1))
end
-- A class beyond the configured omega_1..omega_K would get the default weight
-- 1 and could outrank P1 (omega_1 < 1): refuse it. Without priority weights
-- (omega_sum 0) every class has weight 1.
if not omega and omega_sum > 0 then
  if COUNTERS then redis.call('HINCRBY', H, 'n:rejects_priority', 1) end
  return {'REJECT', string.format('priority %d above the configured classes 1..%s',
    k, redis.call('HGET', H, 'classes') or '?')}
end
local tw, om = tenant_weight(tw_text), class_weight(omega, no_priority)  -- w_t, omega_k
local capr, capt = Cr * burst, Ct * burst  -- B_r, B_t
-- Largest admissible cost per dimension: the provider's own capacity for one
-- window (max_cost_*, set by the operator), else one minute of cap (RPM, TPM),
-- never less than the bucket. Only a cost the provider itself would refuse
-- ("Request too large") is REJECTed; a cost above the bucket capacity is
-- admitted into debt (see the L1 need below).
if maxr <= 0 then maxr = math.max(Cr * 60, capr) end
if maxt <= 0 then maxt = math.max(Ct * 60, capt) end
if creq > maxr then
  if COUNTERS then redis.call('HINCRBY', H, 'n:rejects_too_large', 1) end
  return {'REJECT', string.format('request too large: %g requests exceed max_cost_requests %g '
    .. '(the provider\'s limit per window) by %g', creq, maxr, creq - maxr)}
end
if Ct > 0 and tdebit > maxt then
  if COUNTERS then redis.call('HINCRBY', H, 'n:rejects_too_large', 1) end
  return {'REJECT', string.format('request too large: %g tokens%s exceed max_cost_tokens %g '
    .. '(the provider\'s limit per window) by %g', tdebit,
    mode == 'reservation' and ' (prompt + max_tokens)' or '', maxt, tdebit - maxt)}
end
-- Adaptive caps (docs/gate.md "Adaptive caps"; written by release.lua when
-- the tuning switch adapt is on): the learned fraction f_d of each cap. L1
-- refills and equation (1) use the learned caps; the burst capacity (and so
-- REJECT) stays at the configured ones.
if adapt == 1 then
  local a = ad_unpack(ad_text)
  if a then
    Cr = Cr * learned(a[1], a[2], a[5], now)
    Ct = Ct * learned(a[3], a[4], a[5], now)
  end
end

---------------------------------------------------------------- L1 refill
local r, t, ts, V, Dr, Dt, seq, evt = rec(GREC, GLEN, g_rec)
r, t, ts = r or capr, t or capt, ts or now
V, Dr, Dt, seq = V or 0, Dr or 0, Dt or 0, seq or 0
local el = math.max(0, now - ts)
-- Reservation mode: 'rsv' = O, the max_tokens that admitted calls not yet
-- released have reserved beyond their prompts (release.lua takes a call's
-- part out, and drops expired tickets). The token level refills up to
-- B_t + O: the reserved part is mostly refunded later, and a bucket capped at
-- B_t would throw away the refill (and the refunds) that the pending refunds
-- already stand for. A level above the top (after a release) is not lowered.
-- Bound: gate.h (GateMode), P1 in reservation mode.
local rsv = tonumber(rsv_text) or 0
r = math.min(capr, r + Cr * el / 1e6)
if t < capt + rsv then t = math.min(capt + rsv, t + Ct * el / 1e6) end
-- ts only moves forward, except when the clock went back by more than 1 s
-- (a failover to a server whose clock is behind, or a call with an explicit
-- now_ms in the future): then the refill restarts from now, instead of
-- stopping until the clock passes the old ts.
if ts < now or ts > now + 1000000 then ts = now end

---------------------------------------------------------------- classes
-- This class's record: admitted totals, n backlogged tenants, their weight
-- sum W, the sums A_d, the class's part E_d of D_d and the latest wake-up
-- plus grace promised to its queues, U (prelude.lua).
local cr, ct, cn, cW, cAr, cAt, cEr, cEt, cU = rec(CREC, CLEN, c_rec)
cr, ct, cn, cW = cr or 0, ct or 0, cn or 0, cW or 0
cAr, cAt, cEr, cEt, cU = cAr or 0, cAt or 0, cEr or 0, cEt or 0, cU or 0
-- Its counters (prelude.lua, NTAIL; zeros when it has none), written back
-- after the record's CLEN bytes as cnt_tail.
local cnt = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
if COUNTERS and c_rec and #c_rec >= CLEN + NLEN and string.byte(c_rec) == 1 then
  cnt = {struct.unpack(NTAIL, c_rec, CLEN + 1)}
end
-- E_d of a class with weight o, n backlogged tenants, weight sum W and sum A.
local function class_part(o, n, W, A)
  if n <= 0 then return 0 end
  if flat == 1 then return o * A end
  return o * A / W
end

---------------------------------------------------------------- eviction
-- Bounded (amortized O(1): each queue enters each set once per episode),
-- at most once per 10 ms. Leaving the backlog subtracts the queue's share of
-- D_d (eq. 1). SEEN scores are refreshed every ttl / 8, so an idle queue is
-- evicted after between 7/8 and 1 times the TTL.
local qF, qT, qdr, qdt, qbl, qzs, qna, qnd, qnl, qw = rec(QREC, QLEN, q_rec)
-- A queue leaves the backlog: its class's sums and part of D_d follow.
local function leave_backlog(id)
  local F, T, dr, dt, _, zs, na, nd, nl, wt
  if id == qid then
    F, T, dr, dt, zs, na, nd, nl, wt = qF, qT, qdr, qdt, qzs, qna, qnd, qnl, qw
    qdr, qdt, qbl, qw = 0, 0, 0, 0
  else
    F, T, dr, dt, _, zs, na, nd, nl, wt = rec(QREC, QLEN, redis.call('HGET', H, 'q:' .. id))
  end
  if F then
    -- The queue leaves its class's sums; the class's part of D_d follows.
    local kk = string.match(id, '^[^:]*')
    local c, tail = {cr, ct, cn, cW, cAr, cAt, cEr, cEt, cU}, ''
    if kk ~= kstr then
      local raw = redis.call('HGET', H, 'c:' .. kk)
      c = {rec(CREC, CLEN, raw)}
      if c[1] then tail = string.sub(raw, CLEN + 1) end  -- its counters, kept
      for i = 1, 9 do c[i] = c[i] or 0 end
    end
    c[3], c[4], c[5], c[6] = c[3] - 1, c[4] - (wt or 0), c[5] - (dr or 0), c[6] - (dt or 0)
    if c[3] <= 0 then c[3], c[4], c[5], c[6] = 0, 0, 0, 0 end
    local o = 1
    local kn = tonumber(kk)
    if kn and kn >= 1 and kn <= classes and #cfg_rec >= CFGLEN + 8 * kn then
      o = class_weight(struct.unpack('<d', cfg_rec, CFGLEN + 1 + 8 * (kn - 1)), false)
    end
    local er, et = class_part(o, c[3], c[4], c[5]), class_part(o, c[3], c[4], c[6])
    Dr, Dt = Dr - c[7] + er, Dt - c[8] + et
    c[7], c[8] = er, et
    if kk == kstr then
      cn, cW, cAr, cAt, cEr, cEt, cU = c[3], c[4], c[5], c[6], c[7], c[8], c[9]
    else
      redis.call('HSET', H, 'c:' .. kk, struct.pack(CREC, 1, unpack(c)) .. tail)
    end
    redis.call('HSET', H, 'q:' .. id, struct.pack(QREC, 1, F, T or 0, 0, 0, 0, zs or 0, na or 0,
      nd or 0, nl or 0, 0))
  end
  redis.call('ZREM', BL, id)
  redis.call('ZREM', BX, id)
end
if not evt or now >= evt + 10000 or now < evt then
  evt = now
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', BX, '-inf', now, 'LIMIT', '0', '8')) do
    leave_backlog(id)
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', SEEN, '-inf', now - ttl, 'LIMIT', '0', '4')) do
    if redis.call('ZSCORE', BL, id) then leave_backlog(id) end
    redis.call('HDEL', H, 'q:' .. id)
    redis.call('ZREM', SEEN, id)
    if id == qid then qF, qT, qdr, qdt, qbl, qzs, qna, qnd, qnl, qw = nil end
  end
end

---------------------------------------------------------------- strict classes
-- class_policy strict (docs/gate.md "Strict priority"): class j < k is
-- eligible when it has backlogged queues (n_j > 0 after the eviction above)
-- and the latest wake-up plus grace promised to them, U_j, is ahead. A
-- blocked call leaves the backlog (its class is not competing) and waits
-- until the latest such U_j; only lending (idle L1) can still admit it.
local block_us = 0  -- > 0: blocked until then
if strict == 1 and not no_priority and k > 1 and classes >= 1 then
  local top, f = math.min(k - 1, classes), {}
  for j = 1, top do f[j] = 'c:' .. j end
  local recs = redis.call('HMGET', H, unpack(f))
  for j = 1, top do
    local _, _, n, _, _, _, _, _, u = rec(CREC, CLEN, recs[j])
    if n and n > 0 and u > now then block_us = math.max(block_us, u) end
  end
  if block_us > 0 and qbl == 1 then leave_backlog(qid) end
end

---------------------------------------------------------------- queue state
local sigma = creq / Cr
if not no_drf and Ct > 0 then sigma = math.max(sigma, ttag / Ct) end
local in_bl = qbl == 1
-- The two least backlogged tags: the head (id, tag) and the one after it.
local head_id, head_tag, next_id, next_tag = unpack(redis.call('ZRANGE', BL, '0', '1',
  'WITHSCORES'))
head_tag, next_tag = tonumber(head_tag), tonumber(next_tag)
if not head_id then  -- empty backlog: no float drift
  Dr, Dt, cn, cW, cAr, cAt, cEr, cEt = 0, 0, 0, 0, 0, 0, 0, 0
end
-- W: the class's backlogged weight with this queue in it (at its weight now).
local W = cW
if not in_bl then W = cW + tw elseif qw ~= tw then W = cW - (qw or 0) + tw end
local w = om * tw
if flat ~= 1 then w = w / W end
local quantum = sigma / w  -- what an admission adds to F_q
-- Others backlogged besides this queue; under strict, only its own class's
-- (a lower class's queues are blocked, a higher class's would block it).
local others = head_id ~= nil and not (head_id == qid and not next_id)
if strict == 1 then others = cn - (in_bl and 1 or 0) > 0 end
if head_id then V = math.max(V, head_tag) end
-- S: a backlogged queue keeps its tag, even below V (the turns it lost to
-- other callers are owed: WF2Q+); a queue that (re)joins starts at V at the
-- earliest. Start-tag fair queuing's S = max(F, V) for every call would let
-- 10 000 light queues that arrived together take the cap for 25 s.
local F = qF or V
local S = F
if not in_bl then S = math.max(F, V) end
local Fnext = S + quantum  -- this call's finish tag
local zs = qzs
if not zs or now - zs >= ttl / 8 or now < zs then
  redis.call('ZADD', SEEN, now, qid)
  zs = now
end
-- X* (eq. 1, per second) over the backlog plus this queue; Db, cb: the
-- binding dimension's D and this call's cost in it. my_d: this queue's
-- tenant-level part of its class's A_d.
local my_dr, my_dt = 0, 0
if sigma > 0 then
  my_dr = tw * creq / sigma
  if not no_drf then my_dt = tw * ttag / sigma end
end
local Dr_all, Dt_all = Dr, Dt
if not in_bl then
  Dr_all = Dr - cEr + class_part(om, cn + 1, W, cAr + my_dr)
  Dt_all = Dt - cEt + class_part(om, cn + 1, W, cAt + my_dt)
end
local X, Db, cb = math.huge, 0, 0
if Dr_all > 0 then X, Db, cb = Cr / Dr_all, Dr_all, creq end
if Ct > 0 and Dt_all > 0 and Ct / Dt_all < X then X, Db, cb = Ct / Dt_all, Dt_all, ttag end
-- slack in virtual time. Not floored at a quantum: a quantum of a light
-- queue is its whole fair gap (30 s at 10 000 light tenants), which would
-- let every light queue take two turns at once.
local slack = slack_us / 1e6 * X
if slack == math.huge then slack = quantum end
-- L1 need: the cost, or the whole bucket for a cost above its capacity. The
-- debit may then leave a negative level (a debt): a later call of cost c at
-- level -D waits (D + c) / C_d, so admitted cost over any span stays within
-- C_d * span + max(B_d, largest cost) (docs/gate.md; the same bound as
-- GCRA's, ITU-T I.371, with tolerance = the bucket).
local needr, needt = math.min(creq, capr), math.min(tdebit, capt)
-- The L1 holder (l1hold: HOLDREC, then the queue id): a due caller that
-- waits for L1 to refill, until hold_us, with its finish tag and its need.
local hold_us, hold_q, hold_f, hold_r, hold_t = 0, nil, 0, 0, 0
if hold_rec and #hold_rec > HOLDLEN and string.byte(hold_rec) == 1 then
  hold_us, hold_f, hold_r, hold_t = rec(HOLDREC, HOLDLEN, hold_rec)
  hold_q = string.sub(hold_rec, HOLDLEN + 1)
  -- A hold lasts at most the longest delta (60 s) plus grace; one further
  -- ahead is from a clock that went back: it holds nothing.
  if hold_us > now + 61000000 + grace_us then hold_us = 0 end
end
local holder_is_me = hold_q == qid
local hold_active = now < hold_us
-- The L1 line's end per dimension (l1line): L1's refill up to then is
-- promised to callers deferred for L1. One further ahead than the longest
-- delta plus grace is from a clock that went back: no line.
local line_r, line_t = rec(LINEREC, LINELEN, line_rec)
line_r, line_t = line_r or 0, line_t or 0
if line_r > now + 61000000 + grace_us then line_r = 0 end
if line_t > now + 61000000 + grace_us then line_t = 0 end

-- The decision and the writes follow in admit_decision.lua (parts.txt).
