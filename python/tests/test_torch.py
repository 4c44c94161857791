"""parasol.torch on 1, 2 and 4 ranks: every sync mode and backend reaches the parameters plain
PyTorch reaches on the combined batch; a silent or mismatched peer is an error, not a hang."""
import glob
import json
import os
import tempfile
import time
import unittest

import launch

# Each runs in one mpirun job, one after the other (a job starts Python and torch once).
CONFIGS = [
    {"sync": "after-backward"},
    {"sync": "buckets", "bucket_mb": 0.02},
    {"sync": "wfbp"},
    {"sync": "p3", "slice": 700},
    {"sync": "wfbp", "shard": True},
    {"sync": "p3", "slice": 700, "shard": True},
    {"sync": "wfbp", "comm": "ps"},
    {"sync": "p3", "comm": "hybrid"},
    {"sync": "wfbp", "comm": "hybrid"},
    {"sync": "wfbp", "optimizer": "adamw"},
    {"sync": "p3", "optimizer": "adam"},
    {"sync": "after-backward", "optimizer": "adam", "comm": "ps"},
]


class SyncTest(unittest.TestCase):
    def check(self, np, configs):
        code, lines, output = launch.run(np, "sync_worker.py", json.dumps(configs))
        self.assertEqual(code, 0, output)
        self.assertEqual([line["config"] for line in lines], configs, output)
        for line in lines:
            with self.subTest(ranks=np, **line["config"]):
                # Float sums in another order: far below one step's change, which is ~1e-2.
                self.assertLess(line["max_diff"], 2e-5 * max(1.0, line["scale"]), line)
                self.assertEqual(line["spread"], 0.0, "the replicas differ")
                self.assertLess(line["last_loss"], line["first_loss"], "training did not train")
                if line["config"].get("comm") == "hybrid" and np > 1:
                    self.assertGreaterEqual(line["sfb_layers"], 1, "no layer ran by sufficient factors")
        return lines

    def test_one_rank(self):
        self.check(1, CONFIGS[:3] + CONFIGS[9:11])

    def test_two_ranks(self):
        lines = self.check(2, CONFIGS)
        units = {json.dumps(line["config"]): line["units"] for line in lines}
        # The modes cut the model as they should: one unit, several buckets, a unit per layer...
        self.assertEqual(units[json.dumps({"sync": "after-backward"})], 1)
        self.assertGreater(units[json.dumps({"sync": "buckets", "bucket_mb": 0.02})], 1)
        self.assertEqual(units[json.dumps({"sync": "wfbp"})], 4)
        self.assertGreater(units[json.dumps({"sync": "p3", "slice": 700})], 4)

    def test_four_ranks(self):
        self.check(4, [CONFIGS[i] for i in (0, 1, 2, 3, 4, 6, 7, 10)])


class FaultTest(unittest.TestCase):
    def fault(self, case, timeout_ms):
        with tempfile.TemporaryDirectory() as pids:
            start = time.monotonic()
            code, _, output = launch.run(2, "fault_worker.py", case, timeout=120,
                                         env={"PID_DIR": pids, "TIMEOUT_MS": str(timeout_ms)})
            lines = []
            for path in sorted(glob.glob(os.path.join(pids, "result*.json"))):
                with open(path) as f:
                    lines.append(json.load(f))
            return lines, output, time.monotonic() - start

    def test_silent_peer_is_an_error_naming_it(self):
        lines, output, seconds = self.fault("silent", 3000)
        errors = [line for line in lines if line["type"]]
        self.assertEqual(len(errors), 1, output)
        self.assertEqual(errors[0]["rank"], 0, output)
        self.assertIn(errors[0]["type"], ("TimeoutError", "PeerGoneError"), output)
        self.assertRegex(errors[0]["message"], r"\brank 0\b", output)
        self.assertRegex(errors[0]["message"], r"(peer|rank) 1\b", output)
        self.assertLess(seconds, 100, "the error came only from the test's own time limit")

    def test_mismatched_models_are_an_error_on_every_rank(self):
        lines, output, _ = self.fault("mismatch", 10000)
        self.assertEqual([line["rank"] for line in lines], [0, 1], output)
        # The rank that sees the other's arguments first raises MismatchError and tells the
        # other, which raises AbortedError naming it; both messages name the two sizes.
        self.assertIn("MismatchError", [line["type"] for line in lines], output)
        for line in lines:
            self.assertIn(line["type"], ("MismatchError", "AbortedError"), output)
            self.assertRegex(line["message"], r"broadcast\(\d+ x float32", output)


if __name__ == "__main__":
    unittest.main()
