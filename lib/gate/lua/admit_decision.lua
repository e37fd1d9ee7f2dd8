-- admit_decision.lua - the second part of admit.lua's chunk (parts.txt):
-- the decision (fair, lent, holds), then the admission's or the deferral's
-- writes and the reply. Runs right after admit.lua's text, in the same chunk:
-- it reads admit.lua's locals (the arguments, the records read, L1 after the
-- refill, the queue's tags, X*, the L1 holder and line); notation and
-- algorithm are in admit.lua's header.

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

---------------------------------------------------------------- defer (or admit ahead)
-- Computed before the writes: a call at the head of the L1 line may be
-- admitted ahead instead of deferred.
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
-- bucket ahead. Callers beyond it share the place after it and contest it,
-- so the line reaches as far as a bucket of a few calls needs to give
-- every waiting worker its own place (16); further ahead, a promise is
-- more often left unused by a caller sent elsewhere (its turn, its queue's
-- line) than it spares a contest, and an unused place idles L1 once the
-- bucket is full. In reservation mode places are spaced by prompt +
-- max_tokens while calls give the unused part back at release, so a long
-- line sends callers past capacity refunded meanwhile: 8 there. The
-- holder's wake-up does not wait for the line (it takes the next refill,
-- WF2Q+'s order); its need extends the line.
local LINE_BURSTS = 16
if mode == 'reservation' then LINE_BURSTS = 8 end
local delta, binding = 0, 'fair'  -- microseconds
local lr_us, lt_us, joins_line = 0, 0, false  -- this call's place in the L1 line, from now
local dr_us, dt_us = 0, 0  -- and its own refill
local delta_ms, start_in_ms = 1, 0
if not admit and block_us == 0 then
  if S - V > slack and X < math.huge then
    delta = (S - V - slack) / X * 1e6
  end
  if not l1_ok then
    dr_us = math.max(0, (needr + keepr - r) / Cr * 1e6)
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
  delta_ms = math.max(1, math.min(60000, math.ceil(delta / 1000 - 1e-6)))
  -- Admit ahead (ahead_ms > 0; docs/gate.md "Admit ahead"): a due call that
  -- only L1 holds back, at the head of the L1 line (the holder, or a caller
  -- whom neither a promise of the line nor the holder's need precedes), whose
  -- refill comes within a = min(ahead_ms, AHEAD_CALLS refills of its own
  -- need), is admitted now and told to start in delta_ms: the debit leaves a
  -- debt of at most C_d * a, which no later caller can take, and the caller
  -- does not come back to contest the refill. a is counted in the call's own
  -- costs so that a later caller with a smaller finish tag waits behind at
  -- most AHEAD_CALLS calls (in bucket refills, the many workers of a low class
  -- committed the refill ahead of the few of a high class). Never a call
  -- above the bucket (the debt rule waits for a full bucket), never before
  -- the holder's refill.
  if ahead_ms > 0 and fair and not l1_ok and not oversized
      and (holds or (not kept_out and lr_us <= dr_us + 1e-6 and lt_us <= dt_us + 1e-6)) then
    local AHEAD_CALLS = 4
    local own_us = needr / Cr * 1e6
    if Ct > 0 then own_us = math.max(own_us, needt / Ct * 1e6) end
    if delta <= math.min(ahead_ms * 1000, AHEAD_CALLS * own_us) then
      admit, start_in_ms = true, delta_ms
    end
  end
end

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
  if start_in_ms > 0 then return {'ADMIT', ticket, start_in_ms} end
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

---------------------------------------------------------------- defer writes
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
