#!/usr/bin/env python3
"""Compares two loadgen summary.json files metric by metric (95 % intervals).

  bench/compare_summaries.py CONFIG A/summary.json B/summary.json [label_a label_b]

For each metric of CONFIG present in both (mean, ci95 over repeats): both
intervals, "overlap" when they overlap, "diff<ci" when |mean_a - mean_b| <=
sqrt(ci_a^2 + ci_b^2). Ends with the count of metrics passing each verdict.
Used by bench/loadgen_speedup_check.sh.
"""
import json
import math
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    config, a_path, b_path = sys.argv[1:4]
    la = sys.argv[4] if len(sys.argv) > 4 else "A"
    lb = sys.argv[5] if len(sys.argv) > 5 else "B"
    a = json.load(open(a_path))["configurations"][config]["metrics"]
    b = json.load(open(b_path))["configurations"][config]["metrics"]
    names = [n for n in a if n in b and isinstance(a[n], dict) and "mean" in a[n]]
    print(f"{'metric':<40} {la:>22} {lb:>22} {'overlap':>8} {'diff<ci':>8}")
    overlap_n = strict_n = 0
    for n in names:
        ma, ca = a[n]["mean"], a[n].get("ci95") or 0.0
        mb, cb = b[n]["mean"], b[n].get("ci95") or 0.0
        if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (ma, mb, ca, cb)):
            continue
        overlap = ma - ca <= mb + cb and mb - cb <= ma + ca
        strict = abs(ma - mb) <= math.hypot(ca, cb)
        overlap_n += overlap
        strict_n += strict
        print(f"{n:<40} {ma:>11.3f} ± {ca:<8.3f} {mb:>11.3f} ± {cb:<8.3f} "
              f"{'yes' if overlap else 'NO':>8} {'yes' if strict else 'NO':>8}")
    print(f"{len(names)} metrics: {overlap_n} intervals overlap, {strict_n} differences within "
          f"sqrt(ci_a^2 + ci_b^2)")


if __name__ == "__main__":
    main()
