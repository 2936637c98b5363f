#include <runtime/multidevice_executor.h>

#include <base/options.h>
#include <ir/all_nodes.h>
#include <multidevice/sharding.h>
#include <runtime/aten_evaluator.h>
#include <runtime/communicator.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/input_binding.h>
#include <runtime/segment_scheduling.h>
#include <segmentation/preseg_passes.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace fuser {

namespace {

// Every mesh names ranks the process group has.
void checkMeshesFit(Fusion* fusion) {
  const int64_t ranks = Communicator::getInstance().size();
  for (Val* val : fusion->vals()) {
    auto* tv = dynamic_cast<TensorView*>(val);
    if (tv == nullptr || !tv->hasDeviceMesh()) {
      continue;
    }
    for (int64_t device : tv->getDeviceMesh().vector()) {
      FUSER_CHECK(
          device < ranks, tv->toString(), " is placed on ",
          tv->getDeviceMesh().toString(), ", but the process group has ", ranks,
          " rank(s) (devices 0 to ", ranks - 1,
          "). Start one process per device (torchrun --nproc-per-node=",
          tv->getDeviceMesh().size(),
          ", and in Python torch.distributed.init_process_group) or use a "
          "smaller mesh.");
    }
  }
}

// A rank-local fusion treats the rank's shards as whole tensors: a sharded
// axis must take its size from the shard, so it may not be a constant.
void checkShardedExtentsSymbolic(Fusion* stage) {
  for (Val* in : stage->inputs()) {
    auto* tv = dynamic_cast<TensorView*>(in);
    if (tv == nullptr) {
      continue;
    }
    const Sharding sharding = shardingOf(tv);
    if (!sharding.isSplit() || sharding.partial) {
      continue;
    }
    IterDomain* id =
        tv->getLogicalDomain().at(static_cast<size_t>(sharding.axis));
    FUSER_CHECK(
        !id->extent()->isConstInt(), tv->toString(), " is split across ",
        sharding.mesh.toString(), " on ", id->toString(),
        ", whose size is the constant ", id->extent()->toInlineString(),
        ". Give sharded axes symbolic sizes (-1 in define_tensor, "
        "makeSymbolicTensor in C++): each rank's shard has its own size.");
  }
}

std::size_t fingerprint(const Fusion* fusion) {
  std::stringstream ss;
  ss << fusion->toString();
  for (Val* val : fusion->vals()) {
    if (auto* tv = dynamic_cast<TensorView*>(val)) {
      ss << tv->name() << ":" << shardingOf(tv).toString() << ";";
    }
  }
  return std::hash<std::string>()(ss.str());
}

// Every rank must run the same fusion: the collectives pair up by order.
void checkRanksAgree(const Fusion* fusion) {
  const int64_t mine = static_cast<int64_t>(fingerprint(fusion));
  const auto all = Communicator::getInstance().allgatherValues({mine});
  std::vector<int64_t> differing;
  for (size_t rank = 0; rank < all.size(); ++rank) {
    if (all[rank].front() != all.front().front()) {
      differing.push_back(static_cast<int64_t>(rank));
    }
  }
  if (differing.empty()) {
    return;
  }
  std::stringstream ranks;
  for (int64_t rank : differing) {
    ranks << (ranks.tellp() > 0 ? ", " : "") << rank;
  }
  FUSER_CHECK(
      false, "The ranks disagree on the fusion: rank(s) ", ranks.str(),
      " defined another fusion (or sharding) than rank 0. Every rank must "
      "define the same fusion and run its fusions in the same order.");
}

} // namespace

MultiDeviceExecutor::MultiDeviceExecutor(const Fusion* fusion)
    : complete_(std::make_unique<Fusion>(*fusion)) {
  checkRanksAgree(complete_.get());
  runPreSegmentationPasses(complete_.get(), PreSegmentationStage::MultiDevice);
  checkMeshesFit(complete_.get());
  makeStages();
  if (isDebugDumpEnabled(DebugDumpOption::SegmentedFusion)) {
    std::cout << toString();
  }
}

MultiDeviceExecutor::~MultiDeviceExecutor() = default;

namespace {

// The exprs of each level, a value's level being how many communications
// it is computed through: the rank-local computations of a level, and the
// communications that read values of that level.
struct Levels {
  std::map<int64_t, std::vector<Expr*>> computations;
  std::map<int64_t, std::vector<Expr*>> communications;
  int64_t last = 0;
};

Levels levelsOf(const std::vector<Expr*>& exprs) {
  Levels levels;
  std::unordered_map<const Val*, int64_t> level;
  for (Expr* expr : exprs) {
    int64_t in_level = 0;
    for (Val* in : expr->inputs()) {
      auto it = level.find(in);
      if (it != level.end()) {
        in_level = std::max(in_level, it->second);
      }
    }
    const bool resharding = isResharding(expr);
    auto& exprs_of = resharding ? levels.communications : levels.computations;
    exprs_of[in_level].push_back(expr);
    levels.last = std::max(levels.last, in_level);
    for (Val* out : expr->outputs()) {
      level[out] = in_level + (resharding ? 1 : 0);
    }
  }
  return levels;
}

MultiDeviceStage computationStage(
    const Fusion* complete, const std::vector<Expr*>& exprs,
    const std::unordered_set<const Expr*>& live) {
  MultiDeviceStage stage;
  stage.group = std::make_unique<SegmentedGroup>(complete, exprs, live);
  std::unique_ptr<Fusion> local = stage.group->makeFusion();
  FusionGuard fg(local.get());
  checkShardedExtentsSymbolic(local.get());
  for (Val* val : local->vals()) {
    if (auto* tv = dynamic_cast<TensorView*>(val)) {
      unshard(tv);
    }
  }
  stage.cache = std::make_unique<FusionExecutorCache>(std::move(local));
  return stage;
}

MultiDeviceStage communicationStage(
    const Fusion* complete, Expr* expr,
    const std::unordered_set<const Expr*>& live) {
  MultiDeviceStage stage;
  stage.group = std::make_unique<SegmentedGroup>(
      complete, std::vector<Expr*>{expr}, live);
  stage.communication = std::make_unique<CommunicationExecutor>();
  stage.communication->compile(stage.group->makeFusion().get(), {});
  return stage;
}

} // namespace

void MultiDeviceExecutor::makeStages() {
  std::vector<Expr*> exprs;
  for (Expr* expr : complete_->exprs()) {
    if (writesTensor(expr)) {
      exprs.push_back(expr);
    }
  }
  const std::unordered_set<const Expr*> live(exprs.begin(), exprs.end());
  // The computations of a level run together, then its communications.
  const Levels levels = levelsOf(exprs);
  for (int64_t l = 0; l <= levels.last; ++l) {
    auto computations = levels.computations.find(l);
    if (computations != levels.computations.end()) {
      stages_.push_back(
          computationStage(complete_.get(), computations->second, live));
    }
    auto communications = levels.communications.find(l);
    if (communications == levels.communications.end()) {
      continue;
    }
    for (Expr* expr : communications->second) {
      stages_.push_back(communicationStage(complete_.get(), expr, live));
    }
  }
}

void MultiDeviceExecutor::checkSizesAgree(
    const std::vector<c10::IValue>& inputs) {
  // Every run: a check made only on sizes new to one rank would leave the
  // others in their first collective. The sizes of each input, -1 for what
  // this rank lacks, so that every rank sends as many values.
  std::vector<int64_t> sizes;
  const auto& fusion_inputs = complete_->inputs();
  for (size_t i = 0; i < fusion_inputs.size(); ++i) {
    auto* tv = dynamic_cast<TensorView*>(fusion_inputs[i]);
    if (tv == nullptr) {
      continue;
    }
    const size_t rank =
        TensorDomain::noReductions(tv->getLogicalDomain()).size();
    const bool given = i < inputs.size() && inputs[i].isTensor() &&
                       static_cast<size_t>(inputs[i].toTensor().dim()) == rank;
    for (size_t d = 0; d < rank; ++d) {
      sizes.push_back(
          given ? inputs[i].toTensor().size(static_cast<int64_t>(d)) : -1);
    }
  }
  const auto all = Communicator::getInstance().allgatherValues(sizes);
  for (size_t rank = 1; rank < all.size(); ++rank) {
    if (all[rank] == all.front()) {
      continue;
    }
    auto show = [](const std::vector<int64_t>& v) {
      std::stringstream ss;
      for (size_t i = 0; i < v.size(); ++i) {
        ss << (i ? ", " : "") << v[i];
      }
      return ss.str();
    };
    FUSER_CHECK(
        false, "The ranks pass shards of different sizes: rank 0 passed (",
        show(all.front()), ") and rank ", rank, " (", show(all[rank]),
        ") (the inputs' sizes in order, -1 for a missing tensor). Each rank "
        "passes its equal part of a split axis (shardTensor) and whole "
        "replicated tensors.");
  }
}

std::vector<at::Tensor> MultiDeviceExecutor::run(
    const std::vector<c10::IValue>& inputs) {
  checkSizesAgree(inputs);
  // Global extents: a split input's shard is 1/D of its axis.
  ExpressionEvaluator ee;
  bindFusionInputs(complete_.get(), inputs, ee, /*require_cuda=*/false);
  std::unordered_map<const Val*, c10::IValue> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    values[complete_->inputs()[i]] = inputs[i];
  }
  for (MultiDeviceStage& stage : stages_) {
    const std::vector<c10::IValue> stage_inputs =
        groupInputValues(complete_.get(), inputs, *stage.group, values, ee);
    const bool on_cuda = std::any_of(
        stage_inputs.begin(), stage_inputs.end(), [](const c10::IValue& v) {
          return v.isTensor() && v.toTensor().is_cuda();
        });
    std::vector<at::Tensor> outputs;
    if (stage.communication != nullptr) {
      outputs = stage.communication->run(stage_inputs);
    } else if (on_cuda) {
      outputs = stage.cache->runFusionWithInputs(stage_inputs);
    } else {
      // Host tensors (the Gloo-only setups): ATen, op by op.
      outputs = evaluateFusionWithATen(stage.cache->fusion(), stage_inputs);
    }
    const auto& stage_outputs = stage.group->outputs();
    for (size_t o = 0; o < stage_outputs.size(); ++o) {
      values[stage_outputs[o]] = outputs.at(o);
    }
  }
  std::vector<at::Tensor> outputs;
  for (Val* out : complete_->outputs()) {
    outputs.push_back(values.at(out).toTensor());
  }
  return outputs;
}

std::vector<Communication> MultiDeviceExecutor::communications() const {
  std::vector<Communication> comms;
  for (const MultiDeviceStage& stage : stages_) {
    if (stage.communication != nullptr) {
      comms.push_back(stage.communication->communication());
    }
  }
  return comms;
}

std::string MultiDeviceExecutor::toString() const {
  std::stringstream ss;
  ss << "Multi-device stages: " << stages_.size() << "\n";
  for (size_t i = 0; i < stages_.size(); ++i) {
    const MultiDeviceStage& stage = stages_[i];
    ss << "  stage " << i << ": ";
    if (stage.communication != nullptr) {
      ss << stage.communication->communication().toString();
    } else {
      ss << stage.group->exprs().size() << " rank-local exprs";
    }
    ss << "\n";
    for (Expr* expr : stage.group->exprs()) {
      ss << "    " << expr->toString();
    }
  }
  return ss.str();
}

at::Tensor shardTensor(const at::Tensor& tensor, const TensorView* tv) {
  const Sharding sharding = shardingOf(tv);
  if (!sharding.isSplit() || sharding.partial) {
    return tensor;
  }
  Communication scatter;
  scatter.type = CommunicationType::Scatter;
  scatter.mesh = sharding.mesh;
  scatter.out_axis = tensorDim(tv, sharding.axis);
  return communicate(scatter, tensor);
}

} // namespace fuser
