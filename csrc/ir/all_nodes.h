// Every IR node and the builder.
#pragma once

#include <ir/base_nodes.h>
#include <ir/builder.h>
#include <ir/dispatch.h>
#include <ir/interface_nodes.h>
#include <ir/internal_base_nodes.h>
#include <ir/internal_nodes.h>
#include <ir/external_op.h>
#include <ir/mma_op.h>
