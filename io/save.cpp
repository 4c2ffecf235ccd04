#include "save.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <stdexcept>

#include "hdf5_seal.h"
#include "hdf5_reader.h"
#include "hdf5_writer.h"

namespace tinygpt {

namespace {

constexpr int64_t kVersion = 1;
constexpr const char* kModuleFormat = "tinygpt-module";
constexpr const char* kOptimizerFormat = "tinygpt-optimizer";

void put_header(const io::hdf5::GroupWriter& root, const char* format) {
  root.put("format", std::string(format));
  root.put("format_version", kVersion);
}

// Reads `path` (verified as a checkpoint is) and hands its checked tree to read(reader, format).
template <class Read>
void read_verified(const std::string& what, const std::string& path, const Read& read) {
  io::hdf5::CheckpointImage image = io::hdf5::read_checkpoint_image(path);
  const io::hdf5::File file = io::hdf5::open_checkpoint_image(std::move(image), path);
  const io::hdf5::Reader r(what, path, file);
  const io::hdf5::Group& root = r.group("/");
  const std::string format = root.attributes.count("format") ? r.text(root, "/", "format") : "";
  read(r, root, format);
}

std::vector<std::pair<std::string, Shape>> shapes_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::pair<std::string, Shape>> out;
  for (const auto& [name, t] : named) out.emplace_back(name, t.shape());
  return out;
}

// Values for `named` from datasets prefix/<name>, read into new tensors; the originals are left
// alone until every one has been read and checked.
std::vector<Tensor> read_values(const io::hdf5::Reader& r, const std::string& prefix,
                                const std::vector<std::pair<std::string, Tensor>>& named,
                                io::hdf5::FloatValues (*values_of)(const std::string&)) {
  std::vector<Tensor> values;
  for (const auto& [name, t] : named) {
    values.push_back(Tensor::empty(t.shape()));
    r.floats(prefix + "/" + name, values.back(), values_of(name));
  }
  return values;
}

void assign(const std::vector<std::pair<std::string, Tensor>>& named, const std::vector<Tensor>& values) {
  for (size_t i = 0; i < named.size(); ++i) named[i].second.copy_from_(values[i]);
}

io::hdf5::FloatValues any_finite(const std::string&) { return io::hdf5::FloatValues::finite; }

constexpr const char* kStatePrefix = "state:";

void put_saved_state(const io::hdf5::GroupWriter& root, const io::SavedState& state) {
  auto key = [](const std::string& name) {
    if (name.empty()) throw std::invalid_argument("save: a SavedState key is empty");
    return kStatePrefix + name;
  };
  for (const auto& [name, v] : state.integers) root.put(key(name).c_str(), v);
  for (const auto& [name, v] : state.numbers) root.put(key(name).c_str(), v);
  for (const auto& [name, v] : state.texts) root.put(key(name).c_str(), v);
  for (const auto& [name, v] : state.generators) root.put_words(key(name), v.data(), {4});
}

// The root's "state:" attributes, each checked for one of the four forms.
io::SavedState read_saved_state(const io::hdf5::Reader& r, const io::hdf5::Group& root) {
  io::SavedState state;
  for (const auto& [attr_name, a] : root.attributes) {
    if (attr_name.rfind(kStatePrefix, 0) != 0) continue;
    const std::string name = attr_name.substr(std::string(kStatePrefix).size());
    using Kind = io::hdf5::Attribute::Kind;
    if (a.kind == Kind::integer && a.is_unsigned && a.count() == 4 && a.shape.size() == 1) {
      Rng::State s{a.uints[0], a.uints[1], a.uints[2], a.uints[3]};
      if (s == Rng::State{}) r.fail(fmt::format("attribute '{}' holds an all-zero generator state", attr_name));
      state.generators[name] = s;
    } else if (a.kind == Kind::integer && !a.is_unsigned && a.shape.empty()) {
      state.integers[name] = a.ints.at(0);
    } else if (a.kind == Kind::floating && a.shape.empty()) {
      state.numbers[name] = a.floats.at(0);
    } else if (a.kind == Kind::text && a.shape.empty()) {
      state.texts[name] = a.texts.at(0);
    } else {
      r.fail(fmt::format("attribute '{}' is not an int64, a float64, a string or a generator state", attr_name));
    }
  }
  return state;
}
// Sums of squares (AdamW's v, RMSprop's square_avg, Adagrad's sum) are read as values >= 0.
// Second moments (AdamW's v, RMSprop's square_avg, Adagrad's sum) are never below 0.
io::hdf5::FloatValues values_of(const std::string& name) {
  for (const char* group : {"v/", "square_avg/", "sum/"})
    if (name.rfind(group, 0) == 0) return io::hdf5::FloatValues::non_negative;
  return io::hdf5::FloatValues::finite;
}

}  // namespace

void nn::save(const Module& module, const std::string& path, const io::SavedState& state) {
  io::hdf5::write_sealed(path, "module file", [&](const io::hdf5::GroupWriter& root) {
    put_header(root, kModuleFormat);
    put_saved_state(root, state);
    for (const auto& [name, p] : module.state_dict()) root.put_floats(name, p);
  });
}

io::SavedState nn::load(Module& module, const std::string& path) {
  io::SavedState state;
  read_verified("module file", path, [&](const io::hdf5::Reader& r, const io::hdf5::Group& root,
                                         const std::string& format) {
    if (format != kModuleFormat && format != "tinygpt")
      r.fail(fmt::format("not a saved module (the root attribute format is '{}', expected '{}' or a tinygpt "
                         "checkpoint)", format, kModuleFormat));
    if (format == kModuleFormat) r.integer(root, "/", "format_version", io::Range{1, 1});
    const std::string group = format == kModuleFormat ? "/" : "/model";
    const auto named = module.state_dict();
    r.check_named(group, shapes_of(named), "the module");
    io::SavedState saved = read_saved_state(r, root);
    assign(named, read_values(r, group == "/" ? "" : group, named, any_finite));
    state = std::move(saved);
  });
  return state;
}

void optim::save(const Optimizer& optimizer, const std::string& path, const io::SavedState& state) {
  io::hdf5::write_sealed(path, "optimizer file", [&](const io::hdf5::GroupWriter& root) {
    put_header(root, kOptimizerFormat);
    put_saved_state(root, state);
    root.put("kind", std::string(optimizer.kind()));
    root.put("step", optimizer.steps());
    root.put("lr", static_cast<double>(optimizer.lr()));
    std::map<std::string, io::hdf5::GroupWriter> groups;
    for (const auto& [name, t] : optimizer.state_tensors()) {
      const std::string group = name.substr(0, name.find('/'));
      if (!groups.count(group)) groups.emplace(group, root.group(group));
      groups.at(group).put_floats(name.substr(group.size() + 1), t, values_of(name));
    }
  });
}

io::SavedState optim::load(Optimizer& optimizer, const std::string& path) {
  io::SavedState state;
  read_verified("optimizer file", path, [&](const io::hdf5::Reader& r, const io::hdf5::Group& root,
                                            const std::string& format) {
    if (format != kOptimizerFormat)
      r.fail(fmt::format("not a saved optimizer (the root attribute format is '{}', expected '{}')", format,
                         kOptimizerFormat));
    r.integer(root, "/", "format_version", io::Range{1, 1});
    const std::string kind = r.text(root, "/", "kind");
    if (kind != optimizer.kind())
      r.fail(fmt::format("it holds the state of {}, not of {}", kind, optimizer.kind()));
    const int64_t steps = r.integer(root, "/", "step", io::Range{0, 1e12});
    const auto lr = static_cast<float>(r.number(root, "/", "lr", io::Range{0, 1e6}));
    // State tensors live in one group per kind of state ("m", "v", "momentum").
    const auto named = optimizer.state_tensors();
    std::map<std::string, std::vector<std::pair<std::string, Shape>>> by_group;
    for (const auto& [name, t] : named) {
      const std::string group = name.substr(0, name.find('/'));
      by_group[group].emplace_back(name.substr(group.size() + 1), t.shape());
    }
    for (const auto& [group, shapes] : by_group) r.check_named("/" + group, shapes, "this optimizer's state");
    for (const auto& [name, child] : root.groups)
      if (!by_group.count(name)) r.fail(fmt::format("group /{} is not part of this optimizer's state", name));
    if (!root.datasets.empty()) r.fail(fmt::format("dataset /{} is not part of this optimizer's state",
                                                   root.datasets.begin()->first));
    io::SavedState saved = read_saved_state(r, root);
    assign(named, read_values(r, "", named, values_of));
    optimizer.set_steps(steps);
    optimizer.set_lr(lr);
    state = std::move(saved);
  });
  return state;
}

}  // namespace tinygpt
