// NumPy's .npy (format versions 1.0 and 2.0) and .npz (a ZIP of NAME.npy
// members), for datasets and model arrays that numpy reads as they are.
//
// Supported: little-endian '<f4' '<f8' '<i4' '<i8', '|u1' and '|b1', C order.
// Reading is strict and bounded (untrusted input): the header dict must be
// exactly {'descr', 'fortran_order', 'shape'} in Python literal syntax, the
// shape product is overflow-checked and compared with the limit and with the
// bytes present before anything is allocated. .npz members may be STORED or
// DEFLATED (read through libzip); we write STORED members with a fixed
// timestamp, so equal arrays give equal bytes. docs/deformer/datasets.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

namespace charkit::deformer {

enum class NpyDType { kF4, kF8, kI4, kI8, kU1, kB1 };

/// Bytes per element of t.
std::size_t npy_item_size(NpyDType t);
/// The descr string we write ("<f4", "|u1", …).
const char* npy_descr(NpyDType t);

/// An array: dtype, shape and the raw little-endian C-order element bytes.
struct NpyArray {
  NpyDType dtype = NpyDType::kF4;
  std::vector<std::uint64_t> shape;  ///< empty = 0-d scalar (one element)
  std::vector<std::uint8_t> data;

  /// Product of shape (1 for a 0-d array). Assumes a valid array.
  std::uint64_t element_count() const;

  static NpyArray from_f32(std::vector<std::uint64_t> shape, std::span<const float> values);
  static NpyArray from_f64(std::vector<std::uint64_t> shape, std::span<const double> values);
  static NpyArray from_i32(std::vector<std::uint64_t> shape, std::span<const std::int32_t> values);
  static NpyArray from_i64(std::vector<std::uint64_t> shape, std::span<const std::int64_t> values);
  static NpyArray from_u8(std::vector<std::uint64_t> shape, std::span<const std::uint8_t> values);
  static NpyArray from_bool(std::vector<std::uint64_t> shape, std::span<const bool> values);

  /// The elements converted to float / double / int64 (bool -> 0 or 1).
  std::vector<float> to_f32() const;
  std::vector<double> to_f64() const;
  std::vector<std::int64_t> to_i64() const;
};

struct NpyLimits {
  std::uint64_t max_data_bytes = std::uint64_t{1} << 32;  ///< per array
  std::uint32_t max_header_bytes = 1 << 16;               ///< header dict length
  std::size_t max_dims = 32;
  std::size_t max_members = 4096;  ///< .npz
};

/// Parse one .npy file. Errors (offset = byte in the file): NPY_MAGIC,
/// NPY_VERSION, NPY_TRUNCATED, NPY_HEADER (dict syntax, missing or repeated
/// key), NPY_DTYPE (unsupported descr, e.g. big-endian or '<c8'),
/// NPY_FORTRAN_ORDER, NPY_SHAPE (too many dims, product overflow), NPY_LIMIT,
/// NPY_SIZE (data bytes != shape product * item size).
core::Result<NpyArray> read_npy(core::Bytes file, const NpyLimits& limits = {});

/// Serialise one array: version 1.0 unless the header needs 2.0; the data
/// starts at a multiple of 64 bytes. Errors: NPY_SIZE (data size does not
/// match the shape).
core::Result<std::vector<std::uint8_t>> write_npy(const NpyArray& array);

struct NpzMember {
  std::string name;  ///< without ".npy"
  NpyArray array;
};

/// A ZIP with one STORED member NAME.npy per array, in the given order, DOS
/// time 1980-01-01 00:00:00. Errors: NPZ_NAME (empty, repeated, '/' '\\' or
/// NUL in a name), NPY_SIZE, NPZ_TOO_LARGE (no ZIP64: every member and the
/// archive must stay below 4 GiB).
core::Result<std::vector<std::uint8_t>> write_npz(std::span<const NpzMember> members);

/// Every member NAME.npy of a .npz (STORED or DEFLATED), in archive order.
/// Errors: NPZ_ZIP (not a readable ZIP), NPZ_NAME (member not ending in .npy,
/// or repeated), NPZ_LIMIT, and read_npy's errors with location.member set.
core::Result<std::vector<NpzMember>> read_npz(core::Bytes file, const NpyLimits& limits = {});

/// File helpers (I/O errors: IO_OPEN, IO_READ, IO_WRITE).
core::Status write_file_bytes(const std::filesystem::path& path,
                              std::span<const std::uint8_t> bytes);
core::Result<std::vector<std::uint8_t>> read_file_bytes(const std::filesystem::path& path,
                                                        std::uint64_t max_bytes);

/// The companion of a two-file pair (a dataset's .npz and .json, a model's
/// .json and .npz): `path` with its extension replaced by `extension`
/// (".npz", ".json"). When that is `path` itself (`-o model.npz` for a
/// model whose weights go to model.npz), the two files would overwrite each
/// other: IO_WRITE when `writing`, else IO_OPEN, naming both.
core::Result<std::filesystem::path> companion_path(const std::filesystem::path& path,
                                                   const char* extension, bool writing);

}  // namespace charkit::deformer
