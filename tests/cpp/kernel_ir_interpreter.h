// A CPU interpreter of lowered kernel IR, for the indexing tests
// (tests/cpp/test_indexing.cpp includes it; it is not part of any library).
//
// It runs a LoweredKernel the way a GPU would, one (blockIdx, threadIdx)
// at a time over the launch extents: serial loops iterate, thread- and
// block-parallel loops take the bound thread/block index, loops with a
// constant index run once, and a vectorized copy moves `width` consecutive
// elements from its lane-0 offsets. Predicates and indices are evaluated
// with ExpressionEvaluator after binding the kernel arguments
// (T<n>.logical_size[j], T<n>.alloc_stride[k]) from BufferLayouts that the
// test defines itself, independently of fuser.
//
// Each value carries a number and its provenance (kernel_ir_values.h).
//
// A reduction across threads and blocks (kir::ParallelReduction) needs the
// values of other threads, which this one-thread-at-a-time run has not
// reached yet. Kernels with k of them run k + 1 times: each of the first k
// runs gathers every thread's contribution per reduction group (the points
// that share the expr, the indices of the dimensions not reduced and the
// values of the enclosing loops not bound to reduced dimensions), using
// the totals the run before gathered (a reduction of values derived from
// another's result is right one run later); the last run is the one
// reported, and there the group's leader (reduced thread indices 0, in
// the last block of its group of blocks, the one whose reduced block
// indices are largest), or every thread of the group for a reduction whose
// result every thread receives, combines the group's total into its
// output, as the runtime helpers do. Threads outside the predicate
// contribute nothing.
//
// Everything questionable is recorded as an error: accesses outside a
// tensor's elements (past the end or into the gaps of a strided layout),
// values computed from local buffer elements never written that reach
// global memory, values that cannot be evaluated, unsupported kernel IR.
// A shared-memory buffer lives as long as its block; each element belongs
// to the first thread that writes it, and another thread's access is an
// error (the kernels have no barrier between a shared buffer's writes and
// reads). A read of a local element never written gives a poisoned value, and
// what is computed from it is poisoned too: register-only exprs run
// unpredicated (device_lower/pass/predicate_placement.cpp), also where
// their tensor has no element, and that is right as long as nothing
// poisoned is stored.
#pragma once

#include <device_lower/analysis/vectorization.h>
#include <device_lower/kernel_ir.h>
#include <device_lower/lower.h>
#include <expr/evaluator.h>
#include <ir/all_nodes.h>
#include <tests/cpp/kernel_ir_values.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fuser::kir_test {

class KernelInterpreter {
 public:
  // `layouts`: for every global tensor of the kernel, by tensor name.
  KernelInterpreter(
      const LoweredKernel& kernel, std::map<int64_t, BufferLayout> layouts)
      : kernel_(kernel), layouts_(std::move(layouts)) {}

  // The value of a scalar kernel parameter: a size a segment takes as an
  // input of its own (doc/segmentation.md).
  void bindScalar(const Val* parameter, int64_t value) {
    scalar_parameters_.emplace_back(parameter, value);
  }

  // Runs every thread of every block. Returns false when the run had to
  // stop early (see errors()).
  bool run() {
    try {
      setUp();
      std::vector<kir::ParallelReduction*> reductions;
      collectParallelReductions(kernel_.exprs, reductions);
      for (kir::ParallelReduction* reduction : reductions) {
        if (reduction->lastBlock() != nullptr) {
          last_block_flags_.push_back(reduction->lastBlock());
        }
      }
      // One gathering run per reduction: a reduction whose input derives
      // from another's result (softmax's sum of exp(x - max)) gathers
      // right totals only once that one's are known.
      for (size_t pass = 0; pass < reductions.size(); ++pass) {
        previous_totals_ = std::move(group_totals_);
        group_totals_.clear();
        gathering_ = true;
        runGrid();
        gathering_ = false;
        resetAfterGathering();
      }
      runGrid();
    } catch (const Abort&) {
      return false;
    } catch (const std::exception& e) {
      error(std::string("exception: ") + e.what());
      return false;
    }
    return true;
  }

  // Everything that went wrong, in order (at most max_errors_ messages are
  // kept; errorCount() counts all).
  const std::vector<std::string>& errors() const {
    return errors_;
  }
  int64_t errorCount() const {
    return error_count_;
  }
  const std::vector<WriteEvent>& writes() const {
    return writes_;
  }
  // The launch extents used, by name ("blockIdx.x", ...).
  const std::map<std::string, int64_t>& launch() const {
    return launch_;
  }
  // Contents and write counts of a written global tensor, per offset.
  const std::vector<std::optional<Value>>& storage(int64_t name) const {
    return globals_.at(name).values;
  }
  const std::vector<int64_t>& writeCounts(int64_t name) const {
    return globals_.at(name).write_counts;
  }
  // Number of points (serial iterations x threads) at which a tensor expr
  // was reached, executed or not.
  int64_t pointsVisited() const {
    return points_;
  }

 private:
  struct Abort {};

  struct Global {
    TensorView* tv = nullptr;
    bool is_input = false;
    BufferLayout layout;
    std::map<int64_t, Coord> elements; // offset -> logical coordinate
    std::vector<std::optional<Value>> values;
    std::vector<int64_t> write_counts;
  };

  struct OpenLoop {
    int64_t value;
    bool in_extent;
    ParallelType parallel_type = ParallelType::Serial;
  };

  // The parallel reductions of `exprs`, nested scopes included.
  static void collectParallelReductions(
      const std::vector<Expr*>& exprs,
      std::vector<kir::ParallelReduction*>& found) {
    for (Expr* expr : exprs) {
      if (auto* reduction = dynamic_cast<kir::ParallelReduction*>(expr)) {
        found.push_back(reduction);
      } else if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
        collectParallelReductions(loop->body().exprs(), found);
      } else if (auto* branch = dynamic_cast<kir::IfThenElse*>(expr)) {
        collectParallelReductions(branch->thenBody().exprs(), found);
        collectParallelReductions(branch->elseBody().exprs(), found);
      }
    }
  }

  // The gathering run's writes, errors and counts are not reported.
  void resetAfterGathering() {
    for (auto& [name, global] : globals_) {
      std::fill(global.values.begin(), global.values.end(), std::nullopt);
      std::fill(global.write_counts.begin(), global.write_counts.end(), 0);
    }
    writes_.clear();
    errors_.clear();
    error_count_ = 0;
    points_ = 0;
  }

  void error(const std::string& message) {
    ++error_count_;
    if (static_cast<int64_t>(errors_.size()) < max_errors_) {
      errors_.push_back(where() + message);
    }
  }

  [[noreturn]] void fatal(const std::string& message) {
    error(message);
    throw Abort{};
  }

  std::string where() const {
    std::stringstream ss;
    ss << "[";
    bool first = true;
    for (const auto& [name, value] : thread_) {
      ss << (first ? "" : " ") << name << "=" << value;
      first = false;
    }
    ss << " loops=" << str(loopValues()) << "] ";
    return ss.str();
  }

  std::vector<int64_t> loopValues() const {
    std::vector<int64_t> values;
    for (const OpenLoop& loop : loops_) {
      values.push_back(loop.value);
    }
    return values;
  }

  bool loopsInExtent() const {
    for (const OpenLoop& loop : loops_) {
      if (!loop.in_extent) {
        return false;
      }
    }
    return true;
  }

  // `what` names the value in an error (a literal: this is the hot path).
  int64_t eval(const Val* v, const char* what) {
    std::optional<ScalarValue> value = ee_.evaluate(v);
    if (!value.has_value() || !value->hasValue()) {
      fatal(
          std::string("cannot evaluate ") + what + ": " + v->toInlineString());
    }
    return value->asInt();
  }

  bool evalBool(const Val* v, const char* what) {
    std::optional<ScalarValue> value = ee_.evaluate(v);
    if (!value.has_value() || !value->hasValue()) {
      fatal(
          std::string("cannot evaluate ") + what + ": " + v->toInlineString());
    }
    return value->asBool();
  }

  void setUp() {
    for (const auto& [parameter, value] : scalar_parameters_) {
      ee_.bind(parameter, ScalarValue(value));
    }
    std::set<int64_t> inputs;
    for (Val* in : kernel_.fusion->inputs()) {
      if (auto* tv = dynamic_cast<TensorView*>(in)) {
        inputs.insert(tv->name());
      }
    }
    for (Val* param : kernel_.parameters) {
      auto* tv = dynamic_cast<TensorView*>(param);
      if (tv == nullptr) {
        continue;
      }
      auto it = layouts_.find(tv->name());
      if (it == layouts_.end()) {
        fatal(
            "no layout given for kernel tensor T" + std::to_string(tv->name()));
      }
      const BufferLayout& layout = it->second;
      const std::string prefix = "T" + std::to_string(tv->name());
      for (size_t j = 0; j < layout.logical_sizes.size(); ++j) {
        ee_.bind(
            prefix + ".logical_size[" + std::to_string(j) + "]",
            ScalarValue(layout.logical_sizes[j]));
      }
      for (size_t k = 0; k < layout.alloc_strides.size(); ++k) {
        ee_.bind(
            prefix + ".alloc_stride[" + std::to_string(k) + "]",
            ScalarValue(layout.alloc_strides[k]));
      }
      Global global;
      global.tv = tv;
      global.is_input = inputs.count(tv->name()) > 0;
      global.layout = layout;
      global.elements = layout.inverse();
      global.values.resize(static_cast<size_t>(layout.storageSize()));
      global.write_counts.assign(static_cast<size_t>(layout.storageSize()), 0);
      globals_.emplace(tv->name(), std::move(global));
    }
    static const std::vector<std::pair<ParallelType, std::string>> names = {
        {ParallelType::BIDx, "blockIdx.x"},
        {ParallelType::BIDy, "blockIdx.y"},
        {ParallelType::BIDz, "blockIdx.z"},
        {ParallelType::TIDx, "threadIdx.x"},
        {ParallelType::TIDy, "threadIdx.y"},
        {ParallelType::TIDz, "threadIdx.z"},
    };
    for (const auto& [pt, name] : names) {
      auto it = kernel_.launch_extents.find(pt);
      if (it == kernel_.launch_extents.end()) {
        continue;
      }
      const int64_t extent =
          eval(it->second, ("launch extent of " + name).c_str());
      if (extent <= 0) {
        fatal("launch extent of " + name + " is " + std::to_string(extent));
      }
      launch_[name] = extent;
      const std::string dim = name.substr(0, name.find("Idx")) == "block"
                                  ? "gridDim" + name.substr(name.find('.'))
                                  : "blockDim" + name.substr(name.find('.'));
      ee_.bind(dim, ScalarValue(extent));
    }
  }

  void runGrid() {
    shared_.clear();
    std::vector<std::pair<std::string, int64_t>> dims(
        launch_.begin(), launch_.end());
    std::vector<int64_t> index(dims.size(), 0);
    while (true) {
      thread_.clear();
      for (size_t d = 0; d < dims.size(); ++d) {
        thread_[dims[d].first] = index[d];
        ee_.bind(dims[d].first, ScalarValue(index[d]));
      }
      locals_.clear();
      loops_.clear();
      for (Val* flag : last_block_flags_) {
        ee_.bind(flag, ScalarValue(false));
      }
      runScope(kernel_.exprs);
      size_t d = dims.size();
      while (d > 0) {
        --d;
        if (++index[d] < dims[d].second) {
          break;
        }
        index[d] = 0;
        if (d == 0) {
          return;
        }
      }
      if (dims.empty()) {
        return;
      }
    }
  }

  void runScope(const std::vector<Expr*>& exprs) {
    for (Expr* expr : exprs) {
      if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
        runLoop(loop);
      } else if (auto* branch = dynamic_cast<kir::IfThenElse*>(expr)) {
        runBranch(branch);
      } else if (auto* alloc = dynamic_cast<kir::Allocate*>(expr)) {
        const int64_t size = eval(alloc->size(), "buffer size");
        if (alloc->memoryType() == MemoryType::Shared) {
          // One buffer per block, kept across its threads' runs.
          Shared& shared = shared_[alloc->buffer()];
          if (shared.block != blockKey()) {
            shared = Shared{blockKey(), {}, {}};
            shared.values.resize(static_cast<size_t>(size));
            shared.owners.resize(static_cast<size_t>(size));
          }
        } else if (alloc->memoryType() == MemoryType::Local) {
          // A fresh (unwritten) buffer at every declaration.
          locals_[alloc->buffer()] =
              std::vector<std::optional<Value>>(static_cast<size_t>(size));
        } else {
          fatal("unexpected buffer " + alloc->toString());
        }
      } else if (expr->isA<kir::BlockSync>()) {
        fatal("BlockSync is not interpreted");
      } else if (
          auto* reduction = dynamic_cast<kir::ParallelReduction*>(expr)) {
        runParallelReduction(reduction);
      } else {
        runTensorExpr(expr);
      }
    }
  }

  void runLoop(kir::ForLoop* loop) {
    if (isVectorizedCopyLoop(loop)) {
      runVectorizedCopy(loop);
      return;
    }
    const int64_t start = eval(loop->start(), "loop start");
    const int64_t stop = eval(loop->stop(), "loop stop");
    if (loop->isThreadParallel() || loop->index()->isConst()) {
      const int64_t value = eval(loop->index(), "loop index");
      loops_.push_back(
          {value, start <= value && value < stop, loop->parallelType()});
      runScope(loop->body().exprs());
      loops_.pop_back();
      return;
    }
    if (loop->isDeviceParallel()) {
      fatal("device loop with a non-constant index: " + loop->toString());
    }
    for (int64_t i = start; i < stop; ++i) {
      ee_.bind(loop->index(), ScalarValue(i));
      loops_.push_back({i, true});
      runScope(loop->body().exprs());
      loops_.pop_back();
    }
  }

  void runBranch(kir::IfThenElse* branch) {
    if (branch->predicate() == nullptr) {
      fatal("predicate never filled in");
    }
    if (evalBool(branch->predicate(), "predicate")) {
      runScope(branch->thenBody().exprs());
      return;
    }
    // An unswitched nest (device_lower/pass/unswitch.cpp): its predicated
    // copy in the else branch records what it skips.
    if (!branch->elseBody().empty()) {
      runScope(branch->elseBody().exprs());
      return;
    }
    // Record the tensor writes the predicate turned off.
    for (Expr* expr : branch->thenBody().exprs()) {
      if (expr->isA<kir::ForLoop>() || expr->isA<kir::IfThenElse>()) {
        fatal("a predicate around a loop or branch is not interpreted");
      }
      recordSkipped(expr, loopValues(), loopsInExtent());
    }
    runScope(branch->elseBody().exprs());
  }

  void recordSkipped(
      Expr* expr, std::vector<int64_t> loop_values, bool in_extent) {
    ++points_;
    if (expr->outputs().empty()) {
      return;
    }
    auto* out = dynamic_cast<kir::TensorIndex*>(expr->output(0));
    if (out == nullptr || out->view()->getMemoryType() != MemoryType::Global) {
      return;
    }
    WriteEvent event;
    event.tensor = out->view()->name();
    event.loop_values = std::move(loop_values);
    event.loops_in_extent = in_extent;
    event.executed = false;
    writes_.push_back(std::move(event));
  }

  void runVectorizedCopy(kir::ForLoop* loop) {
    const int64_t width = eval(loop->stop(), "vector width");
    Expr* expr = loop->body().exprs().at(0);
    bool enabled = true;
    if (auto* branch = dynamic_cast<kir::IfThenElse*>(expr)) {
      enabled = evalBool(branch->predicate(), "vectorized predicate");
      expr = branch->thenBody().exprs().at(0);
    }
    auto* copy = expr->as<LoadStoreOp>();
    auto* out = dynamic_cast<kir::TensorIndex*>(copy->out());
    auto* in = dynamic_cast<kir::TensorIndex*>(copy->in());
    if (out == nullptr || in == nullptr) {
      fatal("vectorized copy without indexed operands: " + copy->toString());
    }
    // The loop index must not be used: the access starts at lane 0.
    int64_t out_base = 0;
    int64_t in_base = 0;
    if (enabled) {
      out_base = eval(out->index(), "vectorized output index");
      in_base = eval(in->index(), "vectorized input index");
    }
    const bool outer_in_extent = loopsInExtent();
    for (int64_t lane = 0; lane < width; ++lane) {
      loops_.push_back({lane, true});
      if (!enabled) {
        recordSkipped(copy, loopValues(), outer_in_extent);
      } else {
        ++points_;
        Value value = read(in, in_base + lane);
        write(out, out_base + lane, std::move(value));
      }
      loops_.pop_back();
    }
  }

  static Value reduce(ReductionOpType op, const Value& a, const Value& b) {
    return combine(
        {a, b}, evaluateBinaryOp(
                    combiningOp(op), ScalarValue(a.number),
                    ScalarValue(b.number), DataType::Double)
                    .asDouble());
  }

  // The reduction group of this point (see the top of the file) and
  // whether it is the group's leader.
  std::pair<std::vector<int64_t>, bool> reductionGroup(
      kir::ParallelReduction* reduction) {
    static const std::vector<std::pair<ParallelType, std::string>> dims = {
        {ParallelType::TIDx, "threadIdx.x"},
        {ParallelType::TIDy, "threadIdx.y"},
        {ParallelType::TIDz, "threadIdx.z"},
        {ParallelType::BIDx, "blockIdx.x"},
        {ParallelType::BIDy, "blockIdx.y"},
        {ParallelType::BIDz, "blockIdx.z"}};
    const kir::ReducedDims& reduced = reduction->dims();
    auto is_reduced = [&reduced](size_t d) {
      return d < 3 ? reduced.threads[d] : reduced.blocks[d - 3];
    };
    std::vector<int64_t> key;
    bool leader = true;
    for (size_t d = 0; d < dims.size(); ++d) {
      auto it = thread_.find(dims[d].second);
      const int64_t index = it == thread_.end() ? 0 : it->second;
      if (!is_reduced(d)) {
        key.push_back(index);
      } else if (d < 3) {
        leader &= index == 0;
      } else {
        leader &= index == launch_.at(dims[d].second) - 1;
      }
    }
    for (const OpenLoop& loop : loops_) {
      bool bound_to_reduced = false;
      for (size_t d = 0; d < dims.size(); ++d) {
        bound_to_reduced |=
            is_reduced(d) && loop.parallel_type == dims[d].first;
      }
      if (!bound_to_reduced) {
        key.push_back(loop.value);
      }
    }
    return {key, leader};
  }

  void runParallelReduction(kir::ParallelReduction* reduction) {
    ++points_;
    if (reduction->opType() == ReductionOpType::Welford) {
      fatal("Welford states are not interpreted");
    }
    if (reduction->predicate() == nullptr) {
      fatal("reduction predicate never filled in");
    }
    const bool in_predicate =
        evalBool(reduction->predicate(), "reduction predicate");
    auto [group, leader] = reductionGroup(reduction);
    // A grouped call reduces groupSize() consecutive elements, each on its
    // own (the group position joins the key).
    const int64_t group_size = reduction->groupSize();
    group.push_back(0);
    auto* in_index = dynamic_cast<kir::TensorIndex*>(reduction->in());
    auto* out = dynamic_cast<kir::TensorIndex*>(reduction->out());
    if (out == nullptr || in_index == nullptr) {
      fatal("reduction operands are not indexed: " + reduction->toString());
    }
    if (gathering_) {
      if (in_predicate) {
        const int64_t in_offset = eval(in_index->index(), "reduction input");
        for (int64_t k = 0; k < group_size; ++k) {
          group.back() = k;
          const Value in = read(in_index, in_offset + k);
          auto key = std::make_pair(static_cast<Expr*>(reduction), group);
          auto [it, fresh] = group_totals_.emplace(key, in);
          if (!fresh) {
            it->second = reduce(reduction->opType(), it->second, in);
          }
        }
      }
    }
    if (reduction->lastBlock() != nullptr) {
      // The last block of the group of blocks (largest reduced block
      // indices): recomputed from the launch, independent of the threads.
      bool last = true;
      static const std::vector<std::string> blocks = {
          "blockIdx.x", "blockIdx.y", "blockIdx.z"};
      for (size_t d = 0; d < 3; ++d) {
        if (reduction->dims().blocks[d]) {
          auto it = thread_.find(blocks[d]);
          last &=
              it != thread_.end() && it->second == launch_.at(blocks[d]) - 1;
        }
      }
      ee_.bind(reduction->lastBlock(), ScalarValue(last));
    }
    if (!(leader || reduction->resultInEveryThread()) || !in_predicate) {
      return;
    }
    // A gathering run combines the previous run's totals (none in the
    // first), so that what derives from them is right in the next run.
    const auto& totals = gathering_ ? previous_totals_ : group_totals_;
    const int64_t offset = eval(out->index(), "reduction output index");
    for (int64_t k = 0; k < group_size; ++k) {
      group.back() = k;
      Value value = read(out, offset + k);
      auto total =
          totals.find(std::make_pair(static_cast<Expr*>(reduction), group));
      if (total != totals.end()) {
        value = reduce(reduction->opType(), value, total->second);
      }
      write(out, offset + k, std::move(value));
    }
  }

  void runTensorExpr(Expr* expr) {
    ++points_;
    if (expr->outputs().empty()) {
      fatal("unexpected expr: " + expr->toString());
    }
    auto* out = dynamic_cast<kir::TensorIndex*>(expr->output(0));
    if (out == nullptr) {
      fatal("tensor expr whose output is not indexed: " + expr->toString());
    }
    Value value;
    if (auto* rop = dynamic_cast<ReductionOp*>(expr)) {
      if (rop->opType() == ReductionOpType::Welford) {
        fatal("Welford states are not interpreted");
      }
      // acc = acc op in
      value = reduce(
          rop->opType(), readOperand(rop->out()), readOperand(rop->in()));
    } else if (auto* uop = dynamic_cast<UnaryOp*>(expr)) {
      const Value in = readOperand(uop->in());
      value = combine(
          {in}, evaluateUnaryOp(
                    uop->opType(), ScalarValue(in.number), DataType::Double)
                    .asDouble());
    } else if (auto* bop = dynamic_cast<BinaryOp*>(expr)) {
      const Value lhs = readOperand(bop->lhs());
      const Value rhs = readOperand(bop->rhs());
      value = combine(
          {lhs, rhs}, evaluateBinaryOp(
                          bop->opType(), ScalarValue(lhs.number),
                          ScalarValue(rhs.number), DataType::Double)
                          .asDouble());
    } else if (auto* top = dynamic_cast<TernaryOp*>(expr)) {
      value = choose(top);
    } else if (expr->isA<LoadStoreOp>() && expr->inputs().size() == 1) {
      value = readOperand(expr->input(0));
    } else {
      fatal("expr not interpreted: " + expr->toString());
    }
    const int64_t offset = eval(out->index(), "output index");
    write(out, offset, std::move(value));
  }

  static Value combine(const std::vector<Value>& operands, double number) {
    Value result;
    result.number = number;
    for (const Value& operand : operands) {
      result.sources.add(operand.sources);
      result.poisoned |= operand.poisoned;
    }
    return result;
  }

  // C's `?:`: only the operand picked is read (a pad or cat reads its
  // inputs only where the position falls in them).
  Value choose(TernaryOp* top) {
    const Value cond = readOperand(top->input(0));
    const Value picked = readOperand(top->input(cond.number != 0.0 ? 1 : 2));
    return combine({cond, picked}, picked.number);
  }

  Value readOperand(Val* operand) {
    auto* ti = dynamic_cast<kir::TensorIndex*>(operand);
    if (ti == nullptr && operand->definition() != nullptr &&
        operand->definition()->isA<TernaryOp>()) {
      return choose(operand->definition()->as<TernaryOp>());
    }
    if (ti == nullptr) {
      if (operand->isA<TensorView>()) {
        fatal("unindexed tensor operand: " + operand->toString());
      }
      // A scalar.
      std::optional<ScalarValue> scalar = ee_.evaluate(operand);
      if (!scalar.has_value() || !scalar->hasValue()) {
        fatal("cannot evaluate scalar operand " + operand->toInlineString());
      }
      return Value{scalar->asDouble(), {}};
    }
    return read(ti, eval(ti->index(), "an operand index"));
  }

  // A buffer element's value; poisoned when never written.
  static Value valueOrPoison(const std::optional<Value>& value) {
    if (value.has_value()) {
      return *value;
    }
    Value poison;
    poison.poisoned = true;
    return poison;
  }

  Value read(kir::TensorIndex* ti, int64_t offset) {
    TensorView* tv = ti->view();
    if (tv->getMemoryType() == MemoryType::Global) {
      auto it = globals_.find(tv->name());
      if (it == globals_.end()) {
        fatal("read of unknown global T" + std::to_string(tv->name()));
      }
      Global& global = it->second;
      auto element = global.elements.find(offset);
      if (element == global.elements.end()) {
        error(
            "read of T" + std::to_string(tv->name()) + " at offset " +
            std::to_string(offset) + ", which holds no element");
        return {};
      }
      if (global.is_input) {
        return inputValue(tv->name(), element->second);
      }
      const auto& value = global.values[static_cast<size_t>(offset)];
      if (!value.has_value()) {
        error(
            "read of unwritten output element T" + std::to_string(tv->name()) +
            "[" + std::to_string(offset) + "]");
        return {};
      }
      return *value;
    }
    if (tv->getMemoryType() == MemoryType::Shared) {
      return readShared(tv, offset);
    }
    auto it = locals_.find(tv);
    if (it == locals_.end()) {
      fatal(
          "read of T" + std::to_string(tv->name()) + " before its allocation");
    }
    if (offset < 0 || offset >= static_cast<int64_t>(it->second.size())) {
      error(
          "read of T" + std::to_string(tv->name()) + "[" +
          std::to_string(offset) + "] outside its buffer of " +
          std::to_string(it->second.size()));
      return {};
    }
    return valueOrPoison(it->second[static_cast<size_t>(offset)]);
  }

  void write(kir::TensorIndex* ti, int64_t offset, Value value) {
    TensorView* tv = ti->view();
    if (tv->getMemoryType() == MemoryType::Global) {
      auto it = globals_.find(tv->name());
      if (it == globals_.end()) {
        fatal("write of unknown global T" + std::to_string(tv->name()));
      }
      Global& global = it->second;
      WriteEvent event;
      event.tensor = tv->name();
      event.loop_values = loopValues();
      event.loops_in_extent = loopsInExtent();
      event.executed = true;
      event.offset = offset;
      writes_.push_back(std::move(event));
      if (global.is_input) {
        error("write to input T" + std::to_string(tv->name()));
        return;
      }
      if (global.elements.count(offset) == 0) {
        error(
            "write of T" + std::to_string(tv->name()) + " at offset " +
            std::to_string(offset) + ", which holds no element");
        return;
      }
      if (value.poisoned) {
        error(
            "write of T" + std::to_string(tv->name()) + "[" +
            std::to_string(offset) +
            "] computed from a register never written");
      }
      global.values[static_cast<size_t>(offset)] = std::move(value);
      ++global.write_counts[static_cast<size_t>(offset)];
      return;
    }
    if (tv->getMemoryType() == MemoryType::Shared) {
      writeShared(tv, offset, std::move(value));
      return;
    }
    auto it = locals_.find(tv);
    if (it == locals_.end()) {
      fatal(
          "write of T" + std::to_string(tv->name()) + " before its allocation");
    }
    if (offset < 0 || offset >= static_cast<int64_t>(it->second.size())) {
      error(
          "write of T" + std::to_string(tv->name()) + "[" +
          std::to_string(offset) + "] outside its buffer of " +
          std::to_string(it->second.size()));
      return;
    }
    it->second[static_cast<size_t>(offset)] = std::move(value);
  }

  // Shared memory: the kernels keep no barrier between a shared buffer's
  // writes and reads (device_lower/analysis/thread_mapping.h), so each
  // element belongs to the first thread of the block that writes it, and
  // a read or write of it by another thread is an error (a race on the
  // GPU, where this one-thread-at-a-time run would see no conflict).
  struct Shared {
    std::string block;
    std::vector<std::optional<Value>> values;
    std::vector<std::string> owners;
  };

  std::string indexKey(const char* prefix) const {
    std::string key;
    for (const auto& [name, value] : thread_) {
      if (name.rfind(prefix, 0) == 0) {
        key += name + "=" + std::to_string(value) + " ";
      }
    }
    return key;
  }
  std::string blockKey() const {
    return indexKey("blockIdx");
  }

  Shared* sharedElement(TensorView* tv, int64_t offset, const char* access) {
    auto it = shared_.find(tv);
    if (it == shared_.end() || it->second.block != blockKey()) {
      fatal(
          std::string(access) + " of T" + std::to_string(tv->name()) +
          " before its allocation in this block");
    }
    Shared& shared = it->second;
    if (offset < 0 || offset >= static_cast<int64_t>(shared.values.size())) {
      error(
          std::string(access) + " of T" + std::to_string(tv->name()) + "[" +
          std::to_string(offset) + "] outside its shared buffer of " +
          std::to_string(shared.values.size()));
      return nullptr;
    }
    std::string& owner = shared.owners[static_cast<size_t>(offset)];
    const std::string me = indexKey("threadIdx");
    if (owner.empty()) {
      owner = me;
    } else if (owner != me) {
      error(
          std::string(access) + " of T" + std::to_string(tv->name()) + "[" +
          std::to_string(offset) + "] in shared memory by thread " + me +
          "of an element thread " + owner + "wrote, without a barrier");
      return nullptr;
    }
    return &shared;
  }

  Value readShared(TensorView* tv, int64_t offset) {
    Shared* shared = sharedElement(tv, offset, "read");
    if (shared == nullptr) {
      return {};
    }
    return valueOrPoison(shared->values[static_cast<size_t>(offset)]);
  }

  void writeShared(TensorView* tv, int64_t offset, Value value) {
    if (Shared* shared = sharedElement(tv, offset, "write")) {
      shared->values[static_cast<size_t>(offset)] = std::move(value);
    }
  }

  const LoweredKernel& kernel_;
  std::map<int64_t, BufferLayout> layouts_;
  ExpressionEvaluator ee_;
  std::map<int64_t, Global> globals_;
  std::map<std::string, int64_t> launch_;
  std::vector<std::pair<const Val*, int64_t>> scalar_parameters_;
  std::map<std::string, int64_t> thread_;
  std::map<TensorView*, std::vector<std::optional<Value>>> locals_;
  std::map<TensorView*, Shared> shared_;
  std::vector<OpenLoop> loops_;
  // Parallel reductions: whether this is the gathering run, the totals it
  // gathered per (expr, group), and the last-block flags of the kernel.
  bool gathering_ = false;
  std::map<std::pair<Expr*, std::vector<int64_t>>, Value> group_totals_;
  std::map<std::pair<Expr*, std::vector<int64_t>>, Value> previous_totals_;
  std::vector<Val*> last_block_flags_;
  std::vector<WriteEvent> writes_;
  std::vector<std::string> errors_;
  int64_t error_count_ = 0;
  int64_t max_errors_ = 30;
  int64_t points_ = 0;
};

// Runs `interpreter`: "" when it ran without errors, else the errors, one
// per line.
inline std::string runReportingErrors(KernelInterpreter& interpreter) {
  if (interpreter.run() && interpreter.errorCount() == 0) {
    return "";
  }
  std::stringstream failure;
  failure << interpreter.errorCount() << " interpreter errors:";
  for (const std::string& e : interpreter.errors()) {
    failure << "\n    " << e;
  }
  return failure.str();
}

} // namespace fuser::kir_test
