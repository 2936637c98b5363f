// The matmul pipeline (runtime/hopper_matmul.h, doc/matmul.md §3): its type
// and tensor-map parameters, the tiles' coordinates in the tensor maps, and
// the calls of the producer and the consumers.
#include <codegen/kernel_printer.h>

#include <device_lower/kir_mma.h>
#include <ir/all_nodes.h>

#include <sstream>

namespace fuser::codegen {

namespace {

// Registers per thread of each role when two consumer warpgroups and the
// producer share an SM's 64K (doc/matmul.md §3): 2 * 128 * 232 + 128 * 40.
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters = 232;

} // namespace

std::string KernelPrinter::mmaDeclarations() const {
  if (!kernel_.mma) {
    return "";
  }
  std::stringstream ss;
  ss << "using FuserMatmul = " << kernel_.mma->pipeline_type << ";\n"
     << "static_assert(FuserMatmul::kSharedBytes == "
     << kernel_.mma->shared_bytes
     << ", \"the launch's shared memory is the pipeline's\");\n";
  return ss.str();
}

std::string KernelPrinter::mmaParameters() const {
  std::stringstream ss;
  for (size_t k = 0; k < kernel_.tensor_maps.size(); ++k) {
    ss << ", const __grid_constant__ fuser_mma::TensorMap fuser_tmap" << k;
  }
  return ss.str();
}

void KernelPrinter::mmaPreamble() {
  if (!kernel_.mma) {
    return;
  }
  line("extern __shared__ __align__(1024) char fuser_smem[];");
  // Where a tile lies in each tensor map: per dimension its role, divisor
  // and modulus (runtime/hopper_matmul.h, TileCoordinates).
  for (size_t k = 0; k < kernel_.tensor_maps.size(); ++k) {
    const auto& dims = kernel_.tensor_maps[k].layout.dims;
    std::string roles, divs, mods;
    for (size_t d = 0; d < dims.size(); ++d) {
      const std::string sep = d ? ", " : "";
      roles += sep + std::to_string(dims[d].role);
      divs += sep + (dims[d].div ? "(int)(" + gen(dims[d].div) + ")" : "1");
      mods += sep + (dims[d].mod ? "(int)(" + gen(dims[d].mod) + ")" : "0");
    }
    line(
        "const fuser_mma::TileCoordinates<" + std::to_string(dims.size()) +
        "> fuser_tile" + std::to_string(k) + " = {{" + roles + "}, {" + divs +
        "}, {" + mods + "}};");
  }
}

void KernelPrinter::handle(kir::MmaPipelineInit*) {
  line("FuserMatmul::init(fuser_smem);");
}

void KernelPrinter::handle(kir::MmaRoleStart* start) {
  // With one consumer warpgroup the block's registers suffice as they are.
  if (kernel_.mma->consumers > 1) {
    line(
        start->producer() ? "fuser_mma::releaseRegisters<" +
                                std::to_string(kProducerRegisters) + ">();"
                          : "fuser_mma::claimRegisters<" +
                                std::to_string(kConsumerRegisters) + ">();");
  }
  line("FuserMatmul::State fuser_mma_state;");
}

void KernelPrinter::handle(kir::MmaTile* tile) {
  line("if (" + gen(tile->valid()) + ") {");
  ++depth_;
  const std::string k_tiles = "(int)(" + gen(tile->kTiles()) + ")";
  if (tile->role() == kir::MmaTile::Role::Compute) {
    line(
        "FuserMatmul::consume(T" + std::to_string(tile->acc()->name()) + ", " +
        k_tiles + ", fuser_mma_state, fuser_smem);");
  } else {
    std::string batch = "nullptr";
    if (!tile->batch().empty()) {
      std::string values;
      for (size_t b = 0; b < tile->batch().size(); ++b) {
        values += (b ? ", " : "") + std::string("(int)(") +
                  gen(tile->batch()[b]) + ")";
      }
      line("const int fuser_batch[] = {" + values + "};");
      batch = "fuser_batch";
    }
    line(
        "FuserMatmul::produce(&fuser_tmap0, fuser_tile0, &fuser_tmap1, "
        "fuser_tile1, (int)(" +
        gen(tile->m0()) + "), (int)(" + gen(tile->n0()) + "), " + batch + ", " +
        k_tiles + ", fuser_mma_state, fuser_smem);");
  }
  --depth_;
  line("}");
}

} // namespace fuser::codegen
