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
--
-- KEYS[1] = "bp:{target}:state" (the other keys are named from it)
-- ARGV: tenant, priority, requests, tokens, max_tokens, mode, ablation,
--       queue_ttl_ms, [now_ms]   (now_ms > 0 only in tests; else server TIME)
-- Reply: {"ADMIT", ticket} | {"DEFER", delta_ms, binding} | {"REJECT", reason}

---------------------------------------------------------------- arguments
local tenant = ARGV[1]
local k = tonumber(ARGV[2])
local creq, ctok = tonumber(ARGV[3]), tonumber(ARGV[4])
local maxtok = tonumber(ARGV[5]) or 0
local mode, ablation = ARGV[6], ARGV[7]
local ttl = (tonumber(ARGV[8]) or DEFAULT_QUEUE_TTL_MS) * 1000
local now = (tonumber(ARGV[9] or '0') or 0) * 1000
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

---------------------------------------------------------------- decision
-- Every predicate the admission and the deferral use, in one place.
-- fair: its turn (alone, a zero cost, or S_q within the slack of V).
local fair = block_us == 0 and ((not others) or sigma == 0 or (S - V) <= slack + 1e-12)
-- before_holder: an active holder with the smaller finish tag (a tie keeps
-- the holder's place: it was first). A fair caller then leaves the holder's
-- need in L1 (WF2Q+'s order among eligible callers: without it, a thousand
-- single-caller queues polling every refill win L1 against a heavy queue's
-- few due callers).
local before_holder = hold_q and not holder_is_me and hold_active
  and hold_f <= Fnext + 1e-12
local keepr, keept = 0, 0  -- the holder's need, left in L1 for it
if before_holder and fair then keepr, keept = hold_r, hold_t end
-- own_ok: L1 holds this call's need; l1_ok: and the holder's need kept.
local own_ok = r >= needr - 1e-9 and (Ct == 0 or t >= needt - 1e-9)
local l1_ok = own_ok
if keepr > 0 or keept > 0 then
  l1_ok = r - keepr >= needr - 1e-9 and (Ct == 0 or t - keept >= needt - 1e-9)
end
-- lent: not its turn, but no holder waits and, per dimension, after the
-- debit L1 keeps lend_fraction of its capacity, or L1 is full (at its top:
-- its refill is being thrown away, so the cap idles, P3) and the cost fits
-- in the bucket (no debt is lent). The second case matters for costs above
-- (1 - lend_fraction) of the bucket, e.g. reservations.
local lent = l1_ok and not fair and (not hold_active or holder_is_me)
  and ((r - creq) >= lend * capr or (r >= capr - 1e-9 and creq <= capr))
  and (Ct == 0 or (t - tdebit) >= lend * capt or (t >= capt + rsv - 1e-9 and tdebit <= capt))
local admit = l1_ok and (fair or lent)
-- holds: due, and only L1 is short: it takes the L1 hold when nobody holds
-- it, when its own queue's hold has reached its wake-up (the holder is back,
-- or late), or from a holder with a later finish tag.
local holds = fair and not l1_ok
  and (not hold_active or (holder_is_me and now + grace_us >= hold_us)
    or (not holder_is_me and hold_f > Fnext + 1e-12))
-- A deferred caller wakes behind its queue's line of promised wake-ups,
-- except a due caller that only L1 holds back when it holds L1, when its
-- cost is above the bucket, or when only the holder's need keeps it out (it
-- is next after the holder): the holder wakes when L1 holds its cost, as
-- lending is off until then, and behind its line it would idle the cap (a
-- reservation of most of a 0.1 s bucket would wait about 8 fair gaps).
local oversized = creq > capr or (Ct > 0 and tdebit > capt)
local kept_out = own_ok and not l1_ok
local skips_line = fair and not l1_ok and (oversized or holds or kept_out)

if admit then
  ---------------------------------------------------------------- admit
  r = r - creq
  if Ct > 0 then t = t - tdebit end
  -- Tags: F advances one quantum; V stays at least the least backlogged tag.
  -- Raising this queue's tag changes the least tag only if it was the least.
  F = Fnext
  -- V advances by the work of every admission at the binding dimension
  -- (c_b / D_b: at full use, X* per second, eq. 1), lent ones included, as
  -- WF2Q+'s system virtual time follows all work done: the borrower's tag
  -- then gains on V only by its weight's difference, and the backlogged
  -- queues that left the capacity idle fall behind V and are due sooner. (A
  -- V that ignored lent work let a queue with a small share, whose callers
  -- all wake at the 60 s cap once it is far ahead, keep borrowing: +50 % over
  -- its share in the model's backlog runs.)
  if Db > 0 then V = V + cb / Db end
  if in_bl then
    redis.call('ZADD', BL, F, qid)
    local least = F
    if head_id ~= qid then least = head_tag
    elseif next_id then least = math.min(F, next_tag) end
    V = math.max(V, least)
  elseif not others then
    V = math.max(V, S)
  end
  local ticket, rsv_f = '0', {}
  if mode ~= 'estimate' then
    seq = seq + 1
    ticket = string.format('%d', seq)
    -- The ticket's text from the arguments' own text where it can (no
    -- number formatting); release.lua reads it with tonumber.
    local abl = (no_drf and ' 1 ') or (no_priority and ' 2 ') or ' 0 '
    local debit_text = ARGV[4]
    if tdebit ~= ctok then debit_text = string.format('%d', tdebit) end
    redis.call('SET', P .. ':tk:' .. ticket, kstr .. ' ' .. ARGV[3] .. ' ' .. debit_text .. abl
      .. qid .. ' ' .. ARGV[4], 'PX', string.format('%d', ticket_ttl))
    if tdebit > ttag then  -- reservation: O grows; the entry expires with the ticket
      redis.call('ZADD', RSV, now + ticket_ttl * 1000, string.format('%s %d', ticket, tdebit - ttag))
      rsv_f = {'rsv', string.format('%d', rsv + tdebit - ttag)}
    end
  end
  if holder_is_me then redis.call('HDEL', H, 'l1hold') end  -- the holder got its turn
  local cnt_tail = ''
  if COUNTERS then
    cnt[1], cnt[2], cnt[3] = cnt[1] + 1, cnt[2] + creq, cnt[3] + tdebit
    if lent then cnt[4] = cnt[4] + 1 end
    cnt_tail = struct.pack(NTAIL, unpack(cnt, 1, 13))
  end
  redis.call('HSET', H, 'g', struct.pack(GREC, 1, r, t, ts, V, Dr, Dt, seq, evt),
    qfield, struct.pack(QREC, 1, F, qT or 0, qdr or 0, qdt or 0, qbl or 0, zs, (qna or 0) + 1,
      qnd or 0, (qnl or 0) + (lent and 1 or 0), qw or 0),
    cfield, struct.pack(CREC, 1, cr + creq, ct + tdebit, cn, cW, cAr, cAt, cEr, cEt, cU) .. cnt_tail,
    unpack(rsv_f))
  return {'ADMIT', ticket}
end

if block_us > 0 then
  ------------------------------------------------------------ defer, blocked
  -- Until the higher classes' latest promise ends; out of the backlog (no
  -- tag, no line, no hold).
  local cnt_tail = ''
  if COUNTERS then
    cnt[8] = cnt[8] + 1
    cnt_tail = struct.pack(NTAIL, unpack(cnt, 1, 13))
  end
  redis.call('HSET', H, 'g', struct.pack(GREC, 1, r, t, ts, V, Dr, Dt, seq, evt),
    qfield, struct.pack(QREC, 1, F, qT or 0, qdr or 0, qdt or 0, qbl or 0, zs, qna or 0,
      (qnd or 0) + 1, qnl or 0, qw or 0),
    cfield, struct.pack(CREC, 1, cr, ct, cn, cW, cAr, cAt, cEr, cEt, cU) .. cnt_tail)
  return {'DEFER', math.max(1, math.min(60000, math.ceil((block_us - now) / 1000 - 1e-6))), 'strict'}
end

---------------------------------------------------------------- defer
-- delta = the later of: the time until this queue's start tag is within the
-- slack of V at speed X*, and the time until L1 holds the need (and the
-- holder's, left for it): (debt + cost) / C_d when the level is -debt.
-- Deferred callers of one queue then queue up in a line: while the last
-- promised wake-up T_q is in the future, the next caller wakes one fair gap
-- (quantum / X*) after it, so a cohort of workers does not wake at once.
-- L1 deferrals form one line across queues: L1's refill up to line_d is
-- promised to callers deferred for L1 before, so this call's need comes
-- after it (callers due at once are spread over successive refills instead
-- of contesting one), the line seen at most LINE_BURSTS refills of the
-- bucket ahead: a promise further ahead is more often left unused by a
-- caller sent elsewhere (its turn, its queue's line) than it spares a
-- contest, and an unused place idles L1 once the bucket is full. The
-- holder's wake-up does not wait for the line (it takes the next refill,
-- WF2Q+'s order); its need extends the line.
local LINE_BURSTS = 4
local delta, binding = 0, 'fair'  -- microseconds
if S - V > slack and X < math.huge then
  delta = (S - V - slack) / X * 1e6
end
local lr_us, lt_us, joins_line = 0, 0, false  -- this call's place in the L1 line, from now
if not l1_ok then
  local dr_us = math.max(0, (needr + keepr - r) / Cr * 1e6)
  local dt_us = 0
  if Ct > 0 then dt_us = math.max(0, (needt + keept - t) / Ct * 1e6) end
  local ahead_us = LINE_BURSTS * burst * 1e6
  lr_us, lt_us = dr_us, dt_us
  if needr > 0 and line_r > now then
    lr_us = math.max(dr_us, math.min(line_r - now, ahead_us) + needr / Cr * 1e6)
  end
  if Ct > 0 and needt > 0 and line_t > now then
    lt_us = math.max(dt_us, math.min(line_t - now, ahead_us) + needt / Ct * 1e6)
  end
  local wr, wt = lr_us, lt_us
  if holds then wr, wt = dr_us, dt_us end
  if math.max(wr, wt) >= delta then
    delta = math.max(wr, wt)
    binding = (wt > wr) and 'l1:tokens' or 'l1:requests'
    joins_line = true
  end
end
if not skips_line and qT and qT > now and X < math.huge then
  local behind = qT - now + quantum / X * 1e6
  if behind > delta then delta, joins_line = behind, false end
end
local delta_ms = math.max(1, math.min(60000, math.ceil(delta / 1000 - 1e-6)))
if holds then
  -- Hold lending off until this wake-up (+ grace).
  redis.call('HSET', H, 'l1hold',
    struct.pack(HOLDREC, 1, now + delta_ms * 1000 + grace_us, Fnext, needr, needt) .. qid)
end
local line_f = {}
if joins_line then
  -- Each dimension's line ends at this call's place in it (at most the
  -- longest delta ahead).
  if needr > 0 then line_r = math.max(line_r, now + math.min(lr_us, 60000000)) end
  if Ct > 0 and needt > 0 then line_t = math.max(line_t, now + math.min(lt_us, 60000000)) end
  line_f = {'l1line', struct.pack(LINEREC, 1, line_r, line_t)}
end
-- Join (or stay in) the backlog with start tag S and this call's share of
-- its class's sums; the class's part of D_d follows.
if in_bl then
  cAr, cAt, cW = cAr - (qdr or 0) + my_dr, cAt - (qdt or 0) + my_dt, W
else
  cn, cW, cAr, cAt = cn + 1, W, cAr + my_dr, cAt + my_dt
end
local er, et = class_part(om, cn, cW, cAr), class_part(om, cn, cW, cAt)
Dr, Dt, cEr, cEt = Dr - cEr + er, Dt - cEt + et, er, et
cU = math.max(cU, now + delta_ms * 1000 + grace_us)
redis.call('ZADD', BL, S, qid)
redis.call('ZADD', BX, 'GT', now + (delta_ms * 1000) + grace_us, qid)
local cnt_tail = ''
if COUNTERS then
  local i = (binding == 'fair' and 5) or (binding == 'l1:requests' and 6) or 7
  cnt[i] = cnt[i] + 1
  cnt_tail = struct.pack(NTAIL, unpack(cnt, 1, 13))
end
-- T_q: the last promised wake-up (a holder's earlier one keeps the line).
redis.call('HSET', H, 'g', struct.pack(GREC, 1, r, t, ts, V, Dr, Dt, seq, evt),
  qfield, struct.pack(QREC, 1, S, math.max(qT or 0, now + delta_ms * 1000), my_dr, my_dt, 1, zs,
    qna or 0, (qnd or 0) + 1, qnl or 0, tw),
  cfield, struct.pack(CREC, 1, cr, ct, cn, cW, cAr, cAt, cEr, cEt, cU) .. cnt_tail, unpack(line_f))
return {'DEFER', delta_ms, binding}
