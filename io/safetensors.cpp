#include "safetensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "../data/input_file.h"
#include "../data/json.h"
#include "output_files.h"

namespace tinygpt::io {

namespace json = data::json;

namespace {

// Bytes per element of the dtypes a file may hold; only F32, F16 and BF16 are read as numbers (a
// model's other tensors, such as GPT-2's boolean attention masks, are buffers an import skips).
size_t dtype_bytes(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "BOOL" || dtype == "U8" || dtype == "I8") return 1;
  return 0;
}

bool readable(const std::string& dtype) { return dtype == "F32" || dtype == "F16" || dtype == "BF16"; }

float from_bf16(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

float from_f16(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000 | mantissa << 13);  // inf, NaN
  if (exponent != 0) return std::bit_cast<float>(sign | (exponent + 112) << 23 | mantissa << 13);
  const float tiny = static_cast<float>(mantissa) * 0x1p-24f;  // subnormal: mantissa * 2^-24, exact
  return sign ? -tiny : tiny;
}

}  // namespace

bool SafetensorsFile::next_entry(json::MemberReader& reader, std::string& name, json::Value& entry) const {
  try {
    return reader.next(name, entry);
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  data::InputFile file(path, "safetensors file");  // a regular file, checked on the descriptor
  size_ = static_cast<size_t>(file.size());
  if (size_ < 8) fail(fmt::format("{} bytes, too short for the header length", size_));
  uint64_t header_bytes = 0;
  unsigned char length[8];
  if (file.read(length, 8) != 8) fail("cut short");
  for (int k = 7; k >= 0; --k) header_bytes = header_bytes << 8 | length[k];
  if (header_bytes > kMaxHeaderBytes || header_bytes > size_ - 8)
    fail(fmt::format("the header length {} is more than the file's {} bytes or {} MiB", header_bytes, size_ - 8,
                     kMaxHeaderBytes >> 20));
  data_start_ = 8 + header_bytes;
  std::string header(header_bytes, '\0');
  if (file.read(header.data(), header_bytes) != header_bytes) fail("cut short in its header");
  // Read tensor by tensor (each entry a dozen values), so that a header holds in memory about what
  // its tensors' descriptions need, never a whole document's tree.
  json::MemberReader reader(header, "its header",
                            {.depth = 3, .values = 200'000, .string_bytes = int64_t{1} << 20,
                             .why_values = "a tensor's description, or tensors in one file"});
  const size_t data_bytes = size_ - data_start_;
  std::vector<std::pair<size_t, size_t>> ranges;
  std::string name;
  json::Value entry;
  while (next_entry(reader, name, entry)) {
    if (name == "__metadata__") continue;
    auto bad = [&](const std::string& why) { fail(fmt::format("tensor '{}': {}", name, why)); };
    const json::Value *dtype = entry.find("dtype"), *shape = entry.find("shape"), *offsets = entry.find("data_offsets");
    if (!dtype || !shape || !offsets || entry.object->size() != 3)
      bad("expected exactly the fields dtype, shape and data_offsets");
    if (dtype->type != json::Value::Type::string) bad("dtype is not a string");
    SafeTensor t;
    t.dtype = dtype->text;
    const size_t element = dtype_bytes(t.dtype);
    if (element == 0) bad(fmt::format("dtype {} is not a safetensors dtype", json::quote(t.dtype)));
    if (shape->type != json::Value::Type::array || shape->array->size() > 8) bad("shape is not an array of at most 8 sizes");
    size_t count = 1;
    for (const json::Value& d : *shape->array) {
      if (!d.is_integer() || d.number < 0 || d.number > 9.0e15) bad("shape holds something other than a size");
      t.shape.push_back(static_cast<int64_t>(d.number));
      if (d.number > 0 && count > data_bytes / static_cast<size_t>(d.number)) bad("its shape is larger than the file");
      count *= static_cast<size_t>(d.number);
    }
    if (offsets->type != json::Value::Type::array || offsets->array->size() != 2) bad("data_offsets is not [begin, end]");
    for (const json::Value& o : *offsets->array)
      if (!o.is_integer() || o.number < 0)
        bad(fmt::format("data_offsets holds {}, not a byte offset (an integer >= 0)",
                        o.type == json::Value::Type::number ? o.text
                        : o.type == json::Value::Type::string ? json::quote(o.text) : o.type_name()));
    for (const json::Value& o : *offsets->array)
      if (o.number > static_cast<double>(data_bytes))
        bad(fmt::format("data_offsets [{}, {}] reach past the {} bytes of data", offsets->array->at(0).text,
                        offsets->array->at(1).text, data_bytes));
    t.begin = static_cast<size_t>(offsets->array->at(0).number);
    t.end = static_cast<size_t>(offsets->array->at(1).number);
    if (t.end < t.begin || t.end - t.begin != count * element)
      bad(fmt::format("data_offsets [{}, {}] hold {} bytes, but {} {} values take {}", t.begin, t.end,
                      t.end >= t.begin ? t.end - t.begin : 0, count, t.dtype, count * element));
    ranges.push_back({t.begin, t.end});
    tensors_.emplace(name, std::move(t));
  }
  std::sort(ranges.begin(), ranges.end());
  size_t covered = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin != covered)
      fail(fmt::format("its data_offsets {} at byte {} of the data", begin < covered ? "overlap" : "leave a hole", covered));
    covered = end;
  }
  if (covered != data_bytes) fail(fmt::format("its tensors take {} bytes, but {} follow the header", covered, data_bytes));
  void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.descriptor(), 0);  // the file checked above
  if (m == MAP_FAILED) fail(fmt::format("cannot be mapped: {}", std::strerror(errno)));
  map_ = static_cast<const unsigned char*>(m);
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(const_cast<unsigned char*>(map_), size_);
}

void SafetensorsFile::fail(const std::string& problem) const {
  throw std::runtime_error(fmt::format("safetensors file '{}': {}", path_, problem));
}

void SafetensorsFile::expect(const std::string& name, const Shape& shape, const std::string& because) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) fail(fmt::format("tensor '{}' is missing", name));
  if (!readable(it->second.dtype)) fail(fmt::format("tensor '{}' is {}, not F32, F16 or BF16", name, it->second.dtype));
  if (it->second.shape != shape)
    fail(fmt::format("tensor '{}' has shape [{}], but {} makes it [{}]", name, fmt::join(it->second.shape, ", "), because,
                     fmt::join(shape, ", ")));
}

void SafetensorsFile::read(const std::string& name, const Shape& shape, const std::string& because,
                           std::span<float> out) const {
  expect(name, shape, because);
  const SafeTensor& t = tensors_.at(name);
  const size_t n = (t.end - t.begin) / dtype_bytes(t.dtype);  // == numel(shape): the header's sizes agree with shapes
  if (out.size() != n)
    throw std::logic_error(fmt::format("safetensors: {} floats asked of tensor '{}' of {}", out.size(), name, n));
  const unsigned char* src = map_ + data_start_ + t.begin;
  if (t.dtype == "F32") {
    std::memcpy(out.data(), src, n * 4);  // little-endian, as this machine
  } else {
    const bool bf16 = t.dtype == "BF16";
    for (size_t i = 0; i < n; ++i) {
      const auto h = static_cast<uint16_t>(src[2 * i] | src[2 * i + 1] << 8);
      out[i] = bf16 ? from_bf16(h) : from_f16(h);
    }
  }
  // The pages are clean copies of the file: dropping them frees memory, and a second read maps them again.
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t first = (data_start_ + t.begin + page - 1) / page * page, last = (data_start_ + t.end) / page * page;
  if (last > first) ::madvise(const_cast<unsigned char*>(map_) + first, last - first, MADV_DONTNEED);
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(out[i])) fail(fmt::format("tensor '{}' holds {} at element {}", name, out[i], i));
}

void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors) {
  std::vector<std::pair<std::string, Tensor>> sorted = tensors;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  size_t offset = 0;
  for (const auto& [name, t] : sorted) {
    std::string shape;
    for (int64_t d : t.shape()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    const size_t bytes = static_cast<size_t>(t.numel()) * 4;
    header += fmt::format(",{}:{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[{},{}]}}", json::quote(name),
                          shape, offset, offset + bytes);
    offset += bytes;
  }
  header += "}";
  header.resize((header.size() + 7) / 8 * 8, ' ');
  AtomicFile out(path, "safetensors file");
  const uint64_t n = header.size();
  unsigned char length[8];
  for (int k = 0; k < 8; ++k) length[k] = static_cast<unsigned char>(n >> (8 * k));
  out.write(length, 8);
  out.write(header.data(), header.size());
  for (const auto& [name, t] : sorted) {
    const Tensor c = t.contiguous();
    out.write(c.data(), static_cast<size_t>(c.numel()) * 4);
  }
  out.commit();
}

TensorReader safetensors_reader(const SafetensorsFile& st, const std::string& because) {
  return [&st, because](const FileTensor& t, const Shape& shape, std::span<float> values) {
    st.read(t.name, shape, because, values);
  };
}

}  // namespace tinygpt::io
