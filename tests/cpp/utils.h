// Helpers for fuser's C++ tests (CMake target fuser_test_utils):
// tensor-making shortcuts, the FuserTest fixture, and testValidate.
#pragma once

#include <fusion.h>
#include <ir/all_nodes.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/scheduler_types.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace fuser {

// Contiguous tensor with the given sizes; a size of 1 makes a broadcast
// axis, -1 a symbolic extent.
TensorView* makeContigConcreteTensor(
    std::vector<int64_t> shape, DataType dtype = DataType::Float);
// Same sizes rule, non-contiguous (strides come from the at::Tensor).
TensorView* makeConcreteTensor(
    std::vector<int64_t> shape, DataType dtype = DataType::Float);
// `ndims` symbolic extents, contiguous.
TensorView* makeContigTensor(int64_t ndims, DataType dtype = DataType::Float);
// `ndims` symbolic extents, non-contiguous.
TensorView* makeSymbolicTensor(int64_t ndims, DataType dtype = DataType::Float);

// What the kernel compiler prepends to a kernel (csrc/codegen/codegen.cpp),
// with every runtime/ header: for hand-written kernels compiled with NVRTC
// (64-bit indices).
std::string runtimePreamble();

// A copy of `fusion` scheduled as the runtime would for `inputs` (CPU
// tensors suffice) and, unless the scheduler is ExprEval, its kernel
// compiled with NVRTC for sm_90 (a compile error throws).
struct CompiledSchedule {
  SchedulerType type = SchedulerType::ExprEval;
  std::string code; // empty for ExprEval
};
CompiledSchedule scheduleAndCompile(
    const Fusion& fusion, const std::vector<c10::IValue>& inputs);

// `source` compiled with NVRTC for sm_90a with ptxas's report (registers,
// stack frame, spills) and its PTX. On the GPU machine NVRTC has returned
// an empty report, now and then within the suite and every time in a run
// of two of these tests alone (cause unknown); the compile is repeated
// then (at most three times).
KernelInspection inspectForSm90a(const std::string& source);

// The memory of the current GPU in bytes (0 without one).
int64_t deviceMemoryBytes();

// Standard normal values of `shape` on the current CUDA device.
at::Tensor cudaRandn(const std::vector<int64_t>& shape);

// Skips a test whose tensors (inputs, outputs and the ATen reference's
// intermediates) need a GPU of at least `gib` GiB.
#define FUSER_SKIP_UNLESS_DEVICE_MEMORY_GIB(gib)                         \
  if (::fuser::deviceMemoryBytes() < (int64_t{gib} << 30)) {             \
    GTEST_SKIP() << "needs a GPU of at least " << (gib)                  \
                 << " GiB (its tensors and the ATen reference's); this " \
                 << "one has " << (::fuser::deviceMemoryBytes() >> 30)   \
                 << " GiB";                                              \
  }

// Whether `inspection` holds ptxas's report.
bool hasPtxasReport(const KernelInspection& inspection);

// Skips the test where NVRTC gives no ptxas report: its register and
// spill checks run where it does (the CPU suite, in CI).
#define FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection)                \
  if (!::fuser::hasPtxasReport(inspection)) {                      \
    GTEST_SKIP() << "NVRTC gave no ptxas report on this machine; " \
                    "the register checks run where it does (CI)";  \
  }

// Passes when the report of inspectForSm90a says no stack frame and no
// spills; else fails with the report.
::testing::AssertionResult keepsEverythingInRegisters(
    const KernelInspection& inspection);

// The __launch_bounds__(...) of a generated kernel's declaration (empty
// when it has none), with the blocks per SM its kMinBlocksPerSmMacro
// defaults to written out: "__launch_bounds__(256, 4)".
std::string launchBoundsOf(const std::string& code);

// Sets (or, with nullopt, unsets) an environment variable for its scope.
// The test binary starts with FUSER_KERNEL_CACHE_DIR=off unless the caller
// set it: tests count compilations and leave the user's cache alone.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// True when a CUDA device can run kernels.
bool deviceAvailable();

// Base fixture for tests that run kernels: skips, with a message, when no
// CUDA device is present, and fails a test in which a kernel failed and
// its segment ran with ATen instead (kernelFallbackCount,
// runtime/fusion_kernel_runtime.h), so that the fallback hides no bug.
class FuserTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // For a test that makes kernels fail on purpose: the fallbacks so far
  // are expected.
  void expectKernelFallbacks();

 private:
  int64_t fallbacks_at_start_ = 0;
};

// Base fixture for IR-only tests: runs everywhere.
class FuserIrTest : public ::testing::Test {};

// Checks `outputs` (what the fusion produced for `inputs`) against an ATen
// evaluation of `fusion` on the same inputs (csrc/runtime/aten_evaluator.h),
// run on the inputs' device. Each output must have the reference's sizes and
// dtype and match it within a dtype-aware tolerance |got - expected| <=
// atol + rtol * |expected|: float 1e-5, half 1e-3, bfloat16 1e-2, double
// 1e-12 (both atol and rtol), scaled by sqrt(n) where n is the largest
// number of elements a reduction feeding the output combines; integers and
// bools must be equal; complex values part by part; NaNs must be NaN
// in both. A mismatch is a gtest
// non-fatal failure reported at file:line, naming the output, the max abs
// error and the worst element (coordinates, both values); `err_msg` is
// appended.
//
// `inputs` as a braced list ({t0, 2.0}) or a std::vector<c10::IValue>
// selects this overload; a std::vector<at::Tensor> lvalue the one below.
void testValidate(
    Fusion* fusion, const std::vector<at::Tensor>& outputs,
    const std::vector<c10::IValue>& inputs, int line, const char* file,
    std::string err_msg = "");

// For inputs held in a std::vector<at::Tensor>. A template so that a braced
// list (from which T cannot be deduced) never makes the call ambiguous.
template <typename T, std::enable_if_t<std::is_same_v<T, at::Tensor>, int> = 0>
void testValidate(
    Fusion* fusion, const std::vector<at::Tensor>& outputs,
    const std::vector<T>& inputs, int line, const char* file,
    std::string err_msg = "") {
  testValidate(
      fusion, outputs, std::vector<c10::IValue>(inputs.begin(), inputs.end()),
      line, file, std::move(err_msg));
}

// Checks `outputs` against given `expected_outputs` (instead of an ATen
// evaluation of the fusion) with the same tolerances; `fusion` and
// `inputs` size the tolerances.
void testValidate(
    Fusion* fusion, const std::vector<at::Tensor>& outputs,
    const std::vector<c10::IValue>& inputs,
    const std::vector<at::Tensor>& expected_outputs, int line, const char* file,
    std::string err_msg = "");

// What testValidate would report for `outputs`, without failing: one line
// per output that differs from the ATen evaluation; "" when all match.
std::string referenceMismatches(
    Fusion* fusion, const std::vector<at::Tensor>& outputs,
    const std::vector<c10::IValue>& inputs);

} // namespace fuser
