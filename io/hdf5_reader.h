#pragma once
// Reading tinygpt's HDF5 files (checkpoints, saved modules and optimizers) from their verified
// tree (hdf5_seal.h, hdf5_tree.h): every value range-checked before it is used, with errors
// that name the file and the item: "checkpoint 'run.h5': attribute 'n_layer' of /config must be at
// most 1024 (got 300000)".
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../autograd/random.h"
#include "../autograd/tensor.h"
#include "hdf5_tree.h"
#include "numbers.h"

namespace tinygpt::io::hdf5 {

class Reader {
 public:
  // what: the kind of file, for messages ("checkpoint", "module file").
  Reader(std::string what, std::string path, const File& file);
  [[noreturn]] void fail(const std::string& problem) const;

  const Group* find_group(const std::string& path) const;  // "/optim/m"; nullptr if absent
  const Group& group(const std::string& path) const;
  const Dataset& dataset(const std::string& path) const;
  const Dataset& dataset(const std::string& path, const Shape& shape) const;  // of exactly this shape

  // Datasets `group`/<name> with exactly these names and shapes, and nothing else in `group`; the
  // first one that is missing, has another shape or is not expected is the error. `owner` says
  // whose they are in that last message ("the module").
  void check_named(const std::string& group, const std::vector<std::pair<std::string, Shape>>& expected,
                   const std::string& owner) const;
  // Float values into `into` (contiguous, of the dataset's shape), refused when not what `values`
  // allows.
  void floats(const std::string& path, const Tensor& into, FloatValues values = FloatValues::finite) const;
  std::vector<int64_t> integers(const std::string& path, const Shape& shape) const;
  // A one-dimensional dataset of n variable-length strings.
  std::vector<std::string> text_dataset(const std::string& path, int64_t n) const;
  // A one-dimensional dataset of bytes (uint8) of at most max_bytes.
  std::string bytes(const std::string& path, size_t max_bytes) const;

  const Attribute& attribute(const Group& g, const std::string& where, const char* name) const;
  std::string text(const Group& g, const std::string& where, const char* name) const;
  std::vector<std::string> texts(const Group& g, const std::string& where, const char* name) const;
  int64_t integer(const Group& g, const std::string& where, const char* name, const Range& range) const;
  // NaN is refused unless `nan` allows it (a value that may be "none yet": a run's validation loss),
  // and so are the infinities unless it allows every non-finite value (a skipped step's loss).
  enum class Nan { refused, allowed, non_finite_allowed };
  double number(const Group& g, const std::string& where, const char* name, const Range& range,
                Nan nan = Nan::refused) const;
  // n xoshiro256** states, each of 4 words and not all zero (that state only ever yields zeros).
  std::vector<Rng::State> rng_states(const Group& g, const char* name, int64_t n) const;

 private:
  const Attribute& scalar(const Group& g, const std::string& where, const char* name) const;
  void check(const std::string& problem, const char* name, const std::string& where) const;

  std::string what_, path_;
  const File& file_;
};

}  // namespace tinygpt::io::hdf5
