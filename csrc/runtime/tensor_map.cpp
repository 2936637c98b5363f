#include <runtime/tensor_map.h>

#include <layout/vectorization.h>
#include <runtime/driver_api.h>

namespace fuser {

namespace {

CUtensorMapDataType mapDataType(DataType dtype) {
  switch (dtype) {
    case DataType::BFloat16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DataType::Half:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DataType::Float:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    default:
      FUSER_ERROR("no tensor map data type for ", dtype);
  }
}

CUtensorMapSwizzle mapSwizzle(int64_t bytes) {
  switch (bytes) {
    case 128:
      return CU_TENSOR_MAP_SWIZZLE_128B;
    case 64:
      return CU_TENSOR_MAP_SWIZZLE_64B;
    case 32:
      return CU_TENSOR_MAP_SWIZZLE_32B;
    default:
      FUSER_ERROR("no swizzle of ", bytes, " bytes");
  }
}

} // namespace

CUtensorMap encodeTensorMap(const TensorMapGeometry& geometry, void* data) {
  const std::string violation =
      tensorMapViolation(geometry, pointerAlignment(data));
  FUSER_INTERNAL_ASSERT(
      violation.empty(), "tensor map ", geometry.toString(), ": ", violation);
  const size_t rank = geometry.sizes.size();
  cuuint64_t sizes[5];
  cuuint64_t strides[4];
  cuuint32_t box[5];
  cuuint32_t element_strides[5];
  for (size_t d = 0; d < rank; ++d) {
    sizes[d] = static_cast<cuuint64_t>(geometry.sizes[d]);
    box[d] = static_cast<cuuint32_t>(geometry.box[d]);
    element_strides[d] = 1;
    if (d + 1 < rank) {
      strides[d] = static_cast<cuuint64_t>(geometry.strides_bytes[d]);
    }
  }
  CUtensorMap map;
  FUSER_CUDA_SAFE_CALL(driverApi().cuTensorMapEncodeTiled(
      &map, mapDataType(geometry.dtype), static_cast<cuuint32_t>(rank), data,
      sizes, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      mapSwizzle(geometry.swizzle_bytes), CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

} // namespace fuser
