#include <device_lower/lower.h>

#include <base/options.h>
#include <device_lower/analysis/launch_extents.h>
#include <device_lower/analysis/thread_mapping.h>
#include <device_lower/analysis/vectorization.h>
#include <device_lower/passes.h>

#include <algorithm>
#include <chrono>
#include <iostream>

namespace fuser {

GpuLower::GpuLower(const Fusion* fusion, DataType index_type, KernelFlags flags)
    : kernel_(std::make_unique<LoweredKernel>()) {
  FUSER_CHECK(fusion != nullptr, "Lowering a null fusion.");
  FUSER_INTERNAL_ASSERT(
      index_type == DataType::Int || index_type == DataType::Int32,
      "index type must be Int or Int32");
  kernel_->fusion = std::make_unique<Fusion>();
  IrCloner cloner = Fusion::copy(fusion, kernel_->fusion.get());
  kernel_->index_type = index_type;
  kernel_->max_registers_per_thread = flags.max_registers_per_thread;
  kernel_->cooperative_launch = flags.cooperative_launch;
  for (Val* input : kernel_->fusion->inputs()) {
    kernel_->parameters.push_back(input);
  }
  for (Val* output : kernel_->fusion->outputs()) {
    FUSER_CHECK(
        !kernel_->fusion->isInput(output), "Fusion output ", output->toString(),
        " is also an input; such a fusion needs no kernel (the NoOp case).");
    kernel_->parameters.push_back(output);
  }
  id_model_ = std::make_unique<IdModel>(kernel_->fusion.get());
  bindParameterExtents();
  analyze();
}

GpuLower::~GpuLower() = default;

void GpuLower::bindParameterExtents() {
  FusionGuard fg(fusion());
  for (TensorView* tv : kernel_->fusion->allTvs()) {
    for (IterDomain* axis :
         TensorDomain::noReductions(tv->getLogicalDomain())) {
      if (!axis->isBroadcast() && axis->extent()->isConstInt()) {
        constant_extents_.emplace(id_model_->exactGroup(axis), axis->extent());
      }
    }
  }
  // Symbolic extents first; then extents computed from scalars no
  // parameter gives (a segment's input viewed by a reshape in another
  // segment has extents over the complete fusion's sizes), which stand for
  // themselves.
  for (bool derived : {false, true}) {
    for (size_t p = 0; p < kernel_->parameters.size(); ++p) {
      auto* tv = dynamic_cast<TensorView*>(kernel_->parameters[p]);
      if (tv == nullptr) {
        continue;
      }
      const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
      for (size_t j = 0; j < logical.size(); ++j) {
        Val* extent = logical[j]->extent();
        if (extent->isConst() || extent_substitutions_.count(extent) ||
            (extent->definition() != nullptr) != derived ||
            (derived && computableFromParameters(extent))) {
          continue;
        }
        // Axes the fusion joins (exact-mapped) have one size: every
        // compiled signature fixes the sizes, and binding checks joined
        // axes (checkJoinedInputExtents). One name for them lets the
        // simplifier see that `i % N < N'` holds and that a merged
        // extent is the product a vector check booked; a constant joined
        // to them (a random op's shape) folds a random element's linear
        // index, `(i / N) * 1024 + i % N`, to `i`.
        if (Val* constant = joinedConstantExtent(logical[j])) {
          extent_substitutions_[extent] = constant;
          continue;
        }
        if (Val* joined = joinedParameterExtent(logical[j])) {
          extent_substitutions_[extent] = joined;
          continue;
        }
        Val* named = IrBuilder::create<kir::TensorParameterField>(
            tv, kir::TensorParameterField::Field::LogicalSize,
            static_cast<int64_t>(j));
        extent_substitutions_[extent] = named;
        named_parameter_ids_.emplace_back(logical[j], named);
        kernel_->parameter_extents.push_back({named, p, j});
      }
    }
  }
}

Val* GpuLower::joinedParameterExtent(IterDomain* id) const {
  if (id->isBroadcast() || id->extent()->definition() != nullptr) {
    return nullptr;
  }
  for (const auto& [named_id, named] : named_parameter_ids_) {
    if (id_model_->exactMapped(named_id, id)) {
      return named;
    }
  }
  return nullptr;
}

Val* GpuLower::joinedConstantExtent(IterDomain* id) const {
  if (id->isBroadcast()) {
    return nullptr;
  }
  auto it = constant_extents_.find(id_model_->exactGroup(id));
  return it == constant_extents_.end() ? nullptr : it->second;
}

bool GpuLower::computableFromParameters(const Val* value) const {
  if (value->isConst() || extent_substitutions_.count(value)) {
    return true;
  }
  Expr* def = value->definition();
  if (def == nullptr) {
    return false;
  }
  return std::all_of(
      def->inputs().begin(), def->inputs().end(),
      [this](const Val* in) { return computableFromParameters(in); });
}

Val* GpuLower::resolveExtent(Val* value) {
  if (value == nullptr || value->isConst()) {
    return value;
  }
  if (auto it = extent_substitutions_.find(value);
      it != extent_substitutions_.end()) {
    return it->second;
  }
  if (auto it = resolved_.find(value); it != resolved_.end()) {
    return it->second;
  }
  FusionGuard fg(fusion());
  Val* result = value;
  if (auto* bop = dynamic_cast<BinaryOp*>(value->definition())) {
    Val* lhs = resolveExtent(bop->lhs());
    Val* rhs = resolveExtent(bop->rhs());
    if (lhs != bop->lhs() || rhs != bop->rhs()) {
      result = IrBuilder::binaryExpr(bop->opType(), lhs, rhs);
    }
  } else if (auto* uop = dynamic_cast<UnaryOp*>(value->definition())) {
    // A scalar made from extents (a cast of a row's length).
    Val* in = resolveExtent(uop->in());
    if (in != uop->in()) {
      result = IrBuilder::create<Val>(value->dtype());
      IrBuilder::create<UnaryOp>(uop->opType(), result, in);
    }
  } else if (auto* top = dynamic_cast<TernaryOp*>(value->definition())) {
    // A choice between extents (a slice bound counted from the end).
    std::vector<Val*> ins;
    for (Val* in : top->inputs()) {
      ins.push_back(resolveExtent(in));
    }
    if (ins != top->inputs()) {
      result = IrBuilder::create<Val>(value->dtype());
      IrBuilder::create<TernaryOp>(
          top->opType(), result, ins[0], ins[1], ins[2]);
    }
  }
  resolved_[value] = result;
  return result;
}

Val* GpuLower::loopExtent(IterDomain* id) {
  return resolveExtent(id->extent());
}

void GpuLower::recordPredicate(const Expr* lowered, Val* predicate) {
  predicates_[lowered] = predicate;
}

void GpuLower::recordDivisibleProduct(
    std::vector<Val*> extents, int64_t divisor) {
  divisible_products_.emplace_back(std::move(extents), divisor);
}

namespace {

// The factors of a product of extents (a tree of multiplications).
void appendFactors(Val* value, std::vector<Val*>& factors) {
  auto* mul = dynamic_cast<BinaryOp*>(value->definition());
  if (mul != nullptr && mul->opType() == BinaryOpType::Mul) {
    appendFactors(mul->lhs(), factors);
    appendFactors(mul->rhs(), factors);
    return;
  }
  factors.push_back(value);
}

// Whether every value of `part` is a distinct factor of `factors`.
bool containsFactors(std::vector<Val*> factors, const std::vector<Val*>& part) {
  for (Val* wanted : part) {
    auto it = std::find_if(factors.begin(), factors.end(), [&](Val* factor) {
      return factor->sameAs(wanted);
    });
    if (it == factors.end()) {
      return false;
    }
    factors.erase(it);
  }
  return true;
}

} // namespace

int64_t GpuLower::knownDivisor(Val* extent) const {
  std::vector<Val*> factors;
  appendFactors(extent, factors);
  int64_t constant = 1;
  for (Val* factor : factors) {
    if (factor->isConstInt() && factor->constIntValue() > 0) {
      constant *= factor->constIntValue();
    }
  }
  int64_t recorded = 1;
  for (const auto& [product, divisor] : divisible_products_) {
    if (divisor > recorded && containsFactors(factors, product)) {
      recorded = divisor;
    }
  }
  return constant * recorded;
}

Val* GpuLower::predicateOf(const Expr* lowered) const {
  auto it = predicates_.find(lowered);
  FUSER_INTERNAL_ASSERT(
      it != predicates_.end(), "no predicate for ", lowered->toString());
  return it->second;
}

void GpuLower::analyze() {
  FusionGuard fg(fusion());
  validateThreadMapping(fusion(), *id_model_);
  loop_promotion_ = std::make_unique<LoopPromotion>(fusion(), *id_model_);
  kernel_->launch_extents =
      computeLaunchExtents(*this, fusion(), *loop_promotion_);
  kernel_->launch_bounds = computeLaunchBounds(fusion());
  bookVectorizedAccesses(*this, fusion(), *loop_promotion_);
  parallel_reductions_ =
      std::make_unique<ParallelReductions>(fusion(), *kernel_);
  mma_pipeline_ = std::make_unique<MmaPipeline>(*this, fusion());
}

Val* GpuLower::launchExtent(ParallelType pt) const {
  auto it = kernel_->launch_extents.find(pt);
  return it == kernel_->launch_extents.end() ? nullptr : it->second;
}

std::vector<std::pair<std::string, GpuLower::Pass>> GpuLower::passes() {
  using Exprs = std::vector<Expr*>;
  return {
      {"removeBulkCopies",
       [this](const Exprs& e) { return removeBulkCopies(*mma_pipeline_, e); }},
      {"sortExprsForInlining", sortExprsForInlining},
      {"generateLoopNests",
       [this](const Exprs& e) { return generateLoopNests(*this, e); }},
      {"insertAllocations",
       [this](const Exprs& e) { return insertAllocations(*this, e); }},
      {"placePredicates",
       [this](const Exprs& e) {
         return placePredicates(*parallel_reductions_, e);
       }},
      {"lowerIndices",
       [this](const Exprs& e) { return lowerIndices(*this, e); }},
      {"generatePredicates",
       [this](const Exprs& e) { return generatePredicates(*this, e); }},
      {"specializeWarps",
       [this](const Exprs& e) { return specializeWarps(*kernel_, e); }},
      {"unswitchUnrolledLoops", unswitchUnrolledLoops},
      {"cleanUpKernel", cleanUpKernel},
  };
}

std::unique_ptr<LoweredKernel> GpuLower::run() {
  FusionGuard fg(fusion());
  std::vector<Expr*> exprs = fusion()->exprs();
  for (const auto& [name, pass] : passes()) {
    auto start = std::chrono::steady_clock::now();
    exprs = pass(exprs);
    if (isDebugDumpEnabled(DebugDumpOption::LowerPasses)) {
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count();
      std::cout << "[lower_passes] " << name << ": " << us << " us\n";
    }
    if (isDebugDumpEnabledFor(DebugDumpOption::LowerIr, name)) {
      std::cout << "[lower_ir] after " << name << ":\n"
                << kir::toString(exprs) << std::flush;
    }
  }
  kernel_->exprs = exprs;
  if (isDebugDumpEnabled(DebugDumpOption::KernelIr)) {
    std::cout << "[kernel_ir]\n" << kir::toString(exprs) << std::flush;
  }
  return std::move(kernel_);
}

} // namespace fuser
