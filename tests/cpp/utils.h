// Helpers for fuser's C++ tests (CMake target fuser_test_utils):
// tensor-making shortcuts, the FuserTest fixture, and testValidate.
#pragma once

#include <fusion.h>
#include <ir/all_nodes.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace fuser {

// Contiguous tensor with the given sizes; a size of 1 makes a broadcast
// axis, -1 a symbolic extent.
TensorView* makeContigConcreteTensor(
    std::vector<int64_t> shape,
    DataType dtype = DataType::Float);
// Same sizes rule, non-contiguous (strides come from the at::Tensor).
TensorView* makeConcreteTensor(
    std::vector<int64_t> shape,
    DataType dtype = DataType::Float);
// `ndims` symbolic extents, contiguous.
TensorView* makeContigTensor(int64_t ndims, DataType dtype = DataType::Float);
// `ndims` symbolic extents, non-contiguous.
TensorView* makeSymbolicTensor(
    int64_t ndims,
    DataType dtype = DataType::Float);

// True when a CUDA device can run kernels.
bool deviceAvailable();

// Base fixture for tests that run kernels: skips, with a message, when no
// CUDA device is present.
class FuserTest : public ::testing::Test {
 protected:
  void SetUp() override;
};

// Base fixture for IR-only tests: runs everywhere.
class FuserIrTest : public ::testing::Test {};

} // namespace fuser
