// Memory: copies, vector accesses and register/shared buffers.
#include <codegen/kernel_printer.h>

#include <device_lower/analysis/vectorization.h>
#include <ir/all_nodes.h>

namespace fuser::codegen {

namespace {

bool isGlobal(Val* access) {
  auto* index = dynamic_cast<kir::TensorIndex*>(access);
  return index != nullptr &&
         index->view()->getMemoryType() == MemoryType::Global;
}

// The runtime helper (runtime/helpers.h) of a load from global memory with
// a cache policy; empty for the default policy or a source elsewhere.
std::string policyLoad(const LoadStoreOp* copy) {
  if (!isGlobal(copy->in())) {
    return "";
  }
  switch (copy->cacheOp()) {
    case CacheOp::Streaming:
      return "streamingLoad";
    case CacheOp::Global:
      return "l2OnlyLoad";
    case CacheOp::Unspecified:
    case CacheOp::AllLevels:
      return "";
  }
  return "";
}

} // namespace

void KernelPrinter::handle(LoadStoreOp* copy) {
  if (std::string load = policyLoad(copy); !load.empty()) {
    line(
        load + "<" + cudaTypeName(copy->out()->dtype()) + ", 1>(&" +
        gen(copy->out()) + ", &" + gen(copy->in()) + ");");
    return;
  }
  line(
      gen(copy->out()) + " = " + operand(copy->in(), copy->out()->dtype()) +
      ";");
}

void KernelPrinter::vectorizedCopy(const kir::ForLoop* loop) {
  Expr* expr = loop->body().exprs()[0];
  auto* branch = dynamic_cast<kir::IfThenElse*>(expr);
  if (branch != nullptr) {
    line("if (" + gen(branch->predicate()) + ") {");
    expr = branch->thenBody().exprs()[0];
    ++depth_;
  }
  auto* copy = expr->as<LoadStoreOp>();
  std::string helper = policyLoad(copy);
  if (helper.empty()) {
    helper = isGlobal(copy->out()) ? "globalStore" : "vectorizedCopy";
  }
  line(
      helper + "<" + cudaTypeName(copy->out()->dtype()) + ", " +
      std::to_string(loop->stop()->constIntValue()) + ">(&" + gen(copy->out()) +
      ", &" + gen(copy->in()) + ");");
  if (branch != nullptr) {
    --depth_;
    line("}");
  }
}

void KernelPrinter::handle(kir::Allocate* alloc) {
  const std::string name = "T" + std::to_string(alloc->buffer()->name());
  const std::string type = cudaTypeName(alloc->buffer()->dtype());
  if (alloc->memoryType() == MemoryType::Shared) {
    // Its part of the dynamic shared memory
    // (device_lower/pass/allocations.cpp).
    line(
        type + "* " + name + " = reinterpret_cast<" + type +
        "*>(fuser_smem + " +
        std::to_string(
            kernel_.shared_buffer_offsets.at(alloc->buffer()->name())) +
        ");");
    return;
  }
  FUSER_CHECK(
      alloc->size()->isConstInt(), "The register buffer of ",
      alloc->buffer()->toString(), " has size ",
      alloc->size()->toInlineString(),
      ", which is not a constant. Inline it further (inlineMost) or split "
      "its non-inlined axes by constant factors.");
  // Zero-initialized: an element that a predicated write skips is otherwise
  // an undefined register, which ptxas keeps live from the kernel's entry
  // through every loop (doc/design.md §5). Where every element is written
  // the stores are dead and removed.
  line(
      "alignas(16) " + type + " " + name + "[" + gen(alloc->size()) +
      "] = {};");
}

} // namespace fuser::codegen
