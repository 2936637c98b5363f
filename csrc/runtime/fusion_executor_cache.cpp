#include <runtime/fusion_executor_cache.h>

#include <base/hash.h>
#include <base/options.h>
#include <ir/all_nodes.h>
#include <layout/vectorization.h>
#include <multidevice/sharding.h>
#include <runtime/run_validation.h>

#include <iostream>
#include <unordered_set>

namespace fuser {

namespace {

// The scalar inputs that an extent or split factor of some tensor depends
// on: their values shape the kernel, not only its data.
std::unordered_set<const Val*> scalarsShapingTensors(Fusion* fusion) {
  std::unordered_set<const Val*> found;
  std::unordered_set<const Val*> visited;
  std::vector<const Val*> stack;
  for (TensorView* tv : fusion->allTvs()) {
    const TensorDomain* domain = tv->domain();
    for (const auto* ids :
         {&domain->root(), &domain->logical(), &domain->allocation(),
          &domain->loop()}) {
      for (IterDomain* id : *ids) {
        stack.push_back(id->extent());
        if (auto* split = dynamic_cast<Split*>(id->definition())) {
          stack.push_back(split->factor());
        }
      }
    }
  }
  while (!stack.empty()) {
    const Val* val = stack.back();
    stack.pop_back();
    if (val == nullptr || !visited.insert(val).second) {
      continue;
    }
    if (val->isFusionInput()) {
      found.insert(val);
    }
    if (Expr* def = val->definition()) {
      for (Val* in : def->inputs()) {
        stack.push_back(in);
      }
    }
  }
  return found;
}

} // namespace

FusionExecutorCache::FusionExecutorCache(std::unique_ptr<Fusion> fusion)
    : fusion_(std::move(fusion)),
      multi_device_fusion_(fusion_ != nullptr && isMultiDevice(fusion_.get())) {
  FUSER_CHECK(fusion_ != nullptr, "FusionExecutorCache needs a fusion.");
  if (isDebugDumpEnabled(DebugDumpOption::FusionIr)) {
    std::cout << "[fusion_ir]\n";
    fusion_->print();
  }
  const std::unordered_set<const Val*> shaping =
      scalarsShapingTensors(fusion_.get());
  for (Val* input : fusion_->inputs()) {
    scalar_value_in_key_.push_back(
        !input->isA<TensorView>() && shaping.count(input) > 0);
  }
}

size_t FusionExecutorCache::KeyHash::operator()(
    const std::vector<int64_t>& key) const {
  size_t h = key.size();
  for (int64_t v : key) {
    hashCombine(h, std::hash<int64_t>()(v));
  }
  return h;
}

void FusionExecutorCache::signatureOf(
    const std::vector<c10::IValue>& inputs, std::vector<int64_t>& key) const {
  key.clear();
  // The options of this call (ScopedOptions) change what is compiled.
  key.push_back(static_cast<int64_t>(scopedOptionBits()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const c10::IValue& input = inputs[i];
    if (input.isTensor()) {
      const at::Tensor& t = input.toTensor();
      key.push_back(static_cast<int64_t>(t.scalar_type()));
      key.push_back(t.is_cuda() ? t.get_device() : -1);
      key.push_back(t.dim());
      for (int64_t d = 0; d < t.dim(); ++d) {
        key.push_back(t.size(d));
        key.push_back(t.stride(d));
      }
      // Alignment class: whether vectorized accesses are legal.
      key.push_back(pointerAlignment(t.data_ptr()));
    } else {
      key.push_back(-1); // a scalar, then its kind
      key.push_back(input.isDouble() ? 1 : input.isInt() ? 2 : 3);
      if (scalar_value_in_key_[i]) {
        key.push_back(
            input.isInt()
                ? input.toInt()
                : static_cast<int64_t>(input.isBool() && input.toBool()));
      }
    }
  }
}

std::vector<at::Tensor> FusionExecutorCache::runFusionWithInputs(
    const std::vector<c10::IValue>& inputs) {
  FUSER_CHECK(
      inputs.size() == fusion_->inputs().size(), "The fusion takes ",
      fusion_->inputs().size(), " inputs, got ", inputs.size(), ".");
  if (multi_device_fusion_) {
    MultiDeviceExecutor* executor = nullptr;
    {
      std::lock_guard<std::mutex> lock(multi_device_mutex_);
      if (multi_device_ == nullptr) {
        multi_device_ = std::make_unique<MultiDeviceExecutor>(fusion_.get());
      }
      executor = multi_device_.get();
    }
    return executor->run(inputs);
  }
  // Reused by every run of this thread.
  static thread_local std::vector<int64_t> key;
  signatureOf(inputs, key);
  FusionKernelRuntime* runtime = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = runtimes_.find(key);
    if (it != runtimes_.end()) {
      runtime = it->second.get();
    }
  }
  if (runtime == nullptr) {
    // The runtime validates the inputs before it schedules or compiles
    // anything, so a bad input throws before a runtime is cached and the
    // cache stays usable. Compiled outside the lock: other signatures'
    // runs go on meanwhile.
    auto fresh = std::make_unique<FusionKernelRuntime>(fusion_.get(), inputs);
    std::lock_guard<std::mutex> lock(mutex_);
    runtime = runtimes_.try_emplace(key, std::move(fresh)).first->second.get();
  }
  most_recent_.store(runtime);
  std::vector<at::Tensor> outputs = runtime->run(inputs);
  if (isEnabled(EnableOption::ValidateRuns)) {
    std::string segments;
    for (size_t i = 0; i < runtime->segments().size(); ++i) {
      segments += (i ? ", " : "") + toString(runtime->schedulerType(i));
    }
    validateRunWithATen(fusion_.get(), inputs, outputs, segments);
  }
  return outputs;
}

MultiDeviceExecutor* FusionExecutorCache::multiDeviceExecutor() const {
  std::lock_guard<std::mutex> lock(multi_device_mutex_);
  return multi_device_.get();
}

size_t FusionExecutorCache::numRuntimes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return runtimes_.size();
}

} // namespace fuser
