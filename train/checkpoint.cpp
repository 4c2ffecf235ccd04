#include "train/checkpoint.h"

#include <H5Cpp.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "data/bpe_tokenizer.h"
#include "data/char_tokenizer.h"

namespace tinygpt::train {

namespace {

constexpr int kFormatVersion = 1;

// ---- writing -----------------------------------------------------------------------------------

H5::StrType string_type() {
  H5::StrType t(H5::PredType::C_S1, H5T_VARIABLE);
  t.setCset(H5T_CSET_UTF8);
  return t;
}

void put(H5::H5Object& at, const char* name, const std::string& value) {
  at.createAttribute(name, string_type(), H5::DataSpace(H5S_SCALAR)).write(string_type(), value);
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

void put_floats(H5::Group& g, const std::string& name, const Tensor& t) {
  std::vector<hsize_t> dims(t.shape().begin(), t.shape().end());
  H5::DataSet ds = g.createDataSet(name, H5::PredType::IEEE_F32LE, H5::DataSpace(static_cast<int>(dims.size()), dims.data()));
  const Tensor c = t.contiguous();
  ds.write(c.data(), H5::PredType::NATIVE_FLOAT);
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
  for_each_option(o, [&](const char* name, auto& field, const char*) { put(g, name, field); });
}

void write_file(const std::string& path, const nn::GPT& model, const data::Tokenizer& tokenizer,
                const optim::AdamW* optimizer, const TrainState* state) {
  H5::H5File file(path, H5F_ACC_TRUNC);
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
    for (const auto& s : optimizer->state()) put_floats(m, s.name, s.m), put_floats(v, s.name, s.v);
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

// ---- reading -----------------------------------------------------------------------------------

// Reads from one file, remembering which item it is at so that any failure names it.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(fmt::format("checkpoint '{}': {}", path_, what));
  }
  H5::H5File& open() {
    if (!std::filesystem::exists(path_)) fail("no such file");
    if (H5::H5File::isHdf5(path_.c_str()) <= 0) fail("not an HDF5 file (or truncated)");
    file_ = H5::H5File(path_, H5F_ACC_RDONLY);
    return file_;
  }
  std::vector<hsize_t> dims_of(const std::string& item) {
    if (!has(item)) fail(fmt::format("missing dataset {}", item));
    H5::DataSpace space = file_.openDataSet(item).getSpace();
    std::vector<hsize_t> dims(space.getSimpleExtentNdims());
    space.getSimpleExtentDims(dims.data());
    return dims;
  }
  bool has(const std::string& item) {
    return H5Lexists(file_.getId(), item.c_str(), H5P_DEFAULT) > 0;
  }
  H5::Group group(const std::string& item) {
    if (!has(item)) fail(fmt::format("missing group {}", item));
    return file_.openGroup(item);
  }
  H5::Attribute attribute(H5::H5Object& at, const std::string& where, const char* name) {
    if (!at.attrExists(name)) fail(fmt::format("missing attribute '{}' of {}", name, where));
    return at.openAttribute(name);
  }
  std::string text(H5::H5Object& at, const std::string& where, const char* name) {
    H5::Attribute a = attribute(at, where, name);
    if (a.getTypeClass() != H5T_STRING) fail(fmt::format("attribute '{}' of {} is not a string", name, where));
    std::string s;
    a.read(a.getStrType(), s);
    return s;
  }
  template <class T>
  T number(H5::H5Object& at, const std::string& where, const char* name) {
    H5::Attribute a = attribute(at, where, name);
    const H5T_class_t cls = a.getTypeClass();
    if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || a.getSpace().getSimpleExtentNpoints() != 1)
      fail(fmt::format("attribute '{}' of {} is not a number", name, where));
    T value{};
    a.read(std::is_floating_point_v<T> ? H5::PredType::NATIVE_DOUBLE : H5::PredType::NATIVE_INT64, &value);
    return value;
  }
  // A dataset of the expected shape, as floats or ints.
  template <class T>
  std::vector<T> data(const std::string& item, const std::vector<hsize_t>& shape) {
    if (!has(item)) fail(fmt::format("missing dataset {}", item));
    H5::DataSet ds = file_.openDataSet(item);
    H5::DataSpace space = ds.getSpace();
    std::vector<hsize_t> dims(space.getSimpleExtentNdims());
    space.getSimpleExtentDims(dims.data());
    if (dims != shape)
      fail(fmt::format("dataset {} has shape [{}], expected [{}]", item, fmt::join(dims, ", "), fmt::join(shape, ", ")));
    std::vector<T> values(space.getSimpleExtentNpoints());
    if (!values.empty())
      ds.read(values.data(), std::is_same_v<T, float> ? H5::PredType::NATIVE_FLOAT : H5::PredType::NATIVE_INT32);
    return values;
  }
  Tensor tensor(const std::string& item, const Shape& shape) {
    return Tensor::from_vector(shape, data<float>(item, std::vector<hsize_t>(shape.begin(), shape.end())));
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  H5::H5File file_;
};

std::shared_ptr<const data::Tokenizer> read_tokenizer(Reader& r) {
  H5::Group g = r.group("/tokenizer");
  const std::string kind = r.text(g, "/tokenizer", "kind");
  if (kind == "char") {
    const std::vector<hsize_t> dims = r.dims_of("/tokenizer/vocab");
    return std::make_shared<data::CharTokenizer>(r.data<int32_t>("/tokenizer/vocab", {dims.empty() ? 0 : dims[0]}));
  }
  if (kind == "bpe") {
    const std::vector<hsize_t> dims = r.dims_of("/tokenizer/merges");
    const hsize_t n = dims.empty() ? 0 : dims[0];
    const std::vector<int32_t> flat = r.data<int32_t>("/tokenizer/merges", {n, 2});
    std::vector<data::Merge> merges;
    for (size_t k = 0; k < n; ++k) merges.push_back({flat[2 * k], flat[2 * k + 1]});
    return std::make_shared<data::BpeTokenizer>(std::move(merges),
                                                data::split_from_name(r.text(g, "/tokenizer", "split")));
  }
  r.fail(fmt::format("unknown tokenizer kind '{}' in /tokenizer", kind));
}

TrainState read_train_state(Reader& r) {
  H5::Group g = r.group("/train");
  TrainState s;
  s.iteration = r.number<int64_t>(g, "/train", "iteration");
  H5::Attribute rng = r.attribute(g, "/train", "rng_state");
  if (rng.getSpace().getSimpleExtentNpoints() != 4) r.fail("attribute 'rng_state' of /train does not hold 4 numbers");
  rng.read(H5::PredType::NATIVE_UINT64, s.sampler_states.at(0).data());
  const int64_t world = g.attrExists("world_size") ? r.number<int64_t>(g, "/train", "world_size") : 1;
  if (world < 1) r.fail(fmt::format("attribute 'world_size' of /train is {}", world));
  if (world > 1) {
    H5::Attribute all = r.attribute(g, "/train", "rank_rng_states");
    if (all.getSpace().getSimpleExtentNpoints() != 4 * world)
      r.fail(fmt::format("attribute 'rank_rng_states' of /train does not hold {} x 4 numbers", world));
    s.sampler_states.resize(static_cast<size_t>(world));
    all.read(H5::PredType::NATIVE_UINT64, s.sampler_states.data());
  }
  s.dropout_counter = static_cast<uint64_t>(r.number<int64_t>(g, "/train", "dropout_counter"));
  s.train_loss = r.number<double>(g, "/train", "train_loss");
  s.val_loss = r.number<double>(g, "/train", "val_loss");
  s.tokens_seen = r.number<int64_t>(g, "/train", "tokens_seen");
  s.seconds = r.number<double>(g, "/train", "seconds");
  s.train_tokens = r.number<int64_t>(g, "/train", "train_tokens");
  s.val_tokens = r.number<int64_t>(g, "/train", "val_tokens");
  for_each_option(s.options, [&](const char* name, auto& field, const char*) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, std::string>) {
      field = r.text(g, "/train", name);
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      field.clear();
      const std::string joined = r.text(g, "/train", name);
      for (size_t start = 0; start < joined.size();) {
        size_t end = joined.find('\n', start);
        if (end == std::string::npos) end = joined.size();
        field.push_back(joined.substr(start, end - start));
        start = end + 1;
      }
    } else {
      field = r.number<T>(g, "/train", name);
    }
  });
  return s;
}

Checkpoint read_file(Reader& r) {
  H5::H5File& file = r.open();
  if (!file.attrExists("format") || r.text(file, "/", "format") != "tinygpt")
    r.fail("not a tinygpt checkpoint (the root attribute format is not \"tinygpt\")");
  const int64_t version = r.number<int64_t>(file, "/", "format_version");
  if (version != kFormatVersion)
    r.fail(fmt::format("format_version {} is not supported (this tinygpt reads version {})", version, kFormatVersion));
  Checkpoint ck;
  H5::Group config = r.group("/config");
  ck.config.vocab_size = r.number<int64_t>(config, "/config", "vocab_size");
  ck.config.block_size = r.number<int64_t>(config, "/config", "block_size");
  ck.config.n_layer = r.number<int64_t>(config, "/config", "n_layer");
  ck.config.n_head = r.number<int64_t>(config, "/config", "n_head");
  ck.config.n_embd = r.number<int64_t>(config, "/config", "n_embd");
  try {
    ck.config.validate();
  } catch (const std::exception& e) {
    r.fail(fmt::format("/config is invalid: {}", e.what()));
  }
  // The expected names and shapes are those of a model of that config; the weights go straight in.
  ck.model = std::make_shared<nn::GPT>(ck.config);
  for (auto& [name, p] : ck.model->named_parameters()) p.copy_from_(r.tensor("/model/" + name, p.shape()));
  ck.tokenizer = read_tokenizer(r);
  if (ck.tokenizer->vocab_size() != ck.config.vocab_size)
    r.fail(fmt::format("the tokenizer has {} tokens but /config vocab_size is {}", ck.tokenizer->vocab_size(),
                       ck.config.vocab_size));
  if (r.has("/optim")) {
    H5::Group g = r.group("/optim");
    ck.optim = optim::AdamWOptions{static_cast<float>(r.number<double>(g, "/optim", "lr")),
                                   static_cast<float>(r.number<double>(g, "/optim", "beta1")),
                                   static_cast<float>(r.number<double>(g, "/optim", "beta2")),
                                   static_cast<float>(r.number<double>(g, "/optim", "eps")),
                                   static_cast<float>(r.number<double>(g, "/optim", "weight_decay"))};
    ck.optim_step = r.number<int64_t>(g, "/optim", "step");
    for (const auto& [name, p] : ck.model->named_parameters()) {
      ck.m[name] = r.tensor("/optim/m/" + name, p.shape());
      ck.v[name] = r.tensor("/optim/v/" + name, p.shape());
    }
  }
  if (r.has("/train")) ck.train = read_train_state(r);
  return ck;
}

}  // namespace

void write_checkpoint(const std::string& path, const nn::GPT& model, const data::Tokenizer& tokenizer,
                      const optim::AdamW* optimizer, const TrainState* state) {
  H5::Exception::dontPrint();
  const std::filesystem::path target(path);
  const std::string tmp = path + ".tmp";
  try {
    write_file(tmp, model, tokenizer, optimizer, state);
  } catch (const H5::Exception& e) {
    std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write checkpoint '{}': {}", path, e.getDetailMsg()));
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
  H5::Exception::dontPrint();
  Reader reader(path);
  try {
    return read_file(reader);
  } catch (const H5::Exception& e) {
    reader.fail(fmt::format("unreadable ({}: {})", e.getFuncName(), e.getDetailMsg()));
  } catch (const std::invalid_argument& e) {  // e.g. a tokenizer whose data does not make sense
    reader.fail(e.what());
  }
}

}  // namespace tinygpt::train
