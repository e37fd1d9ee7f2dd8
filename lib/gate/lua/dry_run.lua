-- dry_run.lua - the scratch copy of a target's keys that a dry-run admission
-- runs admit.lua on (bp::GateAdmin::DryRunAdmit, bpctl admit --dry-run), so
-- it answers what an admission would answer now and changes nothing of the
-- target. The scratch keys are the target's names (prelude.lua) under the
-- prefix "bp:{T}:dry:<suffix>": the same hash tag, hence the same cluster
-- slot, and a state key that prelude.lua accepts, so admit.lua derives the
-- scratch sets from it as it does the target's.
--
-- KEYS[1] = "bp:{target}:state" for "copy"; the scratch state key for "drop"
-- ARGV: "copy", suffix ([0-9a-f]{1,32}): copies the state hash and the sets
--         (those that exist), each expiring after 60 s in case "drop" never
--         comes; reply: the scratch state key.
--       "drop", ticket (or ""): deletes the scratch keys and the ticket an
--         ADMIT on them issued; reply: the number of keys deleted.

local what, arg = ARGV[1], ARGV[2] or ''
if what == 'copy' then
  if not string.find(arg, '^[0-9a-f]+$') or #arg > 32 then
    return redis.error_reply('ERR bp: dry_run.lua copy takes a hex suffix')
  end
  local S = P .. ':dry:' .. arg
  for _, key in ipairs({H, BL, BX, SEEN, RSV}) do
    local copy = S .. string.sub(key, #P + 1)  -- the same name under the scratch prefix
    if redis.call('COPY', key, copy, 'REPLACE') == 1 then redis.call('PEXPIRE', copy, 60000) end
  end
  return S .. string.sub(H, #P + 1)
elseif what == 'drop' then
  if not string.find(P, ':dry:[0-9a-f]+$') then
    return redis.error_reply('ERR bp: dry_run.lua drop takes a scratch state key')
  end
  local keys = {H, BL, BX, SEEN, RSV}
  if arg ~= '' then keys[#keys + 1] = P .. ':tk:' .. arg end
  return redis.call('DEL', unpack(keys))
end
return redis.error_reply('ERR bp: dry_run.lua takes "copy" or "drop"')
