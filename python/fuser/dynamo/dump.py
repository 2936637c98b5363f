"""What option "fuser.dump" prints: each graph's partitions (FX code), each
FusionDefinition (Python), and the CUDA of each definition after its first
run; on stderr, or as files in "fuser.dump_dir":

* ``<graph name>.txt``: the partitioned graph, every partition, and why
  each other aten node runs eagerly;
* ``<partition name>.<n>.py``: the n-th definition of a partition (one per
  input signature), a script that re-creates it;
* ``<partition name>.<n>.cu``: its CUDA, written after its first run.
"""

import os
import sys


class Dumper:
    def __init__(self, options):
        self.options = options

    def _emit(self, file_name, title, text):
        folder = self.options.dump_dir
        if folder is None:
            print(f"===== fuser: {title} =====\n{text}", file=sys.stderr, flush=True)
            return
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, file_name), "w") as f:
            f.write(text)

    def partitions(self, graph_name, graph_module, infos, eager_nodes, eager_partitions):
        if not self.options.dumps("partitions"):
            return
        lines = [f"# {graph_name}: {len(infos)} partition(s)", graph_module.code.strip(), ""]
        for info in infos:
            state = (
                "eager ATen (fuser.eager_partitions)" if info.name in eager_partitions else "fuser"
            )
            lines += [f"# {info.name}: runs on {state}", info.graph_module.code.strip(), ""]
        if eager_nodes:
            lines.append("# aten nodes outside the partitions:")
            lines += [f"#   {name}: {reason}" for name, reason in eager_nodes]
        self._emit(f"{graph_name}.txt", f"partitions of {graph_name}", "\n".join(lines) + "\n")

    def definition(self, partition_name, index, fd):
        if self.options.dumps("definitions"):
            self._emit(
                f"{partition_name}.{index}.py",
                f"FusionDefinition {index} of {partition_name}",
                str(fd),
            )

    def cuda(self, partition_name, index, fd):
        if not self.options.dumps("cuda"):
            return
        from .._C import FuserError

        try:
            code = fd.last_cuda_code()
        except FuserError as error:  # every segment ran with ATen (ExprEval)
            code = f"// no generated kernel: {error}\n"
        self._emit(
            f"{partition_name}.{index}.cu",
            f"CUDA of FusionDefinition {index} of {partition_name}",
            code,
        )
