#pragma once
// safetensors (Hugging Face's tensor file): an 8-byte little-endian header length N, N bytes of
// JSON {"<name>": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then
// the tensors' bytes, offsets counted from the end of the header. Reading maps the file and checks
// the whole header before any tensor is used: safetensors dtypes, sizes that agree with shapes, offsets
// inside the file that cover the data exactly once (no overlaps, no holes).
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../autograd/tensor.h"
#include "weight_map.h"

namespace tinygpt::data::json {
class MemberReader;
struct Value;
}  // namespace tinygpt::data::json

namespace tinygpt::io {

struct SafeTensor {
  std::string dtype;  // "F32", "F16" or "BF16" (read as floats); others ("BOOL", "I64", ...) are refused when read
  Shape shape;
  size_t begin = 0, end = 0;  // byte range within the data
};

class SafetensorsFile {
 public:
  static constexpr size_t kMaxHeaderBytes = size_t{100} << 20;  // as Hugging Face's reader
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::map<std::string, SafeTensor>& tensors() const { return tensors_; }
  // The one check on a tensor before its bytes are used: it is there, readable as floats (F32,
  // F16, BF16) and of shape `shape`; otherwise fail() says which, "... but {because} makes it
  // [shape]". An import calls it for every tensor before it allocates the model.
  void expect(const std::string& name, const Shape& shape, const std::string& because) const;
  // expect(), then the tensor's values as float32 into `out` (exactly the shape's numel floats; F16
  // and BF16 widened exactly), refusing a NaN or infinity with the element's index. Its pages are
  // given back to the kernel afterwards: a model is imported in about its own size.
  void read(const std::string& name, const Shape& shape, const std::string& because, std::span<float> out) const;
  [[noreturn]] void fail(const std::string& problem) const;
  const std::string& path() const { return path_; }

 private:
  bool next_entry(data::json::MemberReader& reader, std::string& name, data::json::Value& entry) const;
  std::string path_;
  const unsigned char* map_ = nullptr;
  size_t size_ = 0, data_start_ = 0;
  std::map<std::string, SafeTensor> tensors_;
};

// A weight map's reader (weight_map.h) over `st`: each tensor by its name, checked against the
// shape `because` implies ("config.json").
TensorReader safetensors_reader(const SafetensorsFile& st, const std::string& because);

// Writes float32 tensors under their names (sorted, as Hugging Face writes them) with
// __metadata__ {"format": "pt"}; the header is padded with spaces to a multiple of 8 bytes.
void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors);

}  // namespace tinygpt::io
