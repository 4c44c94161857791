"""parasol.torch on 1, 2 and 4 ranks: every sync mode and backend reaches the parameters plain
PyTorch reaches on the combined batch; a silent or mismatched peer is an error, not a hang."""
import json
import subprocess
import sys
import tempfile
import unittest

import launch

# Each runs in one mpirun job, one after the other (a job starts Python and torch once).
CONFIGS = [
    {"sync": "after-backward"},
    {"sync": "buckets", "bucket_mb": 0.02},
    {"sync": "wfbp"},
    {"sync": "p3", "slice": 700},
    {"sync": "wfbp", "overlap": True},
    {"sync": "p3", "slice": 700, "overlap": True},
    {"sync": "wfbp", "shard": True, "overlap": True},
    {"sync": "p3", "slice": 700, "shard": True, "overlap": True},
    {"sync": "wfbp", "comm": "ps"},
    {"sync": "p3", "comm": "hybrid", "overlap": True},
    {"sync": "wfbp", "comm": "hybrid"},
    {"sync": "wfbp", "optimizer": "adamw", "overlap": True},
    {"sync": "p3", "optimizer": "adam"},
    {"sync": "after-backward", "optimizer": "adam", "comm": "ps"},
]

# PyTorch's idioms: every way of clearing gradients, a scheduler, clipping and GradScaler between
# backward and step, checkpoints of every optimizer resumed mid-run, a compiled model.
IDIOMS = [
    {"sync": "wfbp", "zero": "model"},
    {"sync": "wfbp", "zero": "inner", "overlap": True},
    {"sync": "buckets", "bucket_mb": 0.02, "zero": "keep"},
    {"sync": "wfbp", "scheduler": "step"},
    {"sync": "p3", "slice": 700, "scheduler": "step", "overlap": True},
    {"sync": "buckets", "bucket_mb": 0.02, "clip": 0.5},
    {"sync": "wfbp", "scaler": True},
    {"sync": "wfbp", "resume": True, "optimizer": "sgd0"},
    {"sync": "wfbp", "resume": True},
    {"sync": "wfbp", "resume": True, "optimizer": "adam"},
    {"sync": "wfbp", "resume": True, "optimizer": "adamw"},
    {"sync": "wfbp", "resume": True, "overlap": True},
    {"sync": "p3", "slice": 700, "resume": True, "optimizer": "adamw", "overlap": True},
    {"sync": "wfbp", "resume": True, "shard": True, "overlap": True},
    {"sync": "wfbp", "compile": "aot_eager"},
]

# The engine's path for parameters on a GPU (host buffers beside the parameters), run on CPU:
# every kind of unit, both update styles, the idioms that touch the gradients or the state.
MIRRORED = [dict(c, mirror=True) for c in [
    {"sync": "after-backward"},
    {"sync": "wfbp"},
    {"sync": "p3", "slice": 700, "overlap": True},
    {"sync": "wfbp", "shard": True, "overlap": True},
    {"sync": "p3", "slice": 700, "shard": True, "overlap": True},
    {"sync": "wfbp", "comm": "ps"},
    {"sync": "p3", "comm": "hybrid", "overlap": True},
    {"sync": "wfbp", "comm": "hybrid"},
    {"sync": "wfbp", "optimizer": "adamw", "overlap": True},
    {"sync": "wfbp", "zero": "keep", "overlap": True},
    {"sync": "buckets", "bucket_mb": 0.02, "clip": 0.5},
    {"sync": "wfbp", "resume": True, "overlap": True},
    {"sync": "wfbp", "resume": True, "optimizer": "adamw", "overlap": True},
]]


class SyncTest(unittest.TestCase):
    def check(self, np, configs):
        with tempfile.TemporaryDirectory() as ckpt:
            code, lines, output = launch.run(np, "sync_worker.py", "--ckpt-dir", ckpt, json.dumps(configs))
        self.assertEqual(code, 0, output)
        self.assertEqual([line["config"] for line in lines], configs, output)
        for line in lines:
            with self.subTest(ranks=np, **line["config"]):
                # Float sums in another order: far below one step's change, which is ~1e-2.
                self.assertLess(line["max_diff"], 2e-5 * max(1.0, line["scale"]), line)
                self.assertEqual(line["spread"], 0.0, "the replicas differ")
                self.assertLess(line["last_loss"], line["first_loss"], "training did not train")
                self.assertTrue(line["mirrored_as_expected"], "the engine took the other path (views or mirror)")
                if line["config"].get("comm") == "hybrid" and np > 1:
                    self.assertGreaterEqual(line["sfb_layers"], 1, "no layer ran by sufficient factors")
        return lines

    def test_one_rank(self):
        self.check(1, CONFIGS[:5] + CONFIGS[11:13] + IDIOMS[:2] + MIRRORED[1:3])

    def test_two_ranks(self):
        lines = self.check(2, CONFIGS)
        units = {json.dumps(line["config"]): line["units"] for line in lines}
        # The modes cut the model as they should: one unit, several buckets, a unit per layer...
        self.assertEqual(units[json.dumps({"sync": "after-backward"})], 1)
        self.assertGreater(units[json.dumps({"sync": "buckets", "bucket_mb": 0.02})], 1)
        self.assertEqual(units[json.dumps({"sync": "wfbp"})], 4)
        self.assertGreater(units[json.dumps({"sync": "p3", "slice": 700})], 4)

    def test_two_ranks_idioms(self):
        self.check(2, IDIOMS)

    def test_two_ranks_mirrored(self):
        self.check(2, MIRRORED)

    def test_four_ranks(self):
        self.check(4, [CONFIGS[i] for i in (0, 1, 2, 5, 6, 8, 9, 12)] + [IDIOMS[i] for i in (1, 6, 12)])


class FaultTest(unittest.TestCase):
    def fault(self, case, timeout_ms):
        return launch.run_collecting(2, "fault_worker.py", case, env={"TIMEOUT_MS": str(timeout_ms)})

    def test_silent_peer_is_an_error_naming_it_and_the_job_ends(self):
        code, lines, output, seconds = self.fault("silent", 3000)
        errors = [line for line in lines if line["type"]]
        # Rank 0 times out. The job's abort continues the stopped rank 1 before ending it, and it
        # may report the failure notice it finds (an AbortedError naming rank 0's error) first.
        self.assertEqual([line["rank"] for line in errors][:1], [0], output)
        for line in errors[1:]:
            self.assertEqual((line["rank"], line["type"]), (1, "AbortedError"), output)
            self.assertIn("rank 0", line["message"], output)
        self.assertIn(errors[0]["type"], ("TimeoutError", "PeerGoneError"), output)
        self.assertRegex(errors[0]["message"], r"\brank 0\b", output)
        self.assertRegex(errors[0]["message"], r"(peer|rank) 1\b", output)
        if errors[0]["type"] == "TimeoutError":
            self.assertTrue(errors[0]["builtin"], "parasol.TimeoutError is not a TimeoutError")
        # Both processes ended (mpirun returned), with a failure, soon after the deadline: the
        # wait is at most twice the deadline plus a second, then the abort. Not a hang that only
        # the test's own limit (120 s) ends.
        self.assertNotEqual(code, 0, output)
        self.assertLess(seconds, 3 * 2 + 1 + 20, output)

    def test_mismatched_models_are_an_error_on_every_rank(self):
        code, lines, output, _ = self.fault("mismatch", 10000)
        self.assertNotEqual(code, 0, output)
        self.assertEqual([line["rank"] for line in lines], [0, 1], output)
        # The rank that sees the other's arguments first raises MismatchError and tells the
        # other, which raises AbortedError naming it; both messages name the two sizes.
        self.assertIn("MismatchError", [line["type"] for line in lines], output)
        for line in lines:
            self.assertIn(line["type"], ("MismatchError", "AbortedError"), output)
            self.assertRegex(line["message"], r"broadcast\(\d+ x float32", output)


class HelpersTest(unittest.TestCase):
    def test_broadcasts_and_a_late_parameter_group(self):
        code, lines, output = launch.run(2, "api_worker.py")
        self.assertEqual(code, 0, output)
        self.assertEqual([line["check"] for line in lines],
                         ["broadcast_parameters(module)", "broadcast_parameters(state_dict)",
                          "broadcast_parameters(named_parameters)", "broadcast_optimizer_state", "add_param_group"],
                         output)
        for line in lines:
            self.assertTrue(line["ok"], line)


class ErrorTypesTest(unittest.TestCase):
    def test_errors_are_the_builtins_and_import_star_shadows_none(self):
        code = ("import builtins, parasol; from parasol import *; "
                "assert TimeoutError is builtins.TimeoutError; "
                "assert issubclass(parasol.TimeoutError, TimeoutError); "
                "assert issubclass(parasol.TimeoutError, parasol.Error); "
                "assert issubclass(parasol.InvalidArgumentError, ValueError); "
                "assert issubclass(parasol.ParseError, ValueError); "
                "assert issubclass(parasol.IoError, OSError); "
                "assert issubclass(parasol.PeerGoneError, ConnectionError); "
                "assert issubclass(parasol.Error, RuntimeError)")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)


if __name__ == "__main__":
    unittest.main()
