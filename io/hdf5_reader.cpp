#include "hdf5_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace tinygpt::io::hdf5 {

namespace {

std::vector<std::string> parts(const std::string& path) {
  std::vector<std::string> out;
  for (size_t start = 1; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Runs a read that libhdf5 may refuse, as one of this file's errors.
template <class F>
void guarded(const Reader& r, F&& read) {
  try {
    read();
  } catch (const std::runtime_error& e) {
    r.fail(e.what());
  }
}

}  // namespace

Reader::Reader(std::string what, std::string path, const File& file)
    : what_(std::move(what)), path_(std::move(path)), file_(file) {}

void Reader::fail(const std::string& problem) const {
  throw std::runtime_error(fmt::format("{} '{}': {}", what_, path_, problem));
}

const Group* Reader::find_group(const std::string& path) const {
  const Group* g = &file_.root();
  for (const std::string& part : parts(path)) {
    const auto it = g->groups.find(part);
    if (it == g->groups.end()) return nullptr;
    g = &it->second;
  }
  return g;
}

const Group& Reader::group(const std::string& path) const {
  const Group* g = find_group(path);
  if (!g) fail(fmt::format("missing group {}", path));
  return *g;
}

const Dataset& Reader::dataset(const std::string& path) const {
  const size_t slash = path.rfind('/');
  if (const Group* g = find_group(path.substr(0, slash))) {
    const auto it = g->datasets.find(path.substr(slash + 1));
    if (it != g->datasets.end()) return it->second;
  }
  fail(fmt::format("missing dataset {}", path));
}

const Dataset& Reader::dataset(const std::string& path, const Shape& shape) const {
  const Dataset& d = dataset(path);
  if (!std::equal(d.shape.begin(), d.shape.end(), shape.begin(), shape.end()))
    fail(fmt::format("dataset {} has shape [{}], expected {}", path, fmt::join(d.shape, ", "), to_string(shape)));
  return d;
}

void Reader::check_named(const std::string& group, const std::vector<std::pair<std::string, Shape>>& expected,
                         const std::string& owner) const {
  const std::string prefix = group == "/" ? "" : group;
  std::set<std::string> names;
  for (const auto& [name, shape] : expected) {
    dataset(prefix + "/" + name, shape);
    names.insert(name);
  }
  const Group& g = this->group(group);
  for (const auto& [name, d] : g.datasets)
    if (!names.count(name)) fail(fmt::format("dataset {}/{} is not a parameter of {}", prefix, name, owner));
  for (const auto& [name, child] : g.groups)
    if (!names.count(name)) fail(fmt::format("group {}/{} is not part of {}", prefix, name, owner));
}

void Reader::floats(const std::string& path, const Tensor& into, FloatValues values) const {
  const Dataset& d = dataset(path, into.shape());
  float* x = into.data();
  guarded(*this, [&] { file_.read(d, path, x); });
  const int64_t n = into.numel();
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]) || (values == FloatValues::non_negative && x[i] < 0))
      fail(fmt::format("dataset {} holds {} at element {}{}", path, x[i], i,
                       std::isfinite(x[i]) ? " (a second moment cannot be negative)" : ""));
}

std::vector<int64_t> Reader::integers(const std::string& path, const Shape& shape) const {
  const Dataset& d = dataset(path, shape);
  std::vector<int64_t> v;
  guarded(*this, [&] { v = file_.read_integers(d, path); });
  return v;
}

std::string Reader::bytes(const std::string& path, size_t max_bytes) const {
  const Dataset& d = dataset(path);
  if (d.shape.size() != 1) fail(fmt::format("dataset {} must be one-dimensional", path));
  if (static_cast<uint64_t>(d.shape[0]) > max_bytes)
    fail(fmt::format("dataset {} holds {} bytes, more than {}", path, d.shape[0], max_bytes));
  std::string out;
  guarded(*this, [&] { out = file_.read_bytes(d, path); });
  return out;
}

const Attribute& Reader::attribute(const Group& g, const std::string& where, const char* name) const {
  const auto it = g.attributes.find(name);
  if (it == g.attributes.end()) fail(fmt::format("missing attribute '{}' of {}", name, where));
  return it->second;
}

const Attribute& Reader::scalar(const Group& g, const std::string& where, const char* name) const {
  const Attribute& a = attribute(g, where, name);
  if (a.count() != 1) fail(fmt::format("attribute '{}' of {} holds {} values, not one", name, where, a.count()));
  return a;
}

std::string Reader::text(const Group& g, const std::string& where, const char* name) const {
  const Attribute& a = scalar(g, where, name);
  if (a.kind != Attribute::Kind::text) fail(fmt::format("attribute '{}' of {} is not a string", name, where));
  return a.texts.at(0);
}

std::vector<std::string> Reader::text_dataset(const std::string& path, int64_t n) const {
  const Dataset& d = dataset(path, Shape{n});
  if (d.kind != Dataset::Kind::text) fail(fmt::format("dataset {} must hold variable-length strings", path));
  std::vector<std::string> out;
  guarded(*this, [&] { out = file_.read_texts(d, path); });
  return out;
}

std::vector<std::string> Reader::texts(const Group& g, const std::string& where, const char* name) const {
  const Attribute& a = attribute(g, where, name);
  if (a.kind != Attribute::Kind::text || a.shape.size() != 1)
    fail(fmt::format("attribute '{}' of {} must be a one-dimensional array of strings", name, where));
  return a.texts;
}

int64_t Reader::integer(const Group& g, const std::string& where, const char* name, const Range& range) const {
  const Attribute& a = scalar(g, where, name);
  if (a.kind == Attribute::Kind::floating)
    fail(fmt::format("attribute '{}' of {} must be an integer (got {})", name, where, a.floats.at(0)));
  if (a.kind != Attribute::Kind::integer) fail(fmt::format("attribute '{}' of {} must be an integer", name, where));
  if (a.is_unsigned && a.uints.at(0) > static_cast<uint64_t>(INT64_MAX))
    fail(fmt::format("attribute '{}' of {} {}", name, where, range_problem(a.uints.at(0), range)));
  const int64_t v = a.is_unsigned ? static_cast<int64_t>(a.uints.at(0)) : a.ints.at(0);
  check(range_problem(v, range), name, where);
  return v;
}

double Reader::number(const Group& g, const std::string& where, const char* name, const Range& range,
                      Nan nan) const {
  const Attribute& a = scalar(g, where, name);
  double v = 0;
  if (a.kind == Attribute::Kind::floating) v = a.floats.at(0);
  else if (a.kind == Attribute::Kind::integer) v = a.is_unsigned ? double(a.uints.at(0)) : double(a.ints.at(0));
  else fail(fmt::format("attribute '{}' of {} is not a number", name, where));
  const bool allowed = (nan == Nan::allowed && std::isnan(v)) || (nan == Nan::non_finite_allowed && !std::isfinite(v));
  if (!allowed) check(range_problem(v, range), name, where);
  return v;
}

std::vector<Rng::State> Reader::rng_states(const Group& g, const char* name, int64_t n) const {
  const Attribute& a = attribute(g, "/train", name);
  if (a.kind != Attribute::Kind::integer || !a.is_unsigned || a.count() != 4 * n)
    fail(fmt::format("attribute '{}' of /train must hold {} unsigned 64-bit numbers", name, 4 * n));
  std::vector<Rng::State> states(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    for (int k = 0; k < 4; ++k) states[r][k] = a.uints[static_cast<size_t>(4 * r + k)];
    if (states[r] == Rng::State{})
      fail(fmt::format("attribute '{}' of /train holds an all-zero generator state{} (xoshiro256** never leaves it)",
                       name, n > 1 ? fmt::format(" for rank {}", r) : ""));
  }
  return states;
}

void Reader::check(const std::string& problem, const char* name, const std::string& where) const {
  if (!problem.empty()) fail(fmt::format("attribute '{}' of {} {}", name, where, problem));
}

}  // namespace tinygpt::io::hdf5
