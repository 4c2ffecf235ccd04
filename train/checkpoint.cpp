#include "tinygpt/train/checkpoint.h"

#include <H5Cpp.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/char_tokenizer.h"
#include "tinygpt/train/checkpoint_file.h"
#include "tinygpt/train/output_files.h"

namespace tinygpt::train {

namespace {

constexpr int kFormatVersion = 1;
constexpr double kMany = 1e12;
constexpr int64_t kMaxRanks = 65536;

// ---- writing -----------------------------------------------------------------------------------

// Fixed-length UTF-8 strings: variable-length ones live in HDF5's global heap, which damaged files
// turn into crashes inside libhdf5.
H5::StrType string_type(const std::string& value) {
  H5::StrType t(H5::PredType::C_S1, std::max<size_t>(1, value.size()));
  t.setCset(H5T_CSET_UTF8);
  t.setStrpad(H5T_STR_NULLPAD);
  return t;
}

void put(H5::H5Object& at, const char* name, const std::string& value) {
  const H5::StrType type = string_type(value);
  std::string padded = value;
  padded.resize(type.getSize(), '\0');
  at.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, padded.data());
}
void put(H5::H5Object& at, const char* name, int64_t value) {
  at.createAttribute(name, H5::PredType::STD_I64LE, H5::DataSpace(H5S_SCALAR)).write(H5::PredType::NATIVE_INT64, &value);
}
void put(H5::H5Object& at, const char* name, double value) {
  at.createAttribute(name, H5::PredType::IEEE_F64LE, H5::DataSpace(H5S_SCALAR)).write(H5::PredType::NATIVE_DOUBLE, &value);
}
void put(H5::H5Object& at, const char* name, const std::vector<std::string>& values) {
  std::string joined;  // one file name per line
  for (const auto& v : values) joined += (joined.empty() ? "" : "\n") + v;
  put(at, name, joined);
}

// A float tensor, refused when it holds NaN or infinity (a diverged run must not replace a good
// checkpoint), or negative values where it must not (second moments).
void put_floats(H5::Group& g, const std::string& name, const Tensor& t, bool non_negative = false) {
  const Tensor c = t.contiguous();
  const float* x = c.data();
  const int64_t n = c.numel();
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]) || (non_negative && x[i] < 0))
      throw std::runtime_error(fmt::format("{} holds {} at element {} (the run diverged)", name, x[i], i));
  std::vector<hsize_t> dims(t.shape().begin(), t.shape().end());
  H5::DataSet ds = g.createDataSet(name, H5::PredType::IEEE_F32LE, H5::DataSpace(static_cast<int>(dims.size()), dims.data()));
  ds.write(x, H5::PredType::NATIVE_FLOAT);
}

void put_ints(H5::Group& g, const std::string& name, const std::vector<int32_t>& values, std::vector<hsize_t> dims) {
  H5::DataSet ds = g.createDataSet(name, H5::PredType::STD_I32LE, H5::DataSpace(static_cast<int>(dims.size()), dims.data()));
  if (!values.empty()) ds.write(values.data(), H5::PredType::NATIVE_INT32);
}

void write_tokenizer(H5::H5File& file, const data::Tokenizer& tokenizer) {
  H5::Group g = file.createGroup("/tokenizer");
  put(g, "kind", std::string(tokenizer.kind()));
  if (const auto* c = dynamic_cast<const data::CharTokenizer*>(&tokenizer)) {
    put_ints(g, "vocab", c->code_points(), {c->code_points().size()});
  } else if (const auto* b = dynamic_cast<const data::BpeTokenizer*>(&tokenizer)) {
    std::vector<int32_t> flat;
    for (auto [x, y] : b->merges()) flat.push_back(x), flat.push_back(y);
    put_ints(g, "merges", flat, {b->merges().size(), 2});
    put(g, "split", std::string(data::split_name(b->split())));
  }
}

void write_train_state(H5::H5File& file, const TrainState& s) {
  H5::Group g = file.createGroup("/train");
  put(g, "iteration", s.iteration);
  std::vector<hsize_t> four{4};
  g.createAttribute("rng_state", H5::PredType::STD_U64LE, H5::DataSpace(1, four.data()))
      .write(H5::PredType::NATIVE_UINT64, s.sampler_states.at(0).data());
  put(g, "world_size", static_cast<int64_t>(s.sampler_states.size()));
  if (s.sampler_states.size() > 1) {
    std::vector<hsize_t> dims{s.sampler_states.size(), 4};
    g.createAttribute("rank_rng_states", H5::PredType::STD_U64LE, H5::DataSpace(2, dims.data()))
        .write(H5::PredType::NATIVE_UINT64, s.sampler_states.data());
  }
  put(g, "dropout_counter", static_cast<int64_t>(s.dropout_counter));
  put(g, "train_loss", s.train_loss);
  put(g, "val_loss", s.val_loss);
  put(g, "tokens_seen", s.tokens_seen);
  put(g, "seconds", s.seconds);
  put(g, "train_tokens", s.train_tokens);
  put(g, "val_tokens", s.val_tokens);
  TrainOptions o = s.options;
  for_each_option(o, [&](const char* name, auto& field, const char*, const Range&) { put(g, name, field); });
}

void write_file(const std::string& path, const nn::GPT& model, const data::Tokenizer& tokenizer,
                const optim::AdamW* optimizer, const TrainState* state) {
  H5::FileCreatPropList create;
  create.setUserblock(kUserBlockBytes);  // room for the seal
  H5::H5File file(path, H5F_ACC_TRUNC, create);
  put(file, "format", std::string("tinygpt"));
  file.createAttribute("format_version", H5::PredType::STD_I32LE, H5::DataSpace(H5S_SCALAR))
      .write(H5::PredType::NATIVE_INT, &kFormatVersion);
  H5::Group config = file.createGroup("/config");
  const nn::GPTConfig& c = model.config();
  put(config, "vocab_size", c.vocab_size);
  put(config, "block_size", c.block_size);
  put(config, "n_layer", c.n_layer);
  put(config, "n_head", c.n_head);
  put(config, "n_embd", c.n_embd);
  H5::Group weights = file.createGroup("/model");
  for (const auto& [name, p] : model.named_parameters()) put_floats(weights, name, p);
  write_tokenizer(file, tokenizer);
  if (optimizer) {
    H5::Group g = file.createGroup("/optim");
    put(g, "step", optimizer->steps());
    put(g, "lr", static_cast<double>(optimizer->options().lr));
    put(g, "beta1", static_cast<double>(optimizer->options().beta1));
    put(g, "beta2", static_cast<double>(optimizer->options().beta2));
    put(g, "eps", static_cast<double>(optimizer->options().eps));
    put(g, "weight_decay", static_cast<double>(optimizer->options().weight_decay));
    H5::Group m = g.createGroup("m"), v = g.createGroup("v");
    for (const auto& s : optimizer->state()) put_floats(m, s.name, s.m), put_floats(v, s.name, s.v, true);
  }
  if (state) write_train_state(file, *state);
  file.close();
}

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// A new, uniquely named file beside `target` (".run.h5.tmp-XXXXXX"): nothing that exists is reused.
std::string temporary_beside(const std::filesystem::path& target) {
  const auto dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::string name = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw std::runtime_error(std::strerror(errno));
  const mode_t mask = ::umask(0);  // mkstemp makes it private; the checkpoint gets the usual mode
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  return name;
}

// ---- reading -----------------------------------------------------------------------------------

// Reads one checkpoint's tree, range-checking every value, with errors that name the file and item.
class Reader {
 public:
  Reader(std::string path, const hdf5::File& file) : path_(std::move(path)), file_(file) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(fmt::format("checkpoint '{}': {}", path_, what));
  }

  const hdf5::Group* find_group(const std::string& path) const {
    const hdf5::Group* g = &file_.root();
    for (const std::string& part : parts(path)) {
      const auto it = g->groups.find(part);
      if (it == g->groups.end()) return nullptr;
      g = &it->second;
    }
    return g;
  }
  const hdf5::Group& group(const std::string& path) const {
    const hdf5::Group* g = find_group(path);
    if (!g) fail(fmt::format("missing group {}", path));
    return *g;
  }
  // A dataset of exactly this shape.
  const hdf5::Dataset& dataset(const std::string& path, const Shape& shape) const {
    const hdf5::Dataset& d = dataset(path);
    if (!std::equal(d.shape.begin(), d.shape.end(), shape.begin(), shape.end()))
      fail(fmt::format("dataset {} has shape [{}], expected {}", path, fmt::join(d.shape, ", "), to_string(shape)));
    return d;
  }
  const hdf5::Dataset& dataset(const std::string& path) const {
    const size_t slash = path.rfind('/');
    if (const hdf5::Group* g = find_group(path.substr(0, slash))) {
      const auto it = g->datasets.find(path.substr(slash + 1));
      if (it != g->datasets.end()) return it->second;
    }
    fail(fmt::format("missing dataset {}", path));
  }

  // Float values, refused when not finite (or negative, where they must not be).
  void floats(const std::string& path, const Tensor& into, bool non_negative = false) const {
    const hdf5::Dataset& d = dataset(path, into.shape());
    float* x = into.data();
    guard([&] { file_.read(d, path, x); });
    const int64_t n = into.numel();
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(x[i]) || (non_negative && x[i] < 0))
        fail(fmt::format("dataset {} holds {} at element {}{}", path, x[i], i,
                         std::isfinite(x[i]) ? " (a second moment cannot be negative)" : ""));
  }
  std::vector<int64_t> integers(const std::string& path, const Shape& shape) const {
    const hdf5::Dataset& d = dataset(path, shape);
    std::vector<int64_t> v;
    guard([&] { v = file_.read_integers(d, path); });
    return v;
  }

  const hdf5::Attribute& attribute(const hdf5::Group& g, const std::string& where, const char* name) const {
    const auto it = g.attributes.find(name);
    if (it == g.attributes.end()) fail(fmt::format("missing attribute '{}' of {}", name, where));
    return it->second;
  }
  const hdf5::Attribute& scalar(const hdf5::Group& g, const std::string& where, const char* name) const {
    const hdf5::Attribute& a = attribute(g, where, name);
    if (a.count() != 1) fail(fmt::format("attribute '{}' of {} holds {} values, not one", name, where, a.count()));
    return a;
  }
  std::string text(const hdf5::Group& g, const std::string& where, const char* name) const {
    const hdf5::Attribute& a = scalar(g, where, name);
    if (a.kind != hdf5::Attribute::Kind::text) fail(fmt::format("attribute '{}' of {} is not a string", name, where));
    return a.texts.at(0);
  }
  int64_t integer(const hdf5::Group& g, const std::string& where, const char* name, const Range& range) const {
    const hdf5::Attribute& a = scalar(g, where, name);
    if (a.kind == hdf5::Attribute::Kind::floating)
      fail(fmt::format("attribute '{}' of {} must be an integer (got {})", name, where, a.floats.at(0)));
    if (a.kind != hdf5::Attribute::Kind::integer)
      fail(fmt::format("attribute '{}' of {} must be an integer", name, where));
    if (a.is_unsigned && a.uints.at(0) > static_cast<uint64_t>(INT64_MAX))
      fail(fmt::format("attribute '{}' of {} {}", name, where, range_problem(a.uints.at(0), range)));
    const int64_t v = a.is_unsigned ? static_cast<int64_t>(a.uints.at(0)) : a.ints.at(0);
    check(range_problem(v, range), name, where);
    return v;
  }
  double number(const hdf5::Group& g, const std::string& where, const char* name, const Range& range,
                bool nan_allowed = false) const {
    const hdf5::Attribute& a = scalar(g, where, name);
    double v = 0;
    if (a.kind == hdf5::Attribute::Kind::floating) v = a.floats.at(0);
    else if (a.kind == hdf5::Attribute::Kind::integer) v = a.is_unsigned ? double(a.uints.at(0)) : double(a.ints.at(0));
    else fail(fmt::format("attribute '{}' of {} is not a number", name, where));
    if (!(nan_allowed && std::isnan(v))) check(range_problem(v, range), name, where);
    return v;
  }
  // n xoshiro256** states, each of 4 words and not all zero (that state only ever yields zeros).
  std::vector<Rng::State> rng_states(const hdf5::Group& g, const char* name, int64_t n) const {
    const hdf5::Attribute& a = attribute(g, "/train", name);
    if (a.kind != hdf5::Attribute::Kind::integer || !a.is_unsigned || a.count() != 4 * n)
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

 private:
  static std::vector<std::string> parts(const std::string& path) {
    std::vector<std::string> out;
    for (size_t start = 1; start <= path.size();) {
      size_t end = path.find('/', start);
      if (end == std::string::npos) end = path.size();
      if (end > start) out.push_back(path.substr(start, end - start));
      start = end + 1;
    }
    return out;
  }
  void check(const std::string& problem, const char* name, const std::string& where) const {
    if (!problem.empty()) fail(fmt::format("attribute '{}' of {} {}", name, where, problem));
  }
  template <class F>
  void guard(F&& read) const {
    try {
      read();
    } catch (const std::runtime_error& e) {
      fail(e.what());
    }
  }

  std::string path_;
  const hdf5::File& file_;
};

nn::GPTConfig read_config(const Reader& r) {
  const hdf5::Group& g = r.group("/config");
  nn::GPTConfig c;
  c.vocab_size = r.integer(g, "/config", "vocab_size", Range{1, double(nn::kMaxVocab)});
  c.block_size = r.integer(g, "/config", "block_size", Range{1, double(nn::kMaxBlock)});
  c.n_layer = r.integer(g, "/config", "n_layer", Range{1, double(nn::kMaxLayers)});
  c.n_head = r.integer(g, "/config", "n_head", Range{1, double(nn::kMaxHeads)});
  c.n_embd = r.integer(g, "/config", "n_embd", Range{1, double(nn::kMaxEmbd)});
  try {
    c.validate();
  } catch (const std::exception& e) {
    r.fail(fmt::format("/config is invalid: {}", e.what()));
  }
  return c;
}

// /config and /model agree: every parameter of that config is there in its shape, and nothing else
// is; checked on the shapes alone, before a model is allocated.
void check_model_datasets(const Reader& r, const nn::GPTConfig& c, const std::string& group) {
  std::set<std::string> names;
  for (const auto& [name, shape] : nn::parameter_shapes(c)) {
    r.dataset(group + "/" + name, shape);
    names.insert(name);
  }
  for (const auto& [name, d] : r.group(group).datasets)
    if (!names.count(name))
      r.fail(fmt::format("dataset {}/{} is not a parameter of the model that /config describes ({} layers)", group,
                         name, c.n_layer));
}

std::shared_ptr<const data::Tokenizer> read_tokenizer(const Reader& r) {
  const hdf5::Group& g = r.group("/tokenizer");
  const std::string kind = r.text(g, "/tokenizer", "kind");
  auto int32s = [&](const std::string& path, const Shape& shape) {
    std::vector<int32_t> out;
    for (int64_t v : r.integers(path, shape)) {
      if (v < INT32_MIN || v > INT32_MAX) r.fail(fmt::format("dataset {} holds {}, outside 32-bit integers", path, v));
      out.push_back(static_cast<int32_t>(v));
    }
    return out;
  };
  if (kind == "char") {
    const auto& dims = r.dataset("/tokenizer/vocab").shape;
    if (dims.size() != 1) r.fail("dataset /tokenizer/vocab must be one-dimensional");
    return std::make_shared<data::CharTokenizer>(int32s("/tokenizer/vocab", {dims[0]}));
  }
  if (kind == "bpe") {
    const auto& dims = r.dataset("/tokenizer/merges").shape;
    if (dims.size() != 2 || dims[1] != 2) r.fail("dataset /tokenizer/merges must have shape [n_merges, 2]");
    const std::vector<int32_t> flat = int32s("/tokenizer/merges", {dims[0], 2});
    std::vector<data::Merge> merges;
    for (size_t k = 0; k < flat.size() / 2; ++k) merges.push_back({flat[2 * k], flat[2 * k + 1]});
    const std::string split = r.text(g, "/tokenizer", "split");
    if (split != "gpt2" && split != "none") r.fail(fmt::format("unknown split '{}' in /tokenizer", split));
    return std::make_shared<data::BpeTokenizer>(std::move(merges), data::split_from_name(split));
  }
  r.fail(fmt::format("unknown tokenizer kind '{}' in /tokenizer", kind));
}

void read_optimizer(const Reader& r, Checkpoint& ck) {
  const hdf5::Group& g = r.group("/optim");
  auto hyper = [&](const char* name, const Range& range) { return static_cast<float>(r.number(g, "/optim", name, range)); };
  ck.optim = optim::AdamWOptions{hyper("lr", Range{0, 10, true}), hyper("beta1", Range{0, 1, false, true}),
                                 hyper("beta2", Range{0, 1, false, true}), hyper("eps", Range{0, 1, true}),
                                 hyper("weight_decay", Range{0, 100})};
  ck.optim_step = r.integer(g, "/optim", "step", Range{0, kMany});
  check_model_datasets(r, ck.config, "/optim/m");
  check_model_datasets(r, ck.config, "/optim/v");
  for (const auto& [name, p] : ck.model->named_parameters()) {
    ck.m[name] = Tensor::empty(p.shape());
    ck.v[name] = Tensor::empty(p.shape());
    r.floats("/optim/m/" + name, ck.m[name]);
    r.floats("/optim/v/" + name, ck.v[name], true);
  }
}

TrainState read_train_state(const Reader& r) {
  const hdf5::Group& g = r.group("/train");
  const std::string where = "/train";
  TrainState s;
  s.iteration = r.integer(g, where, "iteration", Range{0, kMany});
  const int64_t world = g.attributes.count("world_size") ? r.integer(g, where, "world_size", Range{1, kMaxRanks}) : 1;
  s.sampler_states = r.rng_states(g, "rng_state", 1);
  if (world > 1) s.sampler_states = r.rng_states(g, "rank_rng_states", world);
  s.dropout_counter = static_cast<uint64_t>(r.integer(g, where, "dropout_counter", Range{0, 9.2e18}));
  s.train_loss = r.number(g, where, "train_loss", Range{0, 1e30});
  s.val_loss = r.number(g, where, "val_loss", Range{0, 1e30}, true);  // NaN: no estimate yet
  s.tokens_seen = r.integer(g, where, "tokens_seen", Range{0, 9.2e18});
  s.seconds = r.number(g, where, "seconds", Range{0, 1e12});
  s.train_tokens = r.integer(g, where, "train_tokens", Range{0, 9.2e18});
  s.val_tokens = r.integer(g, where, "val_tokens", Range{0, 9.2e18});
  for_each_option(s.options, [&](const char* name, auto& field, const char*, const Range& range) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, std::string>) {
      field = r.text(g, where, name);
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      field.clear();
      const std::string joined = r.text(g, where, name);
      for (size_t start = 0; start < joined.size();) {
        size_t end = joined.find('\n', start);
        if (end == std::string::npos) end = joined.size();
        field.push_back(joined.substr(start, end - start));
        start = end + 1;
      }
    } else if constexpr (std::is_integral_v<T>) {
      field = r.integer(g, where, name, range);
    } else {
      field = r.number(g, where, name, range);
    }
  });
  try {
    validate(s.options);
  } catch (const std::exception& e) {
    r.fail(fmt::format("the run options in /train are invalid: {}", e.what()));
  }
  if (s.iteration > s.options.iters)
    r.fail(fmt::format("/train is at iteration {}, past its iters {}", s.iteration, s.options.iters));
  return s;
}

Checkpoint read_file(const Reader& r, bool sealed) {
  const hdf5::Group& root = r.group("/");
  if (!root.attributes.count("format") || r.text(root, "/", "format") != "tinygpt")
    r.fail("not a tinygpt checkpoint (the root attribute format is not \"tinygpt\")");
  const int64_t version = r.integer(root, "/", "format_version", Range{0, kMany});
  if (version != kFormatVersion)
    r.fail(fmt::format("format_version {} is not supported (this tinygpt reads version {})", version, kFormatVersion));
  Checkpoint ck;
  ck.sealed = sealed;
  ck.config = read_config(r);
  check_model_datasets(r, ck.config, "/model");
  ck.tokenizer = read_tokenizer(r);
  if (ck.tokenizer->vocab_size() != ck.config.vocab_size)
    r.fail(fmt::format("the tokenizer has {} tokens but /config vocab_size is {}", ck.tokenizer->vocab_size(),
                       ck.config.vocab_size));
  ck.model = std::make_shared<nn::GPT>(ck.config);  // its size is bounded: every weight is in the file
  for (auto& [name, p] : ck.model->named_parameters()) r.floats("/model/" + name, p);
  if (r.find_group("/optim")) read_optimizer(r, ck);
  if (r.find_group("/train")) ck.train = read_train_state(r);
  return ck;
}

}  // namespace

void write_checkpoint(const std::string& path, const nn::GPT& model, const data::Tokenizer& tokenizer,
                      const optim::AdamW* optimizer, const TrainState* state) {
  H5::Exception::dontPrint();
  check_output_path(path, OutputKind::checkpoint);
  const std::filesystem::path target(path);
  std::string tmp;
  try {
    tmp = temporary_beside(target);
    write_file(tmp, model, tokenizer, optimizer, state);
    seal_checkpoint(tmp);
  } catch (const H5::Exception& e) {
    if (!tmp.empty()) std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write checkpoint '{}': {}", path, e.getDetailMsg()));
  } catch (const std::exception& e) {
    if (!tmp.empty()) std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write checkpoint '{}': {}", path, e.what()));
  }
  fsync_path(tmp, O_RDONLY);  // the data is on disk before the name points at it
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write checkpoint '{}': {}", path, ec.message()));
  }
  const auto dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  fsync_path(dir.string(), O_RDONLY | O_DIRECTORY);  // and the rename itself is durable
}

Checkpoint read_checkpoint(const std::string& path) {
  CheckpointImage image = read_checkpoint_image(path);
  const bool sealed = image.sealed;
  const hdf5::File file = open_checkpoint_image(std::move(image), path);
  const Reader reader(path, file);
  try {
    return read_file(reader, sealed);
  } catch (const std::invalid_argument& e) {  // e.g. a tokenizer whose data does not make sense
    reader.fail(e.what());
  }
}

}  // namespace tinygpt::train
