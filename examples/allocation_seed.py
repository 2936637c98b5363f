"""The seed fusion of fuser, from Python: a [6] input whose allocation
domain is a split of its logical domain ([6/2, 2]) while its loop domain
stays [6]; the output is a copy (set) of it.

    PYTHONPATH=python:build/python python3 examples/allocation_seed.py

Prints the definition, its IR with every domain and the CUDA C++ lowered on
the CPU; runs it when a GPU is present.
"""

import torch

from fuser import DataType, FusionDefinition

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[6], contiguity=[True], dtype=DataType.Float)
    t1 = fd.ops.set(t0)
    fd.add_output(t1)
    # Split the logical axis without touching the loop domain...
    outer, inner = fd.split(t0.axis(0), 2, inner_split=True)
    # ...and use the result as the allocation.
    t0.set_allocation_domain([outer, inner], contiguity=[True, True])

print(fd)
print(fd.fusion_ir())
code = fd.generate_cuda()
print(code[code.index("__global__") :])

if torch.cuda.is_available():
    x = torch.arange(6, dtype=torch.float32, device="cuda")
    (y,) = fd.execute([x])
    assert torch.equal(y, x), (y, x)
    print("ran on", torch.cuda.get_device_name(), "->", y.tolist())
else:
    print("no CUDA GPU here: not run")
