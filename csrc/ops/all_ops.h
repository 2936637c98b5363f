// Every user-facing op builder.
#pragma once

#include <ops/alias.h>
#include <ops/arith.h>
#include <ops/external.h>
#include <ops/factory.h>
#include <ops/indexing.h>
#include <ops/matmul.h>
#include <ops/normalization.h>
#include <ops/random.h>
#include <ops/reduction.h>
#include <ops/resize.h>
#include <ops/scan.h>
#include <ops/type_promotion.h>
