#pragma once
// An HDF5 file read into a tree of plain values: groups, attributes (integers, floats, strings) and
// datasets (shape and type; their values on request). libhdf5 is not written to survive hostile
// files, so it never parses one in this process: a forked child, under a time and memory limit
// (io/detail/isolated.h), walks the file with libhdf5 and hands back a description: the tree, and
// for each dataset either where its raw values lie in the file (a contiguous dataset of a plain
// integer or IEEE float type: read here with pread and converted here) or the values themselves,
// read by libhdf5 there (variable-length strings, compact or chunked storage, other types). This
// process decodes that description with every count and size checked, and reads values only
// inside the file's bounds: whatever a file does to libhdf5 ends in an error here. The walk reads
// only what it can bound: hard links (no soft or external links, no data kept in other files), at
// most 32 levels and 100,000 objects, and every attribute and dataset size is checked against the
// file's size before anything is allocated.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../data/input_file.h"

namespace tinygpt::io::hdf5 {

struct Stored;  // where a dataset's values are: in the file, or read by the child (hdf5_tree.cpp)

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
  std::shared_ptr<const Stored> stored;  // absent when `problem` is set
  int64_t count() const;
};

struct Group {
  std::map<std::string, Attribute> attributes;
  std::map<std::string, Group> groups;
  std::map<std::string, Dataset> datasets;
};

class File {
 public:
  // Reads the tree of `image` (a whole HDF5 file, user block included). Throws std::runtime_error
  // naming the item and libhdf5's innermost complaint, or how the child ended ("libhdf5 crashed
  // (signal 11, SIGSEGV) reading the file's structure").
  explicit File(data::FileBytes image);
  // The same for the file `opened` holds open, whose values are read from disk as datasets are
  // asked for, so that memory holds only what is read.
  explicit File(const data::InputFile& opened);
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

 private:
  void describe(const std::string& where_in_child);
  // Raw bytes [offset, offset + n) of the file into `out`, refused outside the file.
  void read_raw(int64_t offset, size_t n, char* out, const std::string& where) const;
  // The raw values of a dataset kept in the file, a megabyte at a time: convert(bytes, first, count).
  void for_raw_values(const Dataset& d, const std::string& where,
                      const std::function<void(const char*, int64_t, int64_t)>& convert) const;
  data::FileBytes image_;  // the file's bytes, when it was read whole
  int descriptor_ = -1;    // otherwise the file, open (a duplicate of the caller's descriptor)
  int64_t file_bytes_ = 0;
  Group root_;
};

}  // namespace tinygpt::io::hdf5
