# A script written for nvFuser's Python frontend. Only the import differs:
# `from nvfuser import FusionDefinition, DataType` became
# `from fuser import FusionDefinition, DataType`.
#
#   PYTHONPATH=python:build/python python3 examples/nvfuser_style.py
# (needs a CUDA GPU)
import torch
from fuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
    s0 = fd.define_scalar(None, dtype=DataType.Double)
    t2 = fd.ops.cast(t1, dtype=DataType.Float)
    t3 = fd.ops.add(t0, t2)
    t4 = fd.ops.mul(t3, s0)
    t5 = fd.ops.relu(t4)
    t6 = fd.ops.mul(t5, 2.0)
    t7 = fd.ops.cast(t6, dtype=DataType.Half)
    fd.add_output(t7)

a = torch.randn(1024, 768, device="cuda", dtype=torch.float32)
b = torch.randn(1024, 768, device="cuda", dtype=torch.float16)
out = fd.execute([a, b, 0.5])

ref = (torch.relu((a + b.float()) * 0.5) * 2.0).half()
torch.testing.assert_close(out[0], ref)

print(fd)
print(fd.last_cuda_code())
print("fuser output matches torch")
