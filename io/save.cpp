#include "tinygpt/io/save.h"

#include <H5Cpp.h>
#include <fmt/format.h>

#include <map>
#include <set>
#include <stdexcept>

#include "tinygpt/io/detail/hdf5_seal.h"
#include "tinygpt/io/detail/hdf5_reader.h"
#include "tinygpt/io/detail/hdf5_writer.h"

namespace tinygpt {

namespace {

constexpr int64_t kVersion = 1;
constexpr const char* kModuleFormat = "tinygpt-module";
constexpr const char* kOptimizerFormat = "tinygpt-optimizer";

void put_header(H5::H5File& file, const char* format) {
  io::hdf5::put(file, "format", std::string(format));
  io::hdf5::put(file, "format_version", kVersion);
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
                                bool (*non_negative)(const std::string&)) {
  std::vector<Tensor> values;
  for (const auto& [name, t] : named) {
    values.push_back(Tensor::empty(t.shape()));
    r.floats(prefix + "/" + name, values.back(), non_negative(name));
  }
  return values;
}

void assign(const std::vector<std::pair<std::string, Tensor>>& named, const std::vector<Tensor>& values) {
  for (size_t i = 0; i < named.size(); ++i) named[i].second.copy_from_(values[i]);
}

bool never(const std::string&) { return false; }
// Sums of squares (AdamW's v, RMSprop's square_avg, Adagrad's sum) are read as values >= 0.
bool is_second_moment(const std::string& name) {
  for (const char* group : {"v/", "square_avg/", "sum/"})
    if (name.rfind(group, 0) == 0) return true;
  return false;
}

}  // namespace

void nn::save(const Module& module, const std::string& path) {
  io::hdf5::write_sealed(path, "module file", [&](H5::H5File& file) {
    put_header(file, kModuleFormat);
    H5::Group root = file.openGroup("/");
    for (const auto& [name, p] : module.named_parameters()) io::hdf5::put_floats(root, name, p);
  });
}

void nn::load(Module& module, const std::string& path) {
  read_verified("module file", path, [&](const io::hdf5::Reader& r, const io::hdf5::Group& root,
                                         const std::string& format) {
    if (format != kModuleFormat && format != "tinygpt")
      r.fail(fmt::format("not a saved module (the root attribute format is '{}', expected '{}' or a tinygpt "
                         "checkpoint)", format, kModuleFormat));
    if (format == kModuleFormat) r.integer(root, "/", "format_version", io::Range{1, 1});
    const std::string group = format == kModuleFormat ? "/" : "/model";
    const auto named = module.named_parameters();
    r.check_named(group, shapes_of(named), "the module");
    assign(named, read_values(r, group == "/" ? "" : group, named, never));
  });
}

void optim::save(const Optimizer& optimizer, const std::string& path) {
  io::hdf5::write_sealed(path, "optimizer file", [&](H5::H5File& file) {
    put_header(file, kOptimizerFormat);
    io::hdf5::put(file, "kind", std::string(optimizer.kind()));
    io::hdf5::put(file, "step", optimizer.steps());
    io::hdf5::put(file, "lr", static_cast<double>(optimizer.lr()));
    std::map<std::string, H5::Group> groups;
    for (const auto& [name, t] : optimizer.state_tensors()) {
      const std::string group = name.substr(0, name.find('/'));
      if (!groups.count(group)) groups.emplace(group, io::hdf5::make_group(file, "/" + group));
      io::hdf5::put_floats(groups.at(group), name.substr(group.size() + 1), t, is_second_moment(name));
    }
  });
}

void optim::load(Optimizer& optimizer, const std::string& path) {
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
    assign(named, read_values(r, "", named, is_second_moment));
    optimizer.set_steps(steps);
    optimizer.set_lr(lr);
  });
}

}  // namespace tinygpt
