#include "hdf5_description.h"

#include <fmt/format.h>

#include <bit>
#include <stdexcept>
#include <type_traits>

namespace tinygpt::io::hdf5 {

namespace {

// Little-endian words and length-prefixed strings.
class Encoder {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void text(const std::string& s) { u64(s.size()), out_ += s; }
  void shape(const std::vector<int64_t>& s) {
    u64(s.size());
    for (int64_t d : s) u64(static_cast<uint64_t>(d));
  }
  template <class T>
  void values(const std::vector<T>& v) {
    u64(v.size());
    for (const T& x : v) {
      if constexpr (std::is_same_v<T, std::string>) text(x);
      else if constexpr (std::is_same_v<T, double>) u64(std::bit_cast<uint64_t>(x));
      else u64(static_cast<uint64_t>(x));
    }
  }
  void attributes(const std::map<std::string, Attribute>& as) {
    u64(as.size());
    for (const auto& [name, a] : as) {
      text(name), u8(static_cast<uint8_t>(a.kind)), shape(a.shape), u8(a.is_unsigned);
      values(a.ints), values(a.uints), values(a.floats), values(a.texts);
    }
  }
  void dataset(const Dataset& d) {
    u8(static_cast<uint8_t>(d.kind)), u64(d.element_bytes), u8(d.is_unsigned), shape(d.shape);
    attributes(d.attributes);
    text(d.problem);
    u8(d.stored != nullptr);
    if (!d.stored) return;
    const Stored& s = *d.stored;
    u8(static_cast<uint8_t>(s.where)), u64(static_cast<uint64_t>(s.offset)), u8(s.big_endian);
    values(s.floats), values(s.ints), values(s.texts);
  }
  void group(const Group& g) {
    attributes(g.attributes);
    u64(g.groups.size());
    for (const auto& [name, child] : g.groups) text(name), group(child);
    u64(g.datasets.size());
    for (const auto& [name, d] : g.datasets) text(name), dataset(d);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(fmt::format(
        "the child process that walked the file with libhdf5 sent a malformed description ({} at byte {})", what, at_));
  }
  uint8_t u8(uint8_t max) {
    need(1);
    const auto v = static_cast<uint8_t>(in_[at_++]);
    if (v > max) fail(fmt::format("{} where at most {} belongs", v, max));
    return v;
  }
  uint64_t u64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(in_[at_ + i])} << (8 * i);
    at_ += 8;
    return v;
  }
  // A count of items that take at least `each` bytes apiece: no more than the bytes left hold.
  size_t count(size_t each) {
    const uint64_t n = u64();
    if (n > (in_.size() - at_) / each) fail(fmt::format("a count of {} that the rest cannot hold", n));
    return static_cast<size_t>(n);
  }
  std::string text() {
    const size_t n = count(1);
    std::string s(in_.substr(at_, n));
    at_ += n;
    return s;
  }
  // A shape of at most kMaxRank dimensions; `elements` gets their product.
  std::vector<int64_t> shape(int64_t& elements) {
    const size_t rank = count(8);
    if (rank > kMaxRank) fail(fmt::format("a shape of {} dimensions", rank));
    std::vector<int64_t> s(rank);
    elements = 1;
    for (int64_t& d : s) {
      const uint64_t v = u64();
      if (v > uint64_t{INT64_MAX} || __builtin_mul_overflow(elements, static_cast<int64_t>(v), &elements))
        fail("a shape whose element count overflows");
      d = static_cast<int64_t>(v);
    }
    return s;
  }
  template <class T>
  std::vector<T> values() {
    std::vector<T> v(count(8));
    for (T& x : v) {
      if constexpr (std::is_same_v<T, std::string>) x = text();
      else if constexpr (std::is_same_v<T, double>) x = std::bit_cast<double>(u64());
      else x = static_cast<T>(u64());
    }
    return v;
  }
  std::map<std::string, Attribute> attributes() {
    std::map<std::string, Attribute> out;
    for (size_t n = count(8); n-- > 0;) {
      std::string name = text();
      Attribute a;
      a.kind = static_cast<Attribute::Kind>(u8(3));
      int64_t elements = 0;
      a.shape = shape(elements);
      a.is_unsigned = u8(1) != 0;
      a.ints = values<int64_t>(), a.uints = values<uint64_t>(), a.floats = values<double>();
      a.texts = values<std::string>();
      const auto held = [&](size_t ints, size_t uints, size_t floats, size_t texts) {
        return a.ints.size() == ints && a.uints.size() == uints && a.floats.size() == floats && a.texts.size() == texts;
      };
      const auto e = static_cast<size_t>(elements);
      using K = Attribute::Kind;
      const bool fits = a.kind == K::integer ? (a.is_unsigned ? held(0, e, 0, 0) : held(e, 0, 0, 0))
                        : a.kind == K::floating ? held(0, 0, e, 0)
                        : a.kind == K::text     ? held(0, 0, 0, e)
                                                : held(0, 0, 0, 0);
      if (!fits) fail(fmt::format("attribute '{}' whose values do not match its shape and kind", name));
      if (!out.emplace(std::move(name), std::move(a)).second) fail("two attributes of one name");
    }
    return out;
  }
  Dataset dataset() {
    Dataset d;
    d.kind = static_cast<Dataset::Kind>(u8(3));
    d.element_bytes = static_cast<size_t>(u64());
    d.is_unsigned = u8(1) != 0;
    int64_t elements = 0;
    d.shape = shape(elements);
    d.attributes = attributes();
    d.problem = text();
    if (u8(1) == 0) return d;
    auto s = std::make_shared<Stored>();
    s->where = static_cast<Stored::Where>(u8(1));
    s->offset = static_cast<int64_t>(u64());
    s->big_endian = u8(1) != 0;
    s->floats = values<double>(), s->ints = values<int64_t>(), s->texts = values<std::string>();
    using K = Dataset::Kind;
    const auto e = static_cast<size_t>(elements);
    const size_t b = d.element_bytes;
    const bool fits =
        !d.problem.empty() ? false
        : s->where == Stored::Where::file
            ? s->offset >= 0 && s->floats.empty() && s->ints.empty() && s->texts.empty() &&
                  ((d.kind == K::integer && (b == 1 || b == 2 || b == 4 || b == 8)) ||
                   (d.kind == K::floating && (b == 4 || b == 8)))
            : (d.kind == K::floating && s->floats.size() == e && s->ints.empty() && s->texts.empty()) ||
                  (d.kind == K::integer && s->ints.size() == e && s->floats.empty() && s->texts.empty()) ||
                  (d.kind == K::text && s->texts.size() == e && s->floats.empty() && s->ints.empty());
    if (!fits) fail("a dataset whose storage does not match its shape and kind");
    d.stored = std::move(s);
    return d;
  }
  Group group(int depth) {
    if (depth > kMaxWalkDepth + 1) fail("groups nested too deep");
    Group g;
    g.attributes = attributes();
    for (size_t n = count(8); n-- > 0;) {
      std::string name = text();
      if (!g.groups.emplace(std::move(name), group(depth + 1)).second) fail("two groups of one name");
    }
    for (size_t n = count(8); n-- > 0;) {
      std::string name = text();
      if (!g.datasets.emplace(std::move(name), dataset()).second) fail("two datasets of one name");
    }
    return g;
  }
  void end() const {
    if (at_ != in_.size()) fail("bytes after the end");
  }

 private:
  void need(size_t n) const {
    if (in_.size() - at_ < n) fail("an end before the end");
  }
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace

std::string encode(const Group& root) {
  Encoder e;
  e.group(root);
  return e.take();
}

Group decode(std::string_view description) {
  Decoder d(description);
  Group root = d.group(0);
  d.end();
  return root;
}

}  // namespace tinygpt::io::hdf5
