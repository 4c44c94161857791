"""On GPUs (skipped where torch sees none; run on a machine with one, e.g. the device tool's):
DistributedOptimizer with a model on CUDA against plain PyTorch on CPU, in both update styles
and over every kind of unit; the "parasol" backend's collectives and DDP on CUDA tensors against
gloo on CPU; `parasol train --device cuda` on 2 ranks. Two ranks share a GPU when there is one."""
import json
import os
import subprocess
import tempfile
import unittest

import torch

import launch

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA = torch.cuda.is_available()


@unittest.skipUnless(CUDA, "no CUDA device")
class GpuTest(unittest.TestCase):
    def test_distributed_optimizer_on_cuda(self):
        configs = [dict(c, device="cuda") for c in [
            {"sync": "wfbp"}, {"sync": "buckets", "bucket_mb": 0.02, "clip": 0.5},
            {"sync": "p3", "slice": 700, "overlap": True}, {"sync": "wfbp", "shard": True, "overlap": True},
            {"sync": "wfbp", "comm": "hybrid"}, {"sync": "wfbp", "comm": "ps"},
            {"sync": "wfbp", "optimizer": "adamw", "overlap": True, "resume": True}]]
        with tempfile.TemporaryDirectory() as ckpt:
            code, lines, output = launch.run(2, "sync_worker.py", "--ckpt-dir", ckpt, json.dumps(configs))
        self.assertEqual(code, 0, output)
        self.assertEqual([line["config"] for line in lines], configs, output)
        for line in lines:
            with self.subTest(**line["config"]):
                self.assertLess(line["max_diff"], 1e-4 * max(1.0, line["scale"]), line)  # GPU against CPU
                self.assertEqual(line["spread"], 0.0, line)
                self.assertTrue(line["mirrored_as_expected"], line)

    def test_backend_on_cuda_tensors(self):
        code, lines, output = launch.run(2, "c10d_worker.py", "collectives", env={"DEVICE": "cuda"})
        self.assertEqual(code, 0, output)
        self.assertEqual(len(lines), 58, output)
        for line in lines:
            low = line["dtype"] in ("torch.float16", "torch.bfloat16")
            self.assertLessEqual(line["diff"], (2e-2 if low else 1e-5) * max(1.0, line["scale"]), line)
        code, lines, output = launch.run(2, "c10d_worker.py", "ddp", "parasol", env={"DEVICE": "cuda"})
        self.assertEqual(code, 0, output)
        self.assertLess(lines[0]["diff"], 1e-4, lines[0])

    def test_parasol_train_on_cuda(self):
        parasol = os.environ.get("PARASOL_BIN", os.path.join(HERE, "..", "..", "build", "tools", "parasol"))
        mpirun = os.environ.get("PARASOL_MPIRUN", os.path.join(HERE, "..", "..", "scripts", "mpirun.sh"))
        proc = subprocess.run([mpirun, "-np", "2", parasol, "train", "--model", "resnet20", "--dataset",
                               "cifar10-synthetic", "--steps", "30", "--batch", "32", "--device", "cuda",
                               "--no-progress"], capture_output=True, text=True, timeout=600)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("2 ranks x batch 32", proc.stdout)


if __name__ == "__main__":
    unittest.main()
