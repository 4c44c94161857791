"""parasol.ps from Python: reads obey the staleness bound of their table's consistency model."""
import unittest

import launch


class PsTest(unittest.TestCase):
    def reads(self, consistency, clocks=40, reads="two-sided"):
        code, lines, output = launch.run(2, "ps_worker.py", consistency, str(clocks), reads)
        self.assertEqual(code, 0, output)
        self.assertEqual(len(lines), 1, output)
        return lines[0]

    def test_ssp_bound_holds_and_is_used(self):
        self.check_ssp("two-sided")

    def test_one_sided_reads_keep_the_bound(self):
        self.check_ssp("one-sided")

    def check_ssp(self, reads):
        s = 3
        result = self.reads(f"ssp:{s}", reads=reads)
        stale = 0
        for c, mine, theirs in result["reads"]:
            # At clock c: every update of clocks <= c - s - 1 (c - s of them), and its own c.
            self.assertEqual(mine, c)
            self.assertGreaterEqual(theirs, c - s, f"clock {c}: rank 1's count {theirs} is too stale")
            self.assertLessEqual(theirs, c + s + 1)
            stale += theirs < c
        # Rank 1 is slower: rank 0 ran ahead within the bound instead of waiting at every clock.
        self.assertGreater(stale, 5, result["reads"])
        self.assertEqual(result["total"], [[2.0, 4.0, 6.0]])

    def test_bsp_reads_every_earlier_clock(self):
        result = self.reads("bsp", clocks=15)
        for c, mine, theirs in result["reads"]:
            self.assertEqual(mine, c)
            self.assertIn(theirs, (c, c + 1))  # rank 1 may have finished clock c already


if __name__ == "__main__":
    unittest.main()
