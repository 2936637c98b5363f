// Replaying one tensor's transforms onto another (doc/design.md §4).
//
// The loop replay mirrors the source's loop domain (up to a position) onto
// the target through the producer-consumer logical map. The allocation
// replay, asked for with TransformReplayOptions::replayAllocation(), is done
// separately: the source's logical -> allocation exprs are replayed onto the
// target's logical IDs, so it works whether or not the source's allocation
// lies on its loop path (a sharded input's [DIDx{D}, M/D, N], the seed
// input's [i6/2, 2]). See doc/replay.md.
#pragma once

#include <id_model/logical_domain_map.h>
#include <ir/interface_nodes.h>

#include <utility>
#include <vector>

namespace fuser {

struct TransformReplayOptions {
  // Give the target the source's allocation layout (exprs, contiguity,
  // parallel types). Off by default: a cache is a different tensor with its
  // own parallel splits, and copying a layout nobody asked for surprises
  // scheduler authors. Only the matmul scheduler turns it on, for its
  // shared-memory operand caches (doc/replay.md, doc/matmul.md §4).
  bool replay_allocation = false;

  TransformReplayOptions& replayAllocation(bool value = true) {
    replay_allocation = value;
    return *this;
  }
};

class TransformReplay {
 public:
  // Makes `producer`'s loop domain mirror `consumer`'s loop axes [0, pos)
  // (pos = -1: all of them), sets it on `producer`, and returns the new
  // domain with the matching producer position.
  static std::pair<TensorDomain*, int64_t> replayPasC(
      TensorView* producer, TensorView* consumer, int64_t pos,
      const TransformReplayOptions& opt = {});

  // Makes `consumer`'s loop domain mirror `producer`'s loop axes [0, pos),
  // sets it on `consumer`, and returns it with the consumer position.
  static std::pair<TensorDomain*, int64_t> replayCasP(
      TensorView* consumer, TensorView* producer, int64_t pos,
      const TransformReplayOptions& opt = {});

  // Replays Split/Merge `exprs` of the source side onto target IDs.
  // `id_map` (source ID -> target ID) is read and extended. A merge with one
  // unmapped broadcast input forwards the mapped input when
  // `forward_broadcast` is set. Returns the exprs it could not replay.
  static std::vector<Expr*> replayExprs(
      const std::vector<Expr*>& exprs, IdMap& id_map, bool forward_broadcast);
};

} // namespace fuser
