"""The torch.distributed backend "parasol" on 2 and 4 ranks: every collective gives gloo's result,
DDP and FSDP end with the parameters one process reaches on the combined batch, and a stalled or
mismatched peer is an error within the process group's timeout that ends the job."""
import unittest

import launch


class CollectivesTest(unittest.TestCase):
    def check(self, np):
        code, lines, output = launch.run(np, "c10d_worker.py", "collectives")
        self.assertEqual(code, 0, output)
        self.assertEqual(len(lines), 58, output)  # 8 per dtype, 10 others
        for line in lines:
            with self.subTest(ranks=np, case=line["case"]):
                self.assertTrue(line["shapes"], line)
                # Floats summed in another order (16-bit ones rounded once more); integers exact.
                exact = line["dtype"] in ("torch.int64", "torch.int32") or "max" in line["case"] \
                    or "min" in line["case"] or line["case"].split()[0] in (
                        "broadcast", "all_gather", "all_gather_into_tensor", "all_to_all_single", "all_to_all",
                        "gather", "scatter", "send/recv", "uneven")
                low = line["dtype"] in ("torch.float16", "torch.bfloat16")
                tolerance = 0.0 if exact else (2e-2 if low else 1e-5) * max(1.0, line["scale"])
                self.assertLessEqual(line["diff"], tolerance, line)

    def test_two_ranks(self):
        self.check(2)

    def test_four_ranks(self):
        self.check(4)


class TrainingTest(unittest.TestCase):
    def check(self, np, kind):
        code, lines, output = launch.run(np, "c10d_worker.py", kind, "parasol")
        self.assertEqual(code, 0, output)
        self.assertEqual(len(lines), 1, output)
        self.assertLess(lines[0]["diff"], 2e-5, lines[0])
        self.assertEqual(lines[0]["spread"], 0.0, "the replicas differ")

    def test_ddp_two_ranks(self):
        self.check(2, "ddp")

    def test_ddp_four_ranks(self):
        self.check(4, "ddp")

    def test_fsdp_two_ranks(self):
        self.check(2, "fsdp")


class FaultTest(unittest.TestCase):
    def fault(self, case):
        return launch.run_collecting(2, "c10d_worker.py", case)

    def test_stalled_peer_is_an_error_and_the_job_ends(self):
        code, lines, output, seconds = self.fault("stall")
        self.assertNotEqual(code, 0, output)
        self.assertEqual(lines[0]["rank"], 0, output)
        self.assertTrue(lines[0]["timeout"], lines[0])
        self.assertRegex(lines[0]["message"], r"rank 0: allreduce\(.*deadline passed after 3000 ms waiting for peer 1")
        # The deadline is 3 s: the job ends soon after it, not at the test's own limit (120 s).
        self.assertLess(seconds, 3 + 20, output)

    def test_mismatched_sizes_are_an_error(self):
        code, lines, output, _ = self.fault("mismatch")
        self.assertNotEqual(code, 0, output)
        self.assertTrue(lines, output)
        for line in lines:
            self.assertIn(line["type"], ("MismatchError", "AbortedError"), line)
            self.assertRegex(line["message"], r"allreduce\(.*(100|101) x float32", line)


if __name__ == "__main__":
    unittest.main()
