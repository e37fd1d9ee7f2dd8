# Sourced by scripts/experiment.sh, scenarios.sh, scale.sh and
# adaptive-caps.sh: the flag checks they share, run before setup and before
# any server starts (loadgen checks the same again: TimeScale::Of,
# ParseConfigurationList). The caller defines die MESSAGE (prints it with the
# script's name and exits 2).

# need_arg FLAG VALUE...: FLAG has a non-empty value.
need_arg() { [ "$#" -ge 2 ] && [ -n "$2" ] || die "$1 needs a value (see --help)"; }

# bp_check_speedup VALUE: exactly what loadgen's --speedup takes (a double as
# Boost.Program_options reads it: "5", "0.5", ".5", "5.", "+5", "1e1", "5e-1";
# not "0x10", "inf", "nan", " 5" or "5x"), in (0, 1000]. tests/cli/exit_codes.sh
# compares the two on a list of forms. Scripts that compute with the value
# pass it to python3 as an argument (float() reads every form), never inline.
bp_check_speedup() {
  [[ "$1" =~ ^[+]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?$ ]] &&
    awk -v s="$1" 'BEGIN { v = s + 0; exit !(v > 0 && v <= 1000) }' ||
    die "--speedup must be a number in (0, 1000], got '$1'"
}

# bp_check_configs LIST: a comma-separated list of known configurations,
# each once, no empty item.
bp_check_configs() {
  local list="$1" known=",naive,tn,litellm,bp,bp-no-drf,bp-no-priority," seen="," c
  local -a items
  IFS=, read -ra items <<<"$list,"  # the trailing comma keeps a trailing empty item
  [[ -n "$list" && "$list" != *, ]] || die "--config has an empty item in '$list'"
  for c in "${items[@]}"; do
    [ -n "$c" ] || die "--config has an empty item in '$list'"
    [[ "$known" == *",$c,"* ]] || die "unknown configuration '$c' in --config (${known:1:-1})"
    [[ "$seen" != *",$c,"* ]] || die "configuration '$c' twice in --config"
    seen="$seen$c,"
  done
}
