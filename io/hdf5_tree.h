#pragma once
// An HDF5 file, opened by libhdf5 from bytes already in memory and read into a tree of plain
// values: groups, attributes (integers, floats, strings) and datasets (shape and type; their data
// on request). It reads only what it can bound: hard links (no soft or external links, no data
// kept in other files), at most 32 levels and 100,000 objects, and every attribute and dataset
// size is checked against the file's size before anything is allocated. libhdf5 itself can still
// crash or hang on damaged metadata: hdf5_seal.h walks unverified bytes in a child process first
// (read_everything).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tinygpt/data/input_file.h"

namespace tinygpt::io::hdf5 {

class Handle;  // a libhdf5 identifier, closed when the last copy goes

// Which float values a dataset may hold, written or read: any finite value, or finite and not
// below 0 (a second moment, a variance).
enum class FloatValues { finite, non_negative };

struct Attribute {
  enum class Kind { integer, floating, text, other };
  Kind kind = Kind::other;
  std::vector<int64_t> shape;      // empty: a scalar
  bool is_unsigned = false;        // integer: which of ints / uints holds the values
  std::vector<int64_t> ints;
  std::vector<uint64_t> uints;
  std::vector<double> floats;      // floating (any width, as double)
  std::vector<std::string> texts;  // text (fixed-length or variable-length strings)
  int64_t count() const;           // number of elements
};

struct Dataset {
  enum class Kind { integer, floating, text, other };  // text: variable-length strings
  Kind kind = Kind::other;
  size_t element_bytes = 0;
  bool is_unsigned = false;  // an integer dataset of unsigned values
  std::vector<int64_t> shape;
  std::map<std::string, Attribute> attributes;
  std::string problem;  // why its data cannot be read (compressed, kept in another file, too large); empty: none
  std::shared_ptr<Handle> handle;
  int64_t count() const;
};

struct Group {
  std::map<std::string, Attribute> attributes;
  std::map<std::string, Group> groups;
  std::map<std::string, Dataset> datasets;
};

class File {
 public:
  // Opens `image` (a whole HDF5 file, user block included) and reads its tree. Throws
  // std::runtime_error naming the item and libhdf5's innermost complaint.
  explicit File(data::FileBytes image);
  // Opens the file `verified` holds open (its seal checked: hdf5_seal.h), read by libhdf5 from disk
  // as datasets are asked for, so that memory holds only what is read.
  explicit File(const data::InputFile& verified);
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  const Group& root() const { return root_; }
  // A dataset's values converted to float or int64, exactly count() of them into `out`.
  void read(const Dataset& d, const std::string& where, float* out) const;
  std::vector<int64_t> read_integers(const Dataset& d, const std::string& where) const;
  // The bytes of a dataset of unsigned 8-bit integers (any other type is refused).
  std::string read_bytes(const Dataset& d, const std::string& where) const;
  // The strings of a dataset of variable-length strings.
  std::vector<std::string> read_texts(const Dataset& d, const std::string& where) const;
  // The data of every readable dataset, thrown away: libhdf5 touches all it would ever touch.
  void read_everything() const;

 private:
  void read_tree(int64_t file_bytes);
  data::FileBytes image_;  // libhdf5 reads these bytes in place (when opened from them): they outlive every handle below
  std::shared_ptr<Handle> file_;
  Group root_;
};

}  // namespace tinygpt::io::hdf5
