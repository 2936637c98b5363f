"""The FusionDefinitions of the decoder-block benchmark
(benchmarks/bench_decoder_block.py) without a GPU: evaluated op by op
with ATen at a tiny float32 shape, forward and forward+backward, they
match eager autograd of the LlamaBlock; and every one of them segments,
schedules and compiles off device."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import bench_decoder_block as bench  # noqa: E402

SMALL = bench.Dims(batch=2, seq=16, heads=4, head_dim=8, hidden=48)
GRADIENTS = {"d_x", "d_g1", "d_w_qkv", "d_w_o", "d_g2", "d_w1", "d_w2", "d_w3"}


def test_fusions_match_eager_autograd_on_cpu():
    # check_on_cpu raises, naming the tensor, where one differs.
    differences = bench.check_on_cpu(SMALL)
    assert set(differences["forward"]) == {"out"}
    assert set(differences["forward+backward"]) == {"out"} | GRADIENTS


def test_every_definition_compiles_off_device():
    found = bench.compile_off_device(SMALL)
    assert set(found) == {
        "attention_in",
        "attention_out_mlp",
        "attention_in (training)",
        "attention_out_mlp (training)",
        "mlp_backward",
        "attention_in_backward",
    }
    failed = {
        name: [(scheduler, error) for scheduler, error in segments if error]
        for name, segments in found.items()
    }
    assert not any(failed.values()), failed
    assert all(segments for segments in found.values())
