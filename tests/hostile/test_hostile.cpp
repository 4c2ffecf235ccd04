// Hostile checkpoints, texts and flags, made from a valid run: byte flips, truncations and
// h5py-style edits of /config, /train and /optim, with and without the seal. Each run of the tinygpt
// executable on them must end in one clear line of error (or, where the damage is in bytes that no
// check can tell from real data, a normal result): never a crash, a hang, runaway memory, or a
// file written where the command line did not say.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "checkpoint_edits.h"
#include "gpt2_dir.h"
#include "hostile/hostile.h"
#include "process.h"
#include "sentencepiece_model.h"
#include "temp_files.h"

using namespace tinygpt::testing;

namespace {

// A valid run to spoil: a small model trained a few iterations, its checkpoint's bytes, and a text.
class Base {
 public:
  Base() {
    std::string text;
    for (int i = 0; i < 40; ++i) text += "Shall I compare thee to a summer's day? 나는 오늘 학교에 갔다.\n";
    corpus_ = dir_.write("corpus.txt", text);
    const Run r = run_tinygpt(words("train --data " + corpus_ + " --out " + dir_.file("base.h5") +
                                    " --layers 2 --heads 2 --embd 16 --block 16 --batch 4 --iters 4 --eval-every 2 "
                                    "--eval-iters 1 --threads 1"),
                              dir_.file("train.txt"));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    bytes_ = read_file(dir_.file("base.h5"));
  }
  const std::string& bytes() const { return bytes_; }
  const std::string& corpus() const { return corpus_; }
  std::string copy(const std::string& name) const {
    const std::string path = work(name);
    std::filesystem::copy_file(dir_.file("base.h5"), path, std::filesystem::copy_options::overwrite_existing);
    return path;
  }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(work(name), std::ios::binary) << bytes;
    return work(name);
  }
  // The folder the hostile files live in; runs on them must write nothing there.
  std::string work(const std::string& name = "") const {
    std::filesystem::create_directories(dir_.file("work"));
    return dir_.file("work/" + name);
  }
  Run run(const std::string& args) const { return run_tinygpt(words(args), dir_.file("out.txt"), kTimeLimit); }

 private:
  TempDir dir_;
  std::string corpus_, bytes_;
};

// Offsets just past HDF5 structure signatures (the first three of each kind: object headers,
// B-trees, heaps, symbol tables; every global heap collection, where variable-length strings live):
// the bytes whose damage reaches libhdf5's parsers.
std::vector<size_t> metadata_offsets(const std::string& bytes) {
  std::vector<size_t> out;
  for (const char* signature : {"OHDR", "OCHK", "TREE", "HEAP", "SNOD", "GCOL", "BTHD", "BTLF", "FRHP", "FHDB", "FSHD"}) {
    int seen = 0;
    for (size_t at = bytes.find(signature); at != std::string::npos && (seen < 3 || signature == std::string("GCOL"));
         at = bytes.find(signature, at + 1), ++seen)
      for (size_t k : {4, 8, 9, 12, 16, 24, 26, 30, 40, 48, 50, 54})  // sizes and counts
        if (at + k < bytes.size()) out.push_back(at + k);
  }
  for (size_t k = 512; k < 512 + 96 && k < bytes.size(); k += 8) out.push_back(k);  // the superblock
  return out;
}

// The checkpoint as h5py or an older tinygpt writes it: no user block (so no seal), and
// variable-length strings, which live in HDF5's global heap.
std::string h5py_style(const Base& base) {
  const std::string path = base.work("h5py.h5");
  {
    H5::H5File source(base.copy("source.h5"), H5F_ACC_RDONLY), copy(path, H5F_ACC_TRUNC);
    for (const char* group : {"config", "model", "tokenizer", "optim", "train"})
      REQUIRE(H5Ocopy(source.getId(), group, copy.getId(), group, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    const H5::StrType vlen(H5::PredType::C_S1, H5T_VARIABLE);
    auto put_vlen = [&](H5::H5Object& at, const char* name, std::string value) {
      if (at.attrExists(name)) at.removeAttr(name);
      at.createAttribute(name, vlen, H5::DataSpace(H5S_SCALAR)).write(vlen, value);
    };
    auto text = [](H5::H5Object& at, const char* name) {
      std::string value;
      H5::Attribute a = at.openAttribute(name);
      a.read(a.getStrType(), value);
      return value.substr(0, value.find('\0'));
    };
    put_vlen(copy, "format", "tinygpt");
    const int version = 1;
    copy.createAttribute("format_version", H5::PredType::STD_I32LE, H5::DataSpace(H5S_SCALAR))
        .write(H5::PredType::NATIVE_INT, &version);
    H5::Group tokenizer = copy.openGroup("/tokenizer"), train = copy.openGroup("/train");
    put_vlen(tokenizer, "kind", text(tokenizer, "kind"));
    for (const char* name : {"data", "val-data", "out", "tokenizer"}) put_vlen(train, name, text(train, name));
  }
  std::filesystem::remove(base.work("source.h5"));
  return read_file(path);
}

}  // namespace

TEST_CASE("hostile: a sealed checkpoint with any byte flipped is refused by its checksum", "[hostile][slow]") {
  const Base base;
  const std::string& bytes = base.bytes();
  REQUIRE(base.run("info --ckpt " + base.copy("good.h5")).exit_code == 0);
  std::vector<size_t> positions = metadata_offsets(bytes);
  for (size_t at = 0; at < bytes.size(); at += bytes.size() / 40) positions.push_back(at);
  positions = sampled(positions);
  const auto before = snapshot(base.work());
  int runs = 0;
  for (size_t at : positions) {
    const std::string path = base.write("flipped.h5", flip(bytes, at));
    const Run r = base.run("info --ckpt " + path);
    INFO("byte " << at << " of " << bytes.size() << ": " << r.output);
    require_clear_error(r, at < 512 ? "' is damaged: " : "' is damaged: checksum mismatch");
    ++runs;
  }
  std::filesystem::remove(base.work("flipped.h5"));
  REQUIRE(snapshot(base.work()) == before);
  REQUIRE(runs > static_cast<int>(60 / sample_every()));
}

TEST_CASE("hostile: re-sealed checkpoints with flipped metadata and global heap never take any command down",
          "[hostile][slow]") {
  // The seal is a SHA-256 anyone recomputes: these files pass it. libhdf5 parses every file in a
  // child process only, so whatever a flip does to libhdf5, each command ends in one clear line
  // (or, where the flip hit bytes no check can tell from real data, a normal result).
  const Base base;
  const std::string path = base.copy("vlen.h5");
  edit_checkpoint(path, [](H5::H5File& f) {  // variable-length strings, as h5py writes them: a global heap
    const H5::StrType vlen(H5::PredType::C_S1, H5T_VARIABLE);
    H5::Group tokenizer = f.openGroup("/tokenizer");
    tokenizer.createAttribute("note", vlen, H5::DataSpace(H5S_SCALAR)).write(vlen, std::string("kept by h5py"));
  });
  const std::string bytes = read_file(path);
  REQUIRE(bytes.find("GCOL") != std::string::npos);
  REQUIRE(base.run("info --ckpt " + path).exit_code == 0);
  std::vector<size_t> positions = metadata_offsets(bytes);
  for (size_t at = bytes.find("GCOL"); at != std::string::npos && at < bytes.size(); at = bytes.find("GCOL", at + 1))
    for (size_t k = 0; k < 96; k += 2) positions.push_back(at + k);  // the heap's objects: sizes and strings
  positions = sampled(positions);
  const std::vector<std::string> commands = {
      "info --ckpt {}", "sample --tokens 4 --ckpt {}", "eval --data " + base.corpus() + " --ckpt {}",
      "explain --text Shall --out " + base.work("page.html") + " --ckpt {}", "train --resume {} --iters 6"};
  int errors = 0;
  for (size_t i = 0; i < positions.size(); ++i) {
    if (positions[i] >= bytes.size()) continue;
    std::string flipped = flip(bytes, positions[i], i % 2 ? 0xFF : 0x5A);
    tinygpt::io::hdf5::seal_image(flipped.data(), flipped.size());
    const std::string damaged = base.write("resealed.h5", flipped);
    const std::string command = fmt::format(fmt::runtime(commands[i % commands.size()]), damaged);
    const Run r = base.run(command);
    INFO(command << " (byte " << positions[i] << "): " << r.output);
    require_no_crash(r);
    if (r.exit_code == 1) {
      REQUIRE(r.output.rfind("tinygpt: error: ", 0) == 0);
      REQUIRE(std::count(r.output.begin(), r.output.end(), '\n') == 1);
      ++errors;
    }
    for (const char* left : {"page.html", "resealed.csv", "resealed.svg"}) std::filesystem::remove(base.work(left));
  }
  INFO(errors << " errors of " << positions.size());
  REQUIRE(errors > static_cast<int>(positions.size()) / 4);
}

TEST_CASE("hostile: names from files reach the terminal escaped, and no command prints a number it did not compute",
          "[hostile]") {
  const Base base;
  // A data file whose name holds a terminal escape (it would retitle the window and ring the bell).
  const std::string named = base.work("a\x1b]0;owned\x07.txt");
  std::filesystem::copy_file(base.corpus(), named);
  const std::string ckpt = base.work("named.h5");
  const Run trained = base.run("train --data " + named + " --layers 1 --heads 1 --embd 8 --block 8 --batch 2 --iters 2 "
                               "--eval-every 2 --eval-iters 1 --threads 1 --out " + ckpt);
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  const Run info = base.run("info --ckpt " + ckpt);
  INFO(info.output);
  REQUIRE(info.exit_code == 0);
  REQUIRE(info.output.find('\x1b') == std::string::npos);
  REQUIRE(info.output.find('\x07') == std::string::npos);
  REQUIRE(info.output.find("a\\x1B]0;owned\\x07.txt") != std::string::npos);
  // A value from the file quoted in an error: escaped, so that the error stays one line and moves no cursor.
  const std::string escaped = base.copy("escaped.h5");
  edit_checkpoint(escaped, [](H5::H5File& f) { set_text_attribute(f, "/config", "norm", "\x1b[2J\x07\r\nx"); });
  const Run quoted = base.run("info --ckpt " + escaped);
  INFO(quoted.output);
  require_clear_error(quoted, "\\x1B[2J\\x07\\x0D\\x0Ax");
  REQUIRE(quoted.output.find('\x1b') == std::string::npos);
  // A stop text that is not UTF-8 could never appear in a sample.
  require_clear_error(base.run("sample --tokens 3 --stop \xff\xfe --ckpt " + ckpt), "--stop: the text is not valid UTF-8");
  // Finite weights whose sums overflow (two residual branches of 3e38 each): the loss is not a
  // number, and eval says so instead of printing nan (or -nan into JSON) with exit 0.
  const std::string huge = base.copy("huge.h5");
  edit_checkpoint(huge, [](H5::H5File& f) {
    for (const char* name : {"/model/transformer.h.0.attn.c_proj.bias", "/model/transformer.h.0.mlp.c_proj.bias"}) {
      H5::DataSet set = f.openDataSet(name);
      hsize_t n = 0;
      set.getSpace().getSimpleExtentDims(&n);
      const std::vector<float> values(static_cast<size_t>(n), 3e38f);
      set.write(values.data(), H5::PredType::NATIVE_FLOAT);
    }
  });
  for (const char* json : {"", " --json"}) {
    const Run r = base.run("eval --data " + base.corpus() + " --ckpt " + huge + json);
    INFO(r.output);
    require_clear_error(r, "eval: the loss is not a number");
  }
}

TEST_CASE("hostile: a checkpoint saved at a skipped step (its loss nan or inf) works in every command", "[hostile]") {
  // Not hostile at all: a run whose spike guard skipped its last step saves that step's loss as it
  // was. Every command reads the file; JSON says null, the CSV and the text say nan or inf.
  const Base base;
  for (const double loss : {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::infinity()}) {
    const std::string path = base.copy("skipped.h5");
    edit_checkpoint(path, [&](H5::H5File& f) {
      H5::Group train = f.openGroup("/train");
      set_attribute(train, "train_loss", H5::PredType::IEEE_F64LE, loss);
    });
    const std::string shown = std::isnan(loss) ? "nan" : "inf";
    const Run info = base.run("info --ckpt " + path);
    INFO(info.output);
    REQUIRE(info.exit_code == 0);
    REQUIRE(info.output.find("train loss   " + shown + " (last iteration, which the spike guard did not apply)") !=
            std::string::npos);
    const Run json = base.run("info --json --ckpt " + path);
    REQUIRE(json.exit_code == 0);
    REQUIRE(json.output.find("\"train_loss\": null") != std::string::npos);
    for (const std::string& command : {"sample --tokens 3 --ckpt " + path, "eval --data " + base.corpus() + " --ckpt " + path,
                                      "explain --text Shall --out " + base.work("page.html") + " --force --ckpt " + path,
                                      "train --resume " + path + " --iters 5"}) {
      const Run r = base.run(command);
      INFO(command << ": " << r.output);
      REQUIRE(r.exit_code == 0);
    }
    for (const char* left : {"skipped.h5", "skipped.csv", "skipped.svg", "skipped.jsonl", "page.html"})
      std::filesystem::remove(base.work(left));
  }
}

TEST_CASE("hostile: truncated checkpoints, sealed or not, end in a clear error", "[hostile]") {
  const Base base;
  const std::string& bytes = base.bytes();
  std::string unsealed = bytes;
  std::fill(unsealed.begin(), unsealed.begin() + 512, '\0');
  for (size_t length : {size_t{0}, size_t{1}, size_t{8}, size_t{100}, size_t{511}, size_t{512}, size_t{520},
                        size_t{1000}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 100, bytes.size() - 1}) {
    for (const std::string* source : std::initializer_list<const std::string*>{&bytes, &unsealed}) {
      const std::string path = base.write("cut.h5", source->substr(0, length));
      for (const char* command : {"info --ckpt ", "sample --tokens 5 --ckpt "}) {
        const Run r = base.run(command + path);
        INFO(command << length << " bytes, " << (source == &bytes ? "sealed" : "unsealed") << ": " << r.output);
        require_clear_error(r, "cut.h5'");
      }
    }
  }
}

TEST_CASE("hostile: flipped metadata in h5py-style files (no seal, global heap) never takes tinygpt down",
          "[hostile][slow]") {
  const Base base;
  const std::string bytes = h5py_style(base);
  REQUIRE(base.run("info --ckpt " + base.write("h5py.h5", bytes)).output.find("unverified") != std::string::npos);
  std::vector<size_t> positions = metadata_offsets(bytes);
  std::mt19937_64 random(7);
  for (int i = 0; i < 20; ++i) positions.push_back(512 + random() % (bytes.size() - 512));
  positions = sampled(positions);
  const auto before = snapshot(base.work());
  int errors = 0, loaded = 0;
  for (size_t i = 0; i < positions.size(); ++i) {
    const size_t at = positions[i];
    const uint8_t mask = i % 2 ? 0xFF : 0x5A;  // all bits of the byte, or some
    const std::string path = base.write("flipped.h5", flip(bytes, at, mask));
    const Run r = base.run("info --ckpt " + path);
    INFO("byte " << at << " ^ " << int(mask) << ": " << r.output);
    require_no_crash(r);
    if (r.exit_code == 1) {
      require_clear_error(r, "flipped.h5'");
      ++errors;
    } else {
      ++loaded;  // a flip in float data or unused bytes: nothing can tell it from a real value
    }
  }
  std::filesystem::remove(base.work("flipped.h5"));
  REQUIRE(snapshot(base.work()) == before);
  INFO(errors << " errors, " << loaded << " loaded");
  REQUIRE(errors > static_cast<int>(positions.size()) / 3);
}

TEST_CASE("hostile: edited /config, /train and /optim values are refused before anything is built or written",
          "[hostile][slow]") {
  const Base base;
  struct Edit {
    std::string message;
    std::function<void(H5::H5File&)> apply;
    bool moment_values = false;  // only a reader of the moments' values sees it: eval reads weights only
  };
  auto attribute = [](const char* group, const char* name, auto value, const H5::PredType& type) {
    return [=](H5::H5File& f) {
      H5::Group g = f.openGroup(group);
      set_attribute(g, name, type, value);
    };
  };
  auto text_attribute = [](const char* group, const char* name, std::string value) {
    return [=](H5::H5File& f) {
      H5::Group g = f.openGroup(group);
      if (g.attrExists(name)) g.removeAttr(name);
      const H5::StrType type(H5::PredType::C_S1, std::max<size_t>(1, value.size()));
      g.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, value.data());
    };
  };
  const auto i64 = H5::PredType::NATIVE_INT64;
  const auto f64 = H5::PredType::NATIVE_DOUBLE;
  const double kInf = std::numeric_limits<double>::infinity(), kNaN = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Edit> edits = {
      {"n_layer' of /config must be at most 1024 (got 300000)", attribute("/config", "n_layer", int64_t{300000}, i64)},
      {"n_layer' of /config must be at most 1024 (got 1000000000)", attribute("/config", "n_layer", int64_t{1000000000}, i64)},
      {"vocab_size' of /config must be at most", attribute("/config", "vocab_size", int64_t{1000000000}, i64)},
      {"n_embd' of /config must be at most", attribute("/config", "n_embd", int64_t{4611686018427387904}, i64)},
      {"block_size' of /config must be an integer (got 1e+300)", attribute("/config", "block_size", 1e300, f64)},
      {"format_version' of / must be an integer (got 1.5)", attribute("/", "format_version", 1.5, f64)},
      {"missing dataset /model/transformer.h.2", attribute("/config", "n_layer", int64_t{6}, i64)},
      {"is not a parameter of the model", attribute("/config", "n_layer", int64_t{1}, i64)},
      {"all-zero generator state",
       [](H5::H5File& f) {
         const uint64_t zeros[4] = {0, 0, 0, 0};
         f.openGroup("/train").openAttribute("rng_state").write(H5::PredType::NATIVE_UINT64, zeros);
       }},
      {"attribute 'data_files' of /train: data file line 'train 12 abc /x' is not",
       text_attribute("/train", "data_files", "train 12 abc /x")},
      {"attribute 'data_files' of /train: data file line 'train -1 ", text_attribute("/train", "data_files",
                                                                                     "train -1 " + std::string(64, 'a') + " /x")},
      {"keep-best' of /train must be at most 1 (got 7)", attribute("/train", "keep-best", int64_t{7}, i64)},
      {"best_val_loss' of /train must be a finite number (got inf)", attribute("/train", "best_val_loss", kInf, f64)},
      {"world_size' of /train must be at most 65536", attribute("/train", "world_size", int64_t{1} << 62, i64)},
      {"batch' of /train must be at most 65536 (got 100000000)", attribute("/train", "batch", int64_t{100000000}, i64)},
      {"grad-accum' of /train must be at most 65536", attribute("/train", "grad-accum", int64_t{1000000000}, i64)},
      {"eval-iters' of /train must be at most 1000000", attribute("/train", "eval-iters", int64_t{1000000000}, i64)},
      {"lr' of /train must be a finite number (got inf)", attribute("/train", "lr", kInf, f64)},
      {"weight-decay' of /train must be a finite number (got nan)", attribute("/train", "weight-decay", kNaN, f64)},
      {"iteration' of /train must be at least 0 (got -5)", attribute("/train", "iteration", int64_t{-5}, i64)},
      {"/train is at iteration 900, past its iters 4", attribute("/train", "iteration", int64_t{900}, i64)},
      {"beta1' of /optim must be less than 1 (got 1.5)", attribute("/optim", "beta1", 1.5, f64)},
      {"holds nan at element 0",
       [](H5::H5File& f) {
         H5::DataSet d = f.openDataSet("/optim/m/transformer.ln_f.weight");
         std::vector<float> x(16, NAN);
         d.write(x.data(), H5::PredType::NATIVE_FLOAT);
       },
       true},
      {"a second moment cannot be negative",
       [](H5::H5File& f) {
         H5::DataSet d = f.openDataSet("/optim/v/transformer.ln_f.bias");
         std::vector<float> x(16, -1.0f);
         d.write(x.data(), H5::PredType::NATIVE_FLOAT);
       },
       true},
      {"holds inf at element",
       [](H5::H5File& f) {
         H5::DataSet d = f.openDataSet("/model/transformer.h.1.attn.c_proj.bias");
         std::vector<float> x(16, INFINITY);
         d.write(x.data(), H5::PredType::NATIVE_FLOAT);
       }},
  };
  const std::vector<std::string> commands = {"train --iters 6 --resume ", "info --ckpt ", "eval --data "};
  size_t turn = 0;  // sampled: one command per file, in turn
  for (const Edit& edit : edits)
    for (Seal seal : {Seal::again, Seal::none}) {
      const std::string path = base.copy("edited.h5");
      edit_checkpoint(path, edit.apply, seal);
      const auto before = snapshot(base.work());
      const std::vector<std::string> run_commands = sample_every() > 1 ? std::vector{commands[turn++ % 3]} : commands;
      for (const std::string& command : run_commands) {
        const std::string args = command == "eval --data " ? command + base.corpus() + " --ckpt " + path : command + path;
        const Run r = base.run(args);
        INFO(args << (seal == Seal::again ? " (sealed again)" : " (no seal)") << ": " << r.output);
        if (edit.moment_values && command == "eval --data ") {  // the model is whole: eval runs
          require_no_crash(r);
          REQUIRE(r.exit_code == 0);
        } else {
          require_clear_error(r, edit.message);
        }
      }
      REQUIRE(snapshot(base.work()) == before);
    }
}

TEST_CASE("hostile: paths stored inside a checkpoint are never written, and inputs must be regular files",
          "[hostile]") {
  const Base base;
  const std::string victim = base.write("victim.txt", "someone's notes\n");
  const std::string path = base.copy("stored.h5");
  edit_checkpoint(path, [&](H5::H5File& f) {
    H5::Group g = f.openGroup("/train");
    g.removeAttr("out");
    const H5::StrType type(H5::PredType::C_S1, victim.size());
    g.createAttribute("out", type, H5::DataSpace(H5S_SCALAR)).write(type, victim.data());
  });
  const Run r = base.run("train --iters 6 --resume " + path);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(read_file(victim) == "someone's notes\n");
  REQUIRE_FALSE(std::filesystem::exists(base.work("victim.csv")));
  REQUIRE(base.run("info --ckpt " + path).output.find("iteration    6 of 6") != std::string::npos);

  REQUIRE(mkfifo(base.work("fifo").c_str(), 0600) == 0);
  std::filesystem::create_directory(base.work("folder"));
  const std::string empty = base.write("empty.txt", ""), binary = base.write("binary.txt", "ab\xff\xfe\x00cd");
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {base.work("fifo"), "fifo': is a FIFO (named pipe), not a regular file"},
      {"/dev/zero", "'/dev/zero': is a device, not a regular file"},
      {base.work("folder"), "folder' holds no"},  // a folder is one of token shards, and this one has none
      {empty, "empty.txt' is empty"},
      {binary, "binary.txt' is not valid UTF-8 at byte offset 2"},
  };
  for (const auto& [input, message] : inputs) {
    const auto before = snapshot(base.work());
    for (const std::string& args : {"train --out " + base.work("new.h5") + " --data " + input,
                                    "eval --ckpt " + path + " --data " + input, "info --ckpt " + input}) {
      if (args.rfind("info", 0) == 0 && input == empty) continue;  // an empty checkpoint: its own message
      const Run run = base.run(args);
      INFO(args << ": " << run.output);
      require_clear_error(run, args.rfind("info", 0) == 0 ? "checkpoint '" + input : message);
    }
    REQUIRE(snapshot(base.work()) == before);
  }
  // A checkpoint whose stored data path is a device: resuming it is refused before reading.
  const std::string device = base.copy("device.h5");
  edit_checkpoint(device, [](H5::H5File& f) {
    H5::Group g = f.openGroup("/train");
    g.removeAttr("data");
    const H5::StrType type(H5::PredType::C_S1, 9);
    g.createAttribute("data", type, H5::DataSpace(H5S_SCALAR)).write(type, "/dev/zero");
  });
  require_clear_error(base.run("train --iters 6 --resume " + device), "'/dev/zero': is a device");
}

TEST_CASE("hostile: a SentencePiece model damaged inside an unsealed checkpoint never takes tinygpt down",
          "[hostile][sentencepiece][slow]") {
  TempDir dir;
  const std::string model = write_sentencepiece_model(dir);
  // Llama-shaped through info and sample; GPT-shaped through tokens and explain (which draws GPT-2's shape).
  for (const std::string arch : {"llama", "gpt2"}) {
    INFO(arch);
    const Run trained = run_tinygpt(
        words("train --data " + dir.write("stories.txt", sentencepiece_text()) + " --tokenizer sentencepiece " +
              "--tokenizer-model " + model + " --arch " + arch + (arch == "llama" ? " --kv-heads 1" : "") +
              " --layers 1 --heads 2 --embd 16 --block 16 --batch 2 --iters 2 --eval-every 2 --eval-iters 1 " +
              "--threads 1 --out " + dir.file("sp_" + arch + ".h5")),
        dir.file("train.txt"));
    INFO(trained.output);
    REQUIRE(trained.exit_code == 0);
    strip_seal(dir.file("sp_" + arch + ".h5"));  // unsealed: the bytes reach every parser
    const std::string bytes = read_file(dir.file("sp_" + arch + ".h5")), proto = read_file(model);
    const size_t start = bytes.find(proto.substr(0, 64));
    REQUIRE(start != std::string::npos);
    std::vector<size_t> positions;
    std::mt19937_64 random(11);
    for (size_t at : {size_t{0}, size_t{1}, size_t{2}, size_t{5}, size_t{9}, size_t{17}, size_t{33}}) positions.push_back(start + at);
    for (int i = 0; i < 24; ++i) positions.push_back(start + random() % proto.size());
    const std::vector<std::string> commands =
        arch == "llama" ? std::vector<std::string>{"info --ckpt ", "sample --tokens 4 --prompt Once --ckpt "}
                        : std::vector<std::string>{"tokens --text Once_upon --ckpt ",
                                                   "explain --text Once --force --out " + dir.file("page.html") + " --ckpt "};
    int errors = 0;
    for (size_t at : sampled(positions)) {
      const std::string path = dir.write("flipped.h5", flip(bytes, at, 0xFF));
      for (const std::string& command : commands) {
        const Run r = run_tinygpt(words(command + path), dir.file("out.txt"), kTimeLimit);
        INFO(command << "byte " << at - start << " of the model: " << r.output);
        require_no_crash(r);
        if (r.exit_code == 1) {
          require_clear_error(r, "flipped.h5'");
          ++errors;
        }
      }
    }
    REQUIRE(errors > 0);  // the first bytes hold the model's structure: those flips are refused
  }
}

namespace {

// A copy of a GPT-2 folder with one file rewritten: write(out, old text) streams the new one, so
// that a bloated file never sits whole in this process (whose peak a spawned child inherits).
using Rewrite = std::function<void(std::ofstream&, const std::string&)>;
std::string edited_copy(const std::string& from, const std::string& to, const std::string& file, const Rewrite& write) {
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  std::ofstream out(to + "/" + file, std::ios::binary | std::ios::trunc);
  write(out, read_file(from + "/" + file));
  return to;
}

// An edit of a small file's whole text.
Rewrite edit(const std::function<std::string(std::string)>& change) {
  return [change](std::ofstream& out, const std::string& old) { out << change(old); };
}

[[maybe_unused]] int64_t folder_bytes(const std::string& dir) {
  int64_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file()) total += static_cast<int64_t>(entry.file_size());
  return total;
}

uint64_t header_length(const std::string& safetensors) {
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = n << 8 | static_cast<uint8_t>(safetensors[k]);
  return n;
}

void put_length(std::ofstream& out, uint64_t n) {
  for (int k = 0; k < 8; ++k) out.put(static_cast<char>(n >> (8 * k)));
}

// model.safetensors with `entries` JSON text put first in its header and `bytes` after its data.
Rewrite safetensors_with(std::function<void(std::ofstream&)> entries, uint64_t entries_bytes, std::string bytes = "") {
  return [=](std::ofstream& out, const std::string& old) {
    const uint64_t n = header_length(old);
    put_length(out, n + entries_bytes);
    out << '{';
    entries(out);
    out << old.substr(9, n - 1) << old.substr(8 + n) << bytes;
  };
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// `count` copies of `item` inside an array: a bloated JSON value of known length.
void repeated(std::ofstream& out, const std::string& item, int64_t count) {
  out << '[';
  for (int64_t k = 0; k < count; ++k) out << item << ',';
  out << item << ']';
}

}  // namespace

TEST_CASE("hostile: GPT-2 folders whose files disagree in meaning or bloat end in one clear error", "[hostile][import]") {
  TempDir dir;
  const std::string good = dir.file("good");
  REQUIRE(write_gpt2_dir(good, 2, 8, 2, 16, 1));  // GPT-2's tokenizer files: scripts/fetch-reference.sh
  auto import = [&](const std::string& from) {
    return run_tinygpt({"import", "--from", from, "--out", from + ".h5"}, dir.file("out.txt"), kTimeLimit);
  };
  struct Case {
    std::string folder, mention;
  };
  std::vector<Case> cases;
  auto refused = [&](const std::string& file, const Rewrite& write, const std::string& mention) {
    cases.push_back({edited_copy(good, dir.file("case" + std::to_string(cases.size())), file, write), mention});
  };
  auto cut_lines = [](std::string text, int lines) {
    for (int k = 0; k <= lines; ++k) text.erase(text.find_last_of('\n', text.size() - 2) + 1);
    return text;
  };
  // The tokenizer's files: meaning.
  refused("merges.txt", edit([&](std::string t) { return cut_lines(t, 100); }), "entries are neither a byte, a merge's result");
  refused("merges.txt", edit([](std::string t) { std::replace(t.begin(), t.end(), '\n', '\r'); return t; }), "a lone CR");
  refused("merges.txt", edit([](std::string t) { return "#versionfoo" + t.substr(t.find('\n')); }),
          "\"#versionfoo\" is not the header");
  refused("vocab.json", edit([](std::string t) { return replaced(t, "\"<|endoftext|>\"", "\"a\\u0000b\""); }),
          "\"a\\u0000b\" (50256)");
  refused("vocab.json", edit([](std::string t) { return replaced(t, "\"<|endoftext|>\"", "\"<|a\\u0000b|>\""); }), "NUL");
  refused("vocab.json", edit([](std::string t) { return replaced(t, "\"<|endoftext|>\": 50256", "\"<|x|>\": 16777215"); }),
          "has id 16777215, past the model's vocab_size 50257");
  // Bloated JSON (12 MB each): refused while reading, before it costs more than its own size.
  refused("vocab.json", [](std::ofstream& out, const std::string&) { repeated(out, "[]", 4'000'000); },
          "an array nested 2 deep");
  refused("config.json", [](std::ofstream& out, const std::string& old) {
    out << "{\"padding\": ";
    repeated(out, "0", 6'000'000);
    out << ", " << old.substr(1);
  }, "more than 100000 values");
  const int64_t arrays = 4'000'000;
  refused("model.safetensors", safetensors_with([=](std::ofstream& out) {
    out << "\"bomb\": ";
    repeated(out, "[]", arrays);
    out << ", ";
  }, 8 + (2 + 3 * arrays + 1) + 2), "more than 200000 values");
  // Messages that name the cause.
  refused("model.safetensors", edit([](std::string t) {
    std::string header = replaced(t.substr(8, header_length(t)), "\"data_offsets\": [0, ", "\"data_offsets\": [\"0\", ");
    std::string out(8, '\0');
    for (int k = 0; k < 8; ++k) out[k] = static_cast<char>(static_cast<uint64_t>(header.size()) >> (8 * k));
    return out + header + t.substr(8 + header_length(t));
  }), "data_offsets holds \"0\", not a byte offset");
  refused("config.json", edit([](std::string t) { return "\xEF\xBB\xBF" + t; }), "byte order mark");
  refused("config.json", edit([](std::string t) { return replaced(t, "\"n_layer\": 2", "\"n_layer\": 1"); }),
          "config.json says n_layer 1, but");

  // Every folder is written before anything runs: this process's peak, which a spawned child
  // inherits in its figures, is then the same for the clean import and every case.
  const Run base = import(good);
  REQUIRE(base.exit_code == 0);
  for (const Case& c : cases) {
    INFO(c.folder << " -> " << c.mention);
    const Run r = import(c.folder);
    INFO("output: " << r.output);
    require_clear_error(r, c.mention);
    REQUIRE_FALSE(std::filesystem::exists(c.folder + ".h5"));
    // Peak memory: a clean import's plus 4x the folder's files (the bound for any import). Under
    // AddressSanitizer the figures are its shadow memory and quarantine, not the reader's.
#ifndef __SANITIZE_ADDRESS__
    INFO(fmt::format("peak {} MB, clean import {} MB, files {} MB", r.peak_rss_mb, base.peak_rss_mb,
                     folder_bytes(c.folder) >> 20));
    REQUIRE(r.peak_rss_mb <= base.peak_rss_mb + 4 * (folder_bytes(c.folder) >> 20));
#endif
  }
  const Run empty_out = run_tinygpt({"import", "--from", good, "--out", ""}, dir.file("out.txt"), kTimeLimit);
  require_clear_error(empty_out, "an empty output path");

  // A boolean mask buffer (as transformers writes h.N.attn.bias) is skipped like a float one.
  const std::string entry = R"("h.0.attn.bias": {"dtype": "BOOL", "shape": [1, 1, 16, 16], "data_offsets": [DATA, END]}, )";
  const std::string masked = edited_copy(good, dir.file("masked"), "model.safetensors", [&](std::ofstream& out, const std::string& old) {
    const uint64_t data = old.size() - 8 - header_length(old);
    const std::string e = replaced(replaced(entry, "DATA", std::to_string(data)), "END", std::to_string(data + 256));
    safetensors_with([&](std::ofstream& o) { o << e; }, e.size(), std::string(256, '\1'))(out, old);
  });
  const Run with_mask = import(masked);
  INFO(with_mask.output);
  REQUIRE(with_mask.exit_code == 0);
  // A complete pair is used when the other is only partly there, and the import says which.
  const std::string pairs = edited_copy(good, dir.file("pairs"), "vocab.json", edit([](std::string) { return "{}"; }));
  std::filesystem::copy_file(good + "/vocab.json", pairs + "/encoder.json");
  std::filesystem::rename(pairs + "/merges.txt", pairs + "/vocab.bpe");
  const Run chosen = import(pairs);
  INFO(chosen.output);
  REQUIRE(chosen.exit_code == 0);
  REQUIRE(chosen.output.find("tokenizer from encoder.json + vocab.bpe") != std::string::npos);
}
