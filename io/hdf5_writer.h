#pragma once
// Writing tinygpt's HDF5 files (checkpoints, saved modules and optimizers, a format of one's own):
// attributes as hdf5_reader.h expects them, float tensors refused when not finite, no modification
// times (a file's bytes depend on its content alone), and the whole file written beside its
// target, sealed (hdf5_seal.h), flushed and renamed over it, so that a crash never leaves a
// half-written file where a good one was. libhdf5 stays behind this header:
//
//   io::hdf5::write_sealed("probe.h5", "probe file", [&](const io::hdf5::GroupWriter& root) {
//     root.put("format", std::string("my-probe"));
//     root.group("weights").put_floats("w", w);
//   });
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../autograd/tensor.h"
#include "hdf5_tree.h"

namespace tinygpt::io::hdf5 {

// One group of the file being written; copies refer to the same group.
class GroupWriter {
 public:
  // A new group below this one: "config", or a path of groups that exist ("optim/m").
  GroupWriter group(const std::string& name) const;

  // Scalar attributes: a fixed-length UTF-8 string (no global heap: damaged heaps crash libhdf5),
  // int64, int32 and float64.
  void put(const char* name, const std::string& value) const;
  void put(const char* name, int64_t value) const;
  void put(const char* name, double value) const;
  void put_int32(const char* name, int32_t value) const;
  // One string attribute of the values, one per line.
  void put(const char* name, const std::vector<std::string>& values) const;
  // A one-dimensional attribute of variable-length UTF-8 strings (as h5py writes a list of str).
  void put_texts(const char* name, const std::vector<std::string>& values) const;
  // Unsigned 64-bit words of the given dims (a generator's state: [4], or [ranks, 4]).
  void put_words(const std::string& name, const uint64_t* words, const std::vector<uint64_t>& dims) const;

  // Datasets. Strings as a dataset: an attribute holds at most 64 KiB (16 bytes a string).
  void put_text_dataset(const char* name, const std::vector<std::string>& values) const;
  // float32 of the tensor's shape, refused (naming it) when a value is not what `values` allows.
  void put_floats(const std::string& name, const Tensor& t, FloatValues values = FloatValues::finite) const;
  void put_ints(const std::string& name, const std::vector<int32_t>& values, const std::vector<uint64_t>& dims) const;
  void put_bytes(const std::string& name, const std::string& bytes) const;  // uint8 [n]

  struct Node;  // libhdf5's group, in hdf5_writer.cpp
  explicit GroupWriter(std::shared_ptr<Node> node);

 private:
  std::shared_ptr<Node> node_;
};

// Writes `path` through fill(root): a new file beside it, with the user block the seal goes in;
// refuses to replace a file that is not HDF5. Errors: "cannot write <what> '<path>': ...".
void write_sealed(const std::string& path, const std::string& what, const std::function<void(const GroupWriter& root)>& fill);

}  // namespace tinygpt::io::hdf5
