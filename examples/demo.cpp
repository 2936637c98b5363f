// The seed fusion of the project: an input whose allocation domain is a
// split of its logical domain while its loop domain stays untouched.
// Prints the fusion with every domain and the CUDA kernel fuser generates
// for it (no GPU needed); runs it when a GPU is present.
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>

#include <iostream>
#include <sstream>

using namespace fuser;

namespace {

// The generated __global__ function without the runtime headers before it.
std::string kernelFunction(const std::string& source) {
  const auto at = source.find("// ---- kernel");
  return at == std::string::npos ? source : source.substr(at);
}

} // namespace

int main() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());

  TensorView* in = makeContigConcreteTensor({6});
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);

  auto [outer, inner] = IterDomain::split(
      in->axis(0), IrBuilder::create<Val>(2, DataType::Index), true);
  in->setAllocationDomain({outer, inner}, true);

  std::cout << "=== seed fusion: logical [6], allocation [6/2, 2], loop [6]"
            << " ===\n";
  fusion->print();

  if (!deviceAvailable()) {
    std::cout << "\n=== CUDA kernel for the unscheduled (serial) fusion ===\n";
    std::ostringstream full;
    std::cout << kernelFunction(fusion->printKernel(full));
    std::cout << "\nNo CUDA device here: the fusion is not run.\n";
    return 0;
  }
  FusionExecutorCache executor_cache(std::move(fusion));
  at::Tensor in_tensor =
      at::randn({6}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
  auto outputs = executor_cache.runFusionWithInputs({in_tensor});
  FusionKernelRuntime* runtime = executor_cache.getMostRecentKernelRuntime();
  std::cout << "\n=== scheduled by " << runtime->schedulerType()
            << "; generated kernel ===\n"
            << kernelFunction(runtime->kernelCode())
            << "\n=== run on the GPU ===\n"
            << "input:  " << in_tensor.cpu() << "\noutput: " << outputs[0].cpu()
            << "\nequal: " << (at::equal(outputs[0], in_tensor) ? "yes" : "NO")
            << "\n";
  return at::equal(outputs[0], in_tensor) ? 0 : 1;
}
