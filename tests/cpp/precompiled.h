// Headers that nearly every test file includes and that rarely change,
// compiled once for the test binary (target_precompile_headers in
// CMakeLists.txt). Test files still include what they use.
#pragma once

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>
