// TensorView: the tensor node users and schedulers work with. doc/design.md §1,
// §3.
#pragma once

#include <ir/device_mesh.h>
#include <ir/internal_base_nodes.h>

#include <optional>
#include <unordered_map>
#include <vector>

namespace fuser {

class TensorView : public Val {
 public:
  TensorView(
      TensorDomain* domain, DataType dtype,
      MemoryType memory_type = MemoryType::Local);

  TensorDomain* domain() const {
    return domain_;
  }
  // Replace the whole domain (e.g. after a replay). The new domain must
  // keep this tensor's logical IDs.
  void setDomain(TensorDomain* domain);

  // Loop axes.
  int64_t nDims() const {
    return domain_->nDims();
  }
  IterDomain* axis(int64_t i) const {
    return domain_->axis(i);
  }

  const std::vector<IterDomain*>& getRootDomain() const {
    return domain_->root();
  }
  const std::vector<IterDomain*>& getMaybeRootDomain() const {
    return domain_->maybeRoot();
  }
  const std::vector<IterDomain*>& getLogicalDomain() const {
    return domain_->logical();
  }
  const std::vector<IterDomain*>& getAllocationDomain() const {
    return domain_->allocation();
  }
  const std::vector<IterDomain*>& getMaybeAllocationDomain() const {
    return domain_->maybeAllocation();
  }
  const std::vector<IterDomain*>& getLoopDomain() const {
    return domain_->loop();
  }
  const Contiguity& getContiguity() const {
    return domain_->contiguity();
  }
  bool hasRoot() const {
    return domain_->hasRoot();
  }
  bool hasAllocation() const {
    return domain_->hasAllocation();
  }
  bool hasReduction() const {
    return domain_->hasReduction();
  }
  bool hasBroadcast() const {
    return domain_->hasBroadcast();
  }

  // Set the memory layout. Every ID must be derived from the logical
  // domain, which must be covered exactly (validateDomainEquivalence).
  void setAllocationDomain(std::vector<IterDomain*> ids, bool contiguous);
  void setAllocationDomain(std::vector<IterDomain*> ids, Contiguity contiguity);
  void setContiguity(const Contiguity& contiguity);
  void setContiguity(bool contiguous);
  void setLoopDomain(std::vector<IterDomain*> ids);

  // Loop scheduling; each returns this for chaining.
  TensorView* split(int64_t axis, int64_t factor, bool inner_split = true);
  TensorView* split(int64_t axis, Val* factor, bool inner_split = true);
  TensorView* merge(int64_t axis_o, int64_t axis_i);
  TensorView* merge(int64_t axis) {
    return merge(axis, axis + 1);
  }
  TensorView* reorder(const std::unordered_map<int64_t, int64_t>& old2new);

  MemoryType getMemoryType() const {
    return memory_type_;
  }

  // The devices the tensor lives on (doc/multidevice.md); empty unless set.
  // Its DIDx axis, if any, is split across them.
  void setDeviceMesh(const DeviceMesh& mesh) {
    mesh_ = mesh;
  }
  const DeviceMesh& getDeviceMesh() const {
    return mesh_;
  }
  bool hasDeviceMesh() const {
    return !mesh_.empty();
  }
  // Each device of the mesh holds a partial sum; the tensor is their sum
  // (doc/multidevice.md §2).
  void setPartialSum(bool partial) {
    partial_sum_ = partial;
  }
  bool isPartialSum() const {
    return partial_sum_;
  }
  void setMemoryType(MemoryType memory_type);

  // Caching (csrc/transform/caching.cpp). A cache gets this tensor's
  // allocation layout only when replay_allocation is true; see
  // TransformReplayOptions.
  TensorView* cacheBefore(
      LoadStoreOpType op_type = LoadStoreOpType::Set,
      bool replay_allocation = false);
  TensorView* cacheAfter(
      LoadStoreOpType op_type = LoadStoreOpType::Set,
      CacheOp cache_op = CacheOp::Unspecified, bool replay_allocation = false);
  TensorView* cacheFork(bool replay_allocation = false);

  // Split a reduction into a partial reduction over `axes` (returned) and a
  // final one in this tensor. csrc/transform/rfactor.cpp.
  TensorView* rFactor(const std::vector<int64_t>& axes);

  // Inlining (csrc/transform/inlining.cpp). Positions count loop axes from the
  // left.
  void inlineAt(int64_t pos, bool best_effort = false);
  int64_t getComputeAtPosition() const {
    return compute_at_pos_;
  }
  int64_t getMaxProducerPosition() const {
    return max_producer_pos_;
  }
  // Used by the inliner; users go through inlineAt.
  void setComputeAt(int64_t pos);
  void setMaxProducer(int64_t pos);

  std::string toString(int indent_size = 0) const override;
  std::string toInlineString() const override;
  // All domains and the exprs between them, one per line.
  std::string domainsToString(int indent_size = 0) const;
  void printTransforms() const;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  TensorDomain* domain_;
  MemoryType memory_type_;
  int64_t compute_at_pos_ = 0;
  int64_t max_producer_pos_ = 0;
  DeviceMesh mesh_;
  bool partial_sum_ = false;
};

// The number of logical axes of `tv`, reductions left out.
int64_t rankOf(const TensorView* tv);

} // namespace fuser
