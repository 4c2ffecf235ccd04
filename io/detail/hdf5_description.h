#pragma once
// The description of an HDF5 file that the child process walking it with libhdf5 hands back
// (hdf5_tree.h): its tree, and where each dataset's values are. Decoding trusts nothing: every
// count is checked against the bytes left, every enum against its range, every vector against
// its shape, so that a child that libhdf5 let a file take over can send only a wrong answer, never
// one that makes this process read out of bounds or allocate without limit.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../hdf5_tree.h"

namespace tinygpt::io::hdf5 {

// The walk's bounds (hdf5_tree.cpp), which decoding checks again.
inline constexpr int kMaxWalkDepth = 32;  // levels of groups
inline constexpr int kMaxRank = 8;        // dimensions of a dataspace

struct Stored {
  enum class Where { file, values };
  Where where = Where::values;
  int64_t offset = 0;              // file: the offset of its first value's first byte
  bool big_endian = false;         // file: the values' byte order
  std::vector<double> floats;      // values (floating), read by libhdf5 in the child
  std::vector<int64_t> ints;       // values (integer), as libhdf5 converts them to int64
  std::vector<std::string> texts;  // values (text)
};

std::string encode(const Group& root);
// Throws std::runtime_error naming what is malformed.
Group decode(std::string_view description);

}  // namespace tinygpt::io::hdf5
