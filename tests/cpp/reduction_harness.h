// The reduction test harness (test_reduction.cpp and
// test_reduction_properties.cpp): fusions with one input and their
// inputs, scheduling and compiling them as the runtime would, and running
// their kernels on the kernel-IR interpreter against a reference that
// names the input elements each output element is made of.
#pragma once

#include <codegen/codegen.h>
#include <device_lower/lower.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/input_binding.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/reduction.h>
#include <scheduler/registry.h>
#include <tests/cpp/kernel_ir_interpreter.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace fuser {

using kir_test::Coord;
using kir_test::Value;

// Internal linkage: each test file that includes it has its own copy.
namespace {

// A fusion with one input of `sizes` (laid out as `layout` when given: the
// logical axes in memory order) and the outputs `build` makes of it.
struct Case {
  std::unique_ptr<Fusion> fusion;
  std::vector<at::Tensor> inputs; // on the CPU; moved to the GPU for runs
};

Case reductionCase(
    const std::vector<int64_t>& sizes,
    const std::function<void(Fusion*, TensorView*)>& build,
    DataType dtype = DataType::Float, std::vector<int64_t> layout = {}) {
  Case c;
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  TensorView* in = makeContigTensor(static_cast<int64_t>(sizes.size()), dtype);
  c.fusion->addInput(in);
  at::Tensor t = at::randn(sizes).to(
      dtype == DataType::Float      ? at::kFloat
      : dtype == DataType::BFloat16 ? at::kBFloat16
      : dtype == DataType::Half     ? at::kHalf
                                    : at::kDouble);
  if (!layout.empty()) {
    std::vector<IterDomain*> allocation;
    for (int64_t p : layout) {
      allocation.push_back(in->axis(p));
    }
    in->setAllocationDomain(allocation, true);
    std::vector<int64_t> permuted_sizes;
    for (int64_t p : layout) {
      permuted_sizes.push_back(sizes[static_cast<size_t>(p)]);
    }
    std::vector<int64_t> inverse(layout.size());
    for (size_t k = 0; k < layout.size(); ++k) {
      inverse[static_cast<size_t>(layout[k])] = static_cast<int64_t>(k);
    }
    t = at::randn(permuted_sizes).to(t.scalar_type()).permute(inverse);
  }
  build(c.fusion.get(), in);
  c.inputs.push_back(t);
  return c;
}

struct Scheduled {
  SchedulerType type = SchedulerType::ExprEval;
  std::unique_ptr<HeuristicParams> params;
  std::string code;
};

// Schedules a copy of `c` as the runtime would for its inputs and prints
// the kernel (which must compile for sm_90a).
Scheduled scheduleCopy(const Case& c) {
  Fusion copy(*c.fusion);
  std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
  RuntimeInfo info = makeRuntimeInfo(&copy, inputs, /*require_cuda=*/false);
  SchedulerChoice choice = chooseScheduler(&copy, info);
  Scheduled s;
  s.type = choice.scheduler->type();
  s.params = choice.scheduler->computeHeuristics(&copy, info);
  choice.scheduler->schedule(&copy, *s.params);
  if (s.type == SchedulerType::Reduction) {
    s.code = generateCudaKernel(&copy, DataType::Int32);
    EXPECT_NO_THROW(compileToCubin(s.code, "fuser_kernel", 90, true))
        << s.params->toString();
  }
  return s;
}

const ReductionParams& reduction(const Scheduled& s) {
  return dynamic_cast<const ReductionParams&>(*s.params);
}

// ---- On the CPU interpreter (kernel_ir_interpreter.h): the kernels'
// index math, predicates and reductions across threads and blocks.
// Every output element must be written exactly once, with the value the
// fusion computes and made of exactly the input elements of its row. The
// runtime info claims 2 multiprocessors, so that grid reductions need few
// blocks.

// What the unscheduled fusion computes at coordinate `c` of `v`, in
// double, naming the input elements it reads. `sizes` are the input's.
class ReductionReference {
 public:
  ReductionReference(Fusion* fusion, std::vector<int64_t> sizes)
      : sizes_(std::move(sizes)) {
    auto* in = fusion->inputs()[0]->as<TensorView>();
    for (size_t a = 0; a < sizes_.size(); ++a) {
      ee_.bind(in->getLogicalDomain()[a]->extent(), ScalarValue(sizes_[a]));
    }
  }

  // Memoized: a normalization reads each row's reductions at every
  // element of the row.
  Value at(Val* v, const Coord& c) {
    auto key = std::make_pair(v, c);
    auto it = memo_.find(key);
    if (it != memo_.end()) {
      return it->second;
    }
    Value value = compute(v, c);
    memo_.emplace(key, value);
    return value;
  }

 private:
  Value compute(Val* v, const Coord& c) {
    if (!v->isA<TensorView>()) {
      return Value{ee_.evaluateOrThrow(v).asDouble(), {}};
    }
    auto* tv = v->as<TensorView>();
    if (tv->isFusionInput()) {
      return kir_test::inputValue(tv->name(), c);
    }
    Expr* def = tv->definition();
    if (auto* bop = dynamic_cast<BroadcastOp*>(def)) {
      Coord in;
      for (size_t a = 0; a < c.size(); ++a) {
        if (!bop->getBroadcastDimFlags()[a]) {
          in.push_back(c[a]);
        }
      }
      return at(bop->in(), in);
    }
    if (auto* rop = dynamic_cast<ReductionOp*>(def)) {
      return reduce(rop, c);
    }
    std::vector<Value> operands;
    for (Val* in : def->inputs()) {
      operands.push_back(at(in, c));
    }
    double number = operands[0].number; // a copy
    if (auto* uop = dynamic_cast<UnaryOp*>(def)) {
      number =
          evaluateUnaryOp(uop->opType(), ScalarValue(number), DataType::Double)
              .asDouble();
    } else if (auto* bin = dynamic_cast<BinaryOp*>(def)) {
      number = evaluateBinaryOp(
                   bin->opType(), ScalarValue(number),
                   ScalarValue(operands[1].number), DataType::Double)
                   .asDouble();
    }
    return combined(operands, number);
  }

  static Value combined(const std::vector<Value>& operands, double number) {
    Value result{number, {}};
    for (const Value& operand : operands) {
      result.sources.add(operand.sources);
    }
    return result;
  }

  // The reduction over the reduced axes, the kept ones at `kept`.
  Value reduce(ReductionOp* rop, const Coord& kept) {
    const auto& logical = rop->out()->as<TensorView>()->getLogicalDomain();
    const BinaryOpType op = kir_test::combiningOp(rop->opType());
    Value total{rop->init()->value().asDouble(), {}};
    Coord full(logical.size(), 0);
    while (true) {
      size_t k = 0;
      for (size_t a = 0; a < logical.size(); ++a) {
        if (!logical[a]->isReduction()) {
          full[a] = kept[k++];
        }
      }
      const Value element = at(rop->in(), full);
      total = combined(
          {total, element}, evaluateBinaryOp(
                                op, ScalarValue(total.number),
                                ScalarValue(element.number), DataType::Double)
                                .asDouble());
      // The next coordinate of the reduced axes.
      size_t a = logical.size();
      while (a > 0) {
        --a;
        if (logical[a]->isReduction() && ++full[a] < sizes_[a]) {
          break;
        }
        if (logical[a]->isReduction()) {
          full[a] = 0;
        }
        if (a == 0) {
          return total;
        }
      }
      if (logical.empty()) {
        return total;
      }
    }
  }

  std::vector<int64_t> sizes_;
  ExpressionEvaluator ee_;
  std::map<std::pair<Val*, Coord>, Value> memo_;
};

// The input's layout for the interpreter: the logical axes in memory order
// `order` (row-major when empty), densely.
kir_test::BufferLayout permutedLayout(
    const std::vector<int64_t>& sizes, std::vector<int64_t> order) {
  if (order.empty()) {
    order.resize(sizes.size());
    std::iota(order.begin(), order.end(), 0);
  }
  kir_test::BufferLayout layout;
  layout.logical_sizes = sizes;
  for (int64_t p : order) {
    layout.alloc_sizes.push_back(sizes[static_cast<size_t>(p)]);
  }
  layout.alloc_strides = kir_test::rowMajorStrides(layout.alloc_sizes);
  layout.to_alloc = [order](const Coord& c) {
    std::vector<int64_t> alloc;
    for (int64_t p : order) {
      alloc.push_back(c[static_cast<size_t>(p)]);
    }
    return std::optional(alloc);
  };
  return layout;
}

struct InterpretedCase {
  InterpretedCase(
      std::string name, std::vector<int64_t> sizes,
      std::function<void(Fusion*, TensorView*)> build,
      std::vector<int64_t> order = {}, bool split_allocation = false,
      int64_t multiprocessors = 2)
      : name(std::move(name)),
        sizes(std::move(sizes)),
        build(std::move(build)),
        order(std::move(order)),
        split_allocation(split_allocation),
        multiprocessors(multiprocessors) {}
  std::string name;
  std::vector<int64_t> sizes;
  std::function<void(Fusion*, TensorView*)> build;
  std::vector<int64_t> order; // memory order of the input's axes
  // [M, N] allocated as [M/4, 4, N] when set (order then unused).
  bool split_allocation = false;
  // The device's SMs the heuristics see (few: small grids).
  int64_t multiprocessors = 2;
  // Its register file per SM: a small one sends small rows down the paths
  // that large rows take on a real device (shared-memory buffers).
  int64_t registers_per_sm = 65536;
};

// Schedules, lowers and interprets `ic`; "" or what went wrong. `params`
// gets the heuristics.
std::string interpret(
    const InterpretedCase& ic, std::string* params,
    SchedulerType expected = SchedulerType::Reduction) {
  Case c = reductionCase(ic.sizes, ic.build, DataType::Float, ic.order);
  auto* in = c.fusion->inputs()[0]->as<TensorView>();
  kir_test::BufferLayout input_layout = permutedLayout(ic.sizes, ic.order);
  if (ic.split_allocation) {
    FusionGuard fg(c.fusion.get());
    auto [outer, inner] = IterDomain::split(
        in->axis(0), IrBuilder::create<Val>(int64_t(4), DataType::Index), true);
    in->setAllocationDomain({outer, inner, in->axis(1)}, true);
    input_layout.alloc_sizes = {ic.sizes[0] / 4, 4, ic.sizes[1]};
    input_layout.alloc_strides =
        kir_test::rowMajorStrides(input_layout.alloc_sizes);
    input_layout.to_alloc = [](const Coord& x) {
      return std::optional(std::vector<int64_t>{x[0] / 4, x[0] % 4, x[1]});
    };
  }
  Fusion scheduled(*c.fusion);
  std::unique_ptr<LoweredKernel> kernel;
  try {
    std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
    RuntimeInfo info = makeRuntimeInfo(&scheduled, inputs, false);
    RuntimeInfo::Device device = info.device();
    device.multiprocessors = ic.multiprocessors;
    device.registers_per_sm = ic.registers_per_sm;
    info.setDevice(device);
    SchedulerChoice choice = chooseScheduler(&scheduled, info);
    if (choice.scheduler->type() != expected) {
      std::string why;
      for (const std::string& r : choice.rejections) {
        why += "\n    " + r;
      }
      return "scheduled by " + toString(choice.scheduler->type()) + ", not " +
             toString(expected) + why;
    }
    auto heuristics = choice.scheduler->computeHeuristics(&scheduled, info);
    *params = heuristics->toString();
    choice.scheduler->schedule(&scheduled, *heuristics);
    kernel =
        GpuLower(&scheduled, DataType::Int32, heuristics->kernelFlags()).run();
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what();
  }
  std::map<int64_t, kir_test::BufferLayout> layouts;
  layouts[scheduled.inputs()[0]->name()] = input_layout;
  // Outputs: dense, row-major, of the sizes their extents evaluate to.
  ExpressionEvaluator ee;
  auto* scheduled_in = scheduled.inputs()[0]->as<TensorView>();
  for (size_t a = 0; a < ic.sizes.size(); ++a) {
    ee.bind(
        scheduled_in->getLogicalDomain()[a]->extent(),
        ScalarValue(ic.sizes[a]));
  }
  const std::vector<kir_test::BufferLayout> output_layouts =
      kir_test::plainOutputLayouts(scheduled, ee, layouts);

  kir_test::KernelInterpreter interpreter(*kernel, layouts);
  if (std::string errors = kir_test::runReportingErrors(interpreter);
      !errors.empty()) {
    return errors;
  }
  std::stringstream failure;
  ReductionReference reference(c.fusion.get(), ic.sizes);
  for (size_t o = 0; o < output_layouts.size(); ++o) {
    const int64_t name = scheduled.outputs()[o]->name();
    const auto& counts = interpreter.writeCounts(name);
    const auto& values = interpreter.storage(name);
    int64_t bad = 0;
    for (const auto& [offset, coord] : output_layouts[o].inverse()) {
      const auto k = static_cast<size_t>(offset);
      const Value expected = reference.at(c.fusion->outputs()[o], coord);
      const bool ok = counts[k] == 1 &&
                      values[k]->sources == expected.sources &&
                      std::abs(values[k]->number - expected.number) <=
                          1e-12 * (1.0 + std::abs(expected.number));
      if (!ok && bad++ < 4) {
        failure << "\n  output " << o << " element " << kir_test::str(coord)
                << " written " << counts[k] << " times";
        if (counts[k] > 0) {
          failure << ", holds " << values[k]->number << " from "
                  << values[k]->sources.size() << " elements, expected "
                  << expected.number << " from " << expected.sources.size();
        }
      }
    }
    if (bad > 0) {
      failure << "\n  output " << o << ": " << bad << " wrong elements";
    }
  }
  return failure.str();
}

// A device copy of `t` with the same sizes and strides.
at::Tensor onDevice(const at::Tensor& t) {
  return at::empty_strided(
             t.sizes(), t.strides(), t.options().device(at::kCUDA))
      .copy_(t);
}

} // namespace

} // namespace fuser
