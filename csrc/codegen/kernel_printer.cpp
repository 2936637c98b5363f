#include <codegen/kernel_printer.h>

#include <limits>

#include <base/register_file.h>
#include <ir/all_nodes.h>

namespace fuser::codegen {

namespace {

std::string parameter(Val* param) {
  if (auto* tv = dynamic_cast<TensorView*>(param)) {
    const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
    const auto alloc =
        TensorDomain::noReductions(tv->getMaybeAllocationDomain());
    std::stringstream ss;
    ss << "Tensor<" << cudaTypeName(tv->dtype()) << ", " << logical.size()
       << ", " << alloc.size() << "> T" << tv->name();
    return ss.str();
  }
  return cudaTypeName(param->dtype()) + " " + param->toString();
}

// The kernel's __launch_bounds__: a matrix product's warpgroups; else a
// block size above 256 threads, constant or bounded by the scheduler
// (IterDomain::extentBound), so that the compiler keeps the
// block within the registers of an SM (64 per thread at 1024; without the
// bound it may take up to 255, and the launch would fail). Up to 256
// threads any register count fits, and a bound would only make the
// compiler trade registers for occupancy (measured: spills at 32), unless
// the scheduler asked for that trade (KernelFlags::max_registers_per_thread):
// then the bound also names the blocks per SM that its budget allows. A
// grid that must fit the device at once (a cooperative launch) keeps that
// count; any other names it through kMinBlocksPerSmMacro, which the
// compile lowers where the budget spills (runtime/nvrtc_compile.h):
// `relaxable_blocks` is then its value.
std::string launchBounds(
    const LoweredKernel& kernel, int64_t& relaxable_blocks) {
  relaxable_blocks = 0;
  if (kernel.mma) {
    // Blocks of a cluster are launched together; the grid is a multiple.
    const std::string cluster = kernel.mma->cluster > 1
                                    ? "__cluster_dims__(" +
                                          std::to_string(kernel.mma->cluster) +
                                          ", 1, 1) "
                                    : "";
    return cluster + "__launch_bounds__(FuserMatmul::kThreads, 1) ";
  }
  int64_t threads = 1;
  for (ParallelType pt :
       {ParallelType::TIDx, ParallelType::TIDy, ParallelType::TIDz}) {
    auto it = kernel.launch_bounds.find(pt);
    if (it == kernel.launch_bounds.end()) {
      continue;
    }
    if (it->second == 0) {
      return "";
    }
    threads *= it->second;
  }
  if (kernel.max_registers_per_thread > 0) {
    const int64_t blocks = blocksWithinRegisters(
        kRegistersPerSm, threads, kernel.max_registers_per_thread);
    if (blocks >= 1) {
      relaxable_blocks = kernel.cooperative_launch ? 0 : blocks;
      return "__launch_bounds__(" + std::to_string(threads) + ", " +
             (kernel.cooperative_launch ? std::to_string(blocks)
                                        : std::string(kMinBlocksPerSmMacro)) +
             ") ";
    }
  }
  if (threads <= 256) {
    return "";
  }
  return "__launch_bounds__(" + std::to_string(threads) + ") ";
}

} // namespace

std::string KernelPrinter::print() {
  int64_t relaxable_blocks = 0;
  const std::string bounds = launchBounds(kernel_, relaxable_blocks);
  if (relaxable_blocks > 0) {
    os_ << "#ifndef " << kMinBlocksPerSmMacro << "\n#define "
        << kMinBlocksPerSmMacro << " " << relaxable_blocks << "\n#endif\n";
  }
  os_ << mmaDeclarations() << "extern \"C\" __global__ void " << bounds
      << kernel_.kernel_name << "(";
  for (size_t i = 0; i < kernel_.parameters.size(); ++i) {
    os_ << (i ? ", " : "") << parameter(kernel_.parameters[i]);
  }
  // The buffers of reductions across blocks follow the outputs, then the
  // tensor maps of a matrix product.
  for (size_t k = 0; k < kernel_.grid_buffers.size(); ++k) {
    os_ << ", " << cudaTypeName(kernel_.grid_buffers[k].work_type)
        << "* fuser_work" << k << ", long long* fuser_semaphores" << k;
  }
  os_ << mmaParameters() << ") {\n";
  if (kernel_.smem_bytes_per_thread > 0 || kernel_.shared_buffer_bytes > 0) {
    os_ << "  extern __shared__ __align__(16) char fuser_smem[];\n";
  }
  mmaPreamble();
  for (size_t k = 0; k < kernel_.grid_buffers.size(); ++k) {
    if (kernel_.grid_buffers[k].last_block_flag) {
      os_ << "  bool last_block" << k << " = false;\n";
    }
  }
  // The body first: the random ops it prints each need a cache declared
  // before it.
  const std::string head = os_.str();
  os_.str("");
  depth_ = 0;
  block(kernel_.exprs);
  if (kernel_.mma) {
    // Both roles end here (runtime/hopper_matmul.h, Matmul::finish).
    os_ << "  FuserMatmul::finish();\n";
  }
  os_ << "}\n";
  std::string caches;
  for (size_t k = 0; k < rng_caches_.size(); ++k) {
    caches += "  FuserPhiloxCache fuser_rng" + std::to_string(k) + ";\n";
  }
  return head + caches + os_.str();
}

std::string KernelPrinter::gen(Val* v) {
  if (auto* ti = dynamic_cast<kir::TensorIndex*>(v)) {
    return "T" + std::to_string(ti->view()->name()) + "[" + gen(ti->index()) +
           "]";
  }
  if (auto* named = dynamic_cast<kir::NamedScalar*>(v)) {
    // CUDA's launch variables are unsigned, and unsigned arithmetic would
    // turn every index expression they enter unsigned: a left pad's
    // `(i % 32 - 16) >= 0` then holds for every i (doc/design.md §5).
    return named->isLaunchVariable()
               ? "((nvfuser_index_t)" + named->scalarName() + ")"
               : named->scalarName();
  }
  if (v->isConst()) {
    // In a kernel of 32-bit indices, nvfuser_index_t math (fuserMin<
    // nvfuser_index_t>, ...) would truncate a wider index constant.
    FUSER_INTERNAL_ASSERT(
        kernel_.index_type != DataType::Int32 ||
            v->dtype() != DataType::Index ||
            (v->value().asInt() >= std::numeric_limits<int32_t>::min() &&
             v->value().asInt() <= std::numeric_limits<int32_t>::max()),
        "the index constant ", v->value().asInt(),
        " does not fit the kernel's 32-bit indices");
    return literal(v);
  }
  if (Expr* def = v->definition(); def != nullptr && v->isScalar()) {
    return inlineExpr(def);
  }
  return v->toString();
}

std::string KernelPrinter::operand(Val* v, DataType dtype) {
  // Integer scalars mix freely with int32 and int64 operands, but a
  // narrower integer type takes them cast, so that templates such as
  // fuserMax see one type.
  const bool integers_mix = isIntegralType(v->dtype()) &&
                            isIntegralType(dtype) && dataTypeSize(dtype) >= 4;
  if (v->isScalar() && !v->isA<kir::TensorIndex>() && v->dtype() != dtype &&
      !integers_mix) {
    if (v->isConst() && isFloatingPointType(dtype) &&
        (dtype == DataType::Float || dtype == DataType::Double) &&
        !isComplexType(v->dtype())) {
      Val tmp(ScalarValue(v->value().asDouble()), dtype);
      return literal(&tmp);
    }
    if (v->isConst() && isComplexType(dtype)) { // at the operand's precision
      Val tmp(ScalarValue(v->value().asComplex()), dtype);
      return literal(&tmp);
    }
    return castExpr(gen(v), v->dtype(), dtype);
  }
  return gen(v);
}

void KernelPrinter::line(const std::string& text) {
  os_ << std::string(static_cast<size_t>(depth_) * 2, ' ') << text << "\n";
}

void KernelPrinter::block(const std::vector<Expr*>& exprs) {
  ++depth_;
  for (Expr* expr : exprs) {
    dispatch(expr);
  }
  --depth_;
}

void KernelPrinter::handle(Expr* expr) {
  FUSER_ERROR("no CUDA for ", expr->toString());
}

} // namespace fuser::codegen
