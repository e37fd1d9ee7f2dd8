#!/usr/bin/env python3
"""scripts/lib/mixed_report.py's drf_shares is a port of loadgen's
WeightedDrfShares: the C++ tests' cases (tests/loadgen/metrics_fairness_test.cpp)
give the same rates, and the mixed run's own case its exact ideal."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "lib"))
from mixed_report import drf_shares, jain  # noqa: E402


class DrfShares(unittest.TestCase):
    def close(self, got, want):
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertAlmostEqual(g, w, delta=1e-9)

    def test_token_heavy_and_request_heavy_per_equation_1(self):
        # X* = 4/9 (requests bind): heavy 15 X* = 20/3 req/s, light 60 X* = 80/3.
        q = [{"cost": [1, 800]}, {"cost": [1, 80]}, {"cost": [1, 80]}]
        self.close(drf_shares([60, 12000], q), [20 / 3, 80 / 3, 80 / 3])

    def test_demand_cap_on_the_heavy_tenant_lifts_the_light_ones(self):
        q = [{"cost": [1, 800], "demand_cap": 3}, {"cost": [1, 80]}, {"cost": [1, 80]}]
        self.close(drf_shares([60, 12000], q), [3, 28.5, 28.5])

    def test_classes_get_their_omega_whatever_their_tenants(self):
        omega, w = [0.4, 0.3, 0.2, 0.1], [1, 2, 1, 3, 1, 2, 1, 3]
        q = [{"cost": [1.0], "weight": w[i], "group": i // 2 + 1, "group_weight": omega[i // 2]}
             for i in range(8)]
        self.close(drf_shares([60], q), [8, 16, 4.5, 13.5, 4, 8, 1.5, 4.5])

    def test_unused_share_stays_in_the_class_then_goes_by_omega(self):
        group, omega, w = [1, 1, 2, 3], [0.5, 0.5, 0.3, 0.2], [1, 2, 1, 1]
        q = [{"cost": [1.0], "weight": w[i], "group": group[i], "group_weight": omega[i]}
             for i in range(4)]
        q[0]["demand_cap"], q[3]["demand_cap"] = 2, 0
        self.close(drf_shares([60], q), [2, 35.5, 22.5, 0])

    def test_the_mixed_run(self):
        # Four 420-token and four 180-token tenants, one class: tokens bind at
        # X = 12000 / (4 * 12000 + 4 * 10800) = 5/38 (dominant share each):
        # 420-token tenants X / 0.035 = 3.759 req/s, 180-token X * 60 = 7.895.
        q = [{"cost": [1, 420], "group": 1}] * 4 + [{"cost": [1, 180], "group": 1}] * 4
        x = 5 / 38
        self.close(drf_shares([60, 12000], q), [x / 0.035] * 4 + [x * 60] * 4)

    def test_jain(self):
        self.assertEqual(jain([1, 1, 1]), 1.0)
        self.assertAlmostEqual(jain([1, 0]), 0.5)


if __name__ == "__main__":
    unittest.main()
