#include <tests/cpp/utils.h>

#include <ATen/Context.h>

namespace fuser {

namespace {

TensorView* makeTensor(
    const std::vector<int64_t>& shape,
    DataType dtype,
    bool contiguous) {
  Fusion* fusion = FusionGuard::getCurFusion();
  FUSER_CHECK(
      fusion != nullptr, "Making a tensor needs an active Fusion (FusionGuard).");
  std::vector<IterDomain*> ids;
  for (int64_t size : shape) {
    FUSER_CHECK(
        size == -1 || size >= 0, "Tensor size ", size,
        " must be -1 (symbolic) or non-negative.");
    if (size == 1) {
      ids.push_back(IrBuilder::create<IterDomain>(
          fusion->zeroVal(), fusion->oneVal(), IterType::Broadcast));
      continue;
    }
    Val* extent = size == -1
        ? IrBuilder::create<Val>(DataType::Index)
        : IrBuilder::create<Val>(ScalarValue(size), DataType::Index);
    ids.push_back(IrBuilder::create<IterDomain>(fusion->zeroVal(), extent));
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      ids, TensorDomain::getContiguityFilledWith(ids, contiguous));
  return IrBuilder::create<TensorView>(domain, dtype);
}

} // namespace

TensorView* makeContigConcreteTensor(std::vector<int64_t> shape, DataType dtype) {
  return makeTensor(shape, dtype, true);
}

TensorView* makeConcreteTensor(std::vector<int64_t> shape, DataType dtype) {
  return makeTensor(shape, dtype, false);
}

TensorView* makeContigTensor(int64_t ndims, DataType dtype) {
  return makeTensor(std::vector<int64_t>(static_cast<size_t>(ndims), -1), dtype, true);
}

TensorView* makeSymbolicTensor(int64_t ndims, DataType dtype) {
  return makeTensor(std::vector<int64_t>(static_cast<size_t>(ndims), -1), dtype, false);
}

bool deviceAvailable() {
  return at::globalContext().hasCUDA();
}

void FuserTest::SetUp() {
  if (!deviceAvailable()) {
    GTEST_SKIP() << "No CUDA device: this test runs kernels and needs a GPU "
                    "(it runs in tools/gpu_test.sh on a GPU machine).";
  }
}

} // namespace fuser
