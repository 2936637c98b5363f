#include <device_lower/analysis/buffer_shape.h>

#include <device_lower/lower.h>
#include <layout/buffer_axes.h>

namespace fuser {

namespace {

Val* sharedThreadExtent(GpuLower& lower, IterDomain* id) {
  const auto& bounds = lower.kernel().launch_bounds;
  auto it = bounds.find(id->getParallelType());
  FUSER_INTERNAL_ASSERT(
      it != bounds.end() && it->second > 0, "the shared buffer axis ",
      id->toString(),
      " is bound to a thread index without a launch bound; the scheduler "
      "must bound it (IterDomain::setExtentBound)");
  return IrBuilder::create<Val>(it->second, DataType::Index);
}

} // namespace

std::vector<BufferAxis> bufferShape(GpuLower& lower, TensorView* tv) {
  const MemoryType memory = tv->getMemoryType();
  const auto& loop = tv->getLoopDomain();
  const auto inline_position = static_cast<size_t>(tv->getComputeAtPosition());
  std::vector<BufferAxis> shape;
  for (size_t i = 0; i < loop.size(); ++i) {
    IterDomain* id = loop[i];
    if (!occupiesBuffer(id, memory)) {
      continue;
    }
    const bool shared_thread =
        memory == MemoryType::Shared && id->isThreadDim();
    if (i < inline_position && !shared_thread) {
      continue;
    }
    shape.push_back(
        {i, id,
         shared_thread ? sharedThreadExtent(lower, id) : lower.loopExtent(id)});
  }
  return shape;
}

} // namespace fuser
