// The indexing test harness (test_indexing.cpp only): what a test knows
// about a scheduled fusion's layouts and outputs, and checkIndexing, which
// runs it through the kernel IR interpreter and asserts (1)-(3) of the
// comment at the top of test_indexing.cpp.
#pragma once

#include <codegen/codegen.h>
#include <device_lower/lower.h>
#include <ir/all_nodes.h>
#include <scheduler/utils.h>
#include <tests/cpp/kernel_ir_interpreter.h>
#include <tests/cpp/utils.h>
#include <transform/inlining.h>
#include <transform/propagator.h>

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fuser {

using kir_test::BufferLayout;
using kir_test::Coord;
using kir_test::KernelInterpreter;
using kir_test::plainLayout;
using kir_test::rowMajorStrides;
using kir_test::Value;

// Internal linkage: this header belongs to one test file.
namespace {

// What the test knows about one global output.
struct OutputSpec {
  // The logical coordinate the test's schedule computes at a loop point
  // (the indices of the loops around the write, outermost first; the lane
  // of a vectorized copy last).
  std::function<Coord(const std::vector<int64_t>&)> logical_at;
  // The value the fusion computes at a logical coordinate (from the input
  // values of kir_test::inputValue), naming the input elements it reads.
  std::function<Value(const Coord&)> expected;
};

// A scheduled fusion with the layouts of its global tensors (by name) and
// the specs of its outputs.
struct IndexingCase {
  std::string name;
  std::unique_ptr<Fusion> fusion;
  std::map<int64_t, BufferLayout> layouts;
  std::map<int64_t, OutputSpec> outputs;
};

// The value of input `tv`'s element at `coord`.
Value element(TensorView* tv, const Coord& coord) {
  return kir_test::inputValue(tv->name(), coord);
}

// `number`, computed from `operands`.
Value computed(double number, std::initializer_list<Value> operands) {
  Value result{number, {}};
  for (const Value& operand : operands) {
    result.sources.add(operand.sources);
  }
  return result;
}

Value negOf(const Value& v) {
  return computed(-v.number, {v});
}

Value reluOf(const Value& v) {
  return computed(v.number > 0 ? v.number : 0.0, {v});
}

// relu(v) * 2
Value relu2Of(const Value& v) {
  return computed(reluOf(v).number * 2.0, {v});
}

Value sumOf(const Value& a, const Value& b) {
  return computed(a.number + b.number, {a, b});
}

// Row-major unravel of a linear index over `sizes`.
Coord unravel(int64_t linear, const std::vector<int64_t>& sizes) {
  Coord c(sizes.size(), 0);
  for (size_t d = sizes.size(); d-- > 0;) {
    if (d == 0) {
      c[d] = linear; // may be out of range: the predicate's business
    } else {
      c[d] = linear % sizes[d];
      linear /= sizes[d];
    }
  }
  return c;
}

std::string joinErrors(const KernelInterpreter& interpreter) {
  std::stringstream ss;
  for (const std::string& e : interpreter.errors()) {
    ss << "  " << e << "\n";
  }
  if (interpreter.errorCount() >
      static_cast<int64_t>(interpreter.errors().size())) {
    ss << "  ... " << interpreter.errorCount() << " errors in all\n";
  }
  return ss.str();
}

// Runs the harness over `c` (see the top of the file). Returns the lowered
// kernel for further checks.
std::unique_ptr<LoweredKernel> checkIndexing(const IndexingCase& c) {
  SCOPED_TRACE(c.name);
  GpuLower lower(c.fusion.get());
  std::unique_ptr<LoweredKernel> kernel = lower.run();
  const std::string kernel_ir = kir::toString(kernel->exprs);
  SCOPED_TRACE("kernel IR:\n" + kernel_ir);

  // Every fusion output has a spec.
  for (Val* out : c.fusion->outputs()) {
    EXPECT_TRUE(c.outputs.count(out->name())) << "no spec for T" << out->name();
  }

  KernelInterpreter interpreter(*kernel, c.layouts);
  EXPECT_TRUE(interpreter.run()) << joinErrors(interpreter);
  EXPECT_EQ(interpreter.errorCount(), 0) << joinErrors(interpreter);
  EXPECT_GT(interpreter.pointsVisited(), 0);

  constexpr int kMaxReports = 12;
  for (const auto& [name, spec] : c.outputs) {
    SCOPED_TRACE("output T" + std::to_string(name));
    const BufferLayout& layout = c.layouts.at(name);
    const std::map<int64_t, Coord> elements = layout.inverse();
    EXPECT_FALSE(elements.empty());
    const auto& counts = interpreter.writeCounts(name);
    const auto& values = interpreter.storage(name);

    // (1) Each element written once, nothing else written.
    int reports = 0;
    for (size_t offset = 0; offset < counts.size(); ++offset) {
      auto it = elements.find(static_cast<int64_t>(offset));
      const int64_t expected = it == elements.end() ? 0 : 1;
      if (counts[offset] != expected && reports++ < kMaxReports) {
        ADD_FAILURE() << "offset " << offset << " ("
                      << (it == elements.end()
                              ? std::string("no element")
                              : "element " + kir_test::str(it->second))
                      << ") written " << counts[offset] << " times";
      }
    }

    // (2) Reference semantics: the element at c holds what the fusion
    // computes at c, from the input elements at c.
    reports = 0;
    for (const auto& [offset, coord] : elements) {
      const auto& value = values[static_cast<size_t>(offset)];
      if (!value.has_value()) {
        continue; // reported by (1)
      }
      const Value expected = spec.expected(coord);
      if (*value != expected && reports++ < kMaxReports) {
        ADD_FAILURE() << "element " << kir_test::str(coord) << " at offset "
                      << offset << " holds " << kir_test::str(*value)
                      << ", expected " << kir_test::str(expected);
      }
    }

    // (3) Predicates, and (2) the offset of each loop point's coordinate.
    reports = 0;
    int64_t executed = 0;
    int64_t events = 0;
    for (const kir_test::WriteEvent& event : interpreter.writes()) {
      if (event.tensor != name) {
        continue;
      }
      ++events;
      const Coord coord = spec.logical_at(event.loop_values);
      const std::optional<int64_t> offset = layout.offsetOf(coord);
      const bool in_range = event.loops_in_extent && offset.has_value();
      if (event.executed != in_range && reports++ < kMaxReports) {
        ADD_FAILURE() << "loop point " << kir_test::str(event.loop_values)
                      << " (logical " << kir_test::str(coord) << ", "
                      << (in_range ? "in range" : "out of range") << ") is "
                      << (event.executed ? "executed" : "predicated off");
      }
      if (event.executed) {
        ++executed;
        if (in_range && event.offset != *offset && reports++ < kMaxReports) {
          ADD_FAILURE() << "loop point " << kir_test::str(event.loop_values)
                        << " (logical " << kir_test::str(coord)
                        << ") writes offset " << event.offset
                        << ", its layout says " << *offset;
        }
      }
    }
    EXPECT_EQ(executed, static_cast<int64_t>(elements.size()));
    EXPECT_GE(events, executed);
  }
  return kernel;
}

Val* indexConst(int64_t v) {
  return IrBuilder::create<Val>(v, DataType::Index);
}

// Propagates `reference`'s loop schedule to every tensor, copies its
// parallel types, and inlines as far as allowed.
void propagateAndInline(Fusion* fusion, TensorView* reference) {
  TransformPropagator propagator(reference);
  MaxLogicalDomainInfoSpanningTree(reference).traverse(&propagator);
  scheduler_utils::parallelizeAllLike(reference);
  inlineMost(fusion);
}

} // namespace
} // namespace fuser
