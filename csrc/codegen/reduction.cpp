// Reductions: the serial update of an accumulator and the calls of the
// device helpers that reduce across threads and blocks
// (runtime/block_reduction.h, runtime/grid_reduction.h; doc/reduction.md).
#include <codegen/kernel_printer.h>

#include <ir/all_nodes.h>

namespace fuser::codegen {

std::string reductionUpdate(
    ReductionOpType op, const std::string& a, const std::string& b) {
  switch (op) {
    case ReductionOpType::Sum:
      return a + " = " + a + " + " + b + ";";
    case ReductionOpType::Prod:
      return a + " = " + a + " * " + b + ";";
    case ReductionOpType::Max:
      return a + " = fuserMax(" + a + ", " + b + ");";
    case ReductionOpType::Min:
      return a + " = fuserMin(" + a + ", " + b + ");";
    case ReductionOpType::Welford:
      return a + " = welfordCombine(" + a + ", " + b + ");";
  }
  FUSER_ERROR("unknown reduction ", op);
}

void KernelPrinter::handle(ReductionOp* rop) {
  line(reductionUpdate(
      rop->opType(), gen(rop->out()), operand(rop->in(), rop->out()->dtype())));
}

void KernelPrinter::handle(kir::ParallelReduction* reduction) {
  const DataType dtype = reduction->out()->dtype();
  const std::string type = cudaTypeName(dtype);
  const kir::ReducedDims& dims = reduction->dims();
  auto flags = [](const bool(&f)[3]) {
    return std::string(f[0] ? "true" : "false") + ", " +
           (f[1] ? "true" : "false") + ", " + (f[2] ? "true" : "false");
  };
  const std::string op = "[](" + type + "& a, " + type + " b) { " +
                         reductionUpdate(reduction->opType(), "a", "b") + " }";
  const std::string pred = gen(reduction->predicate());
  const std::string smem =
      "reinterpret_cast<" + type + "*>(fuser_smem" +
      (kernel_.shared_buffer_bytes > 0
           ? " + " + std::to_string(kernel_.shared_buffer_bytes)
           : std::string()) +
      ")";
  // Typed, so that the helpers' T deduces from every argument (a literal
  // such as -CUDART_INF is a double).
  const std::string init =
      "static_cast<" + type + ">(" + operand(reduction->init(), dtype) + ")";
  std::string in = operand(reduction->in(), dtype);
  std::string out = gen(reduction->out());
  // A group passes its first elements and its size.
  const int64_t group = reduction->groupSize();
  const std::string group_arg =
      group > 1 ? std::to_string(group) + ", " : std::string();
  const std::string suffix = group > 1 ? "Group<" : "<";
  if (group > 1) {
    in = "&" + in;
    out = "&" + out;
  }
  if (reduction->resultInEveryThread() && dims.anyBlock()) {
    FUSER_INTERNAL_ASSERT(
        kernel_.cooperative_launch,
        "every thread receives a reduction across blocks only when they are "
        "all resident");
    if (group == 1) {
      in = "&" + in;
      out = "&" + out;
    }
    const std::string k = std::to_string(reduction->bufferIndex());
    line(
        "gridAllReduceResident<" + std::to_string(group) + ", " +
        flags(dims.blocks) + ", " + flags(dims.threads) + ">(" + out + ", " +
        in + ", " + op + ", " + smem + ", fuser_work" + k +
        ", fuser_semaphores" + k + ", " + pred + ", " + pred + ", " + init +
        ");");
    return;
  }
  if (reduction->resultInEveryThread()) {
    FUSER_INTERNAL_ASSERT(
        group == 1, "every thread receives only ungrouped block reductions");
    line(
        "blockAllReduce<" + flags(dims.threads) + ">(" + out + ", " + in +
        ", " + op + ", " + smem + ", " + pred + ", " + pred + ", " + init +
        ");");
    return;
  }
  if (!dims.anyBlock()) {
    line(
        "blockReduce" + suffix + group_arg + flags(dims.threads) + ">(" + out +
        ", " + in + ", " + op + ", " + smem + ", " + pred + ", " + pred + ", " +
        init + ");");
    return;
  }
  const std::string k = std::to_string(reduction->bufferIndex());
  std::string helper = "gridReduce" + suffix + group_arg;
  if (kernel_.cooperative_launch) {
    // All blocks resident: the final step is shared out among them.
    helper = "gridReduceGroupResident<" + std::to_string(group) + ", ";
    if (group == 1) {
      in = "&" + in;
      out = "&" + out;
    }
  }
  line(
      gen(reduction->lastBlock()) + " = " + helper + flags(dims.blocks) + ", " +
      flags(dims.threads) + ">(" + out + ", " + in + ", " + op + ", " + smem +
      ", fuser_work" + k + ", fuser_semaphores" + k + ", " + pred + ", " +
      pred + ", " + init + ");");
}

} // namespace fuser::codegen
