// The newer file surfaces, damaged the way the older ones are in test_hostile.cpp: SentencePiece
// model files (through prepare and train; inside checkpoints they are test_hostile.cpp's), Hugging Face Llama folders, llama2.c model
// files and folders of token shards. The damaged files are generated here from valid ones (seeded
// byte flips, cuts, and edits aimed at each format's sizes and offsets). Every run must end by
// itself within 30 s and 1 GB, with exit 0 or one clear line naming the file, change no input and
// leave nothing where the command line did not say. Every case runs in the sanitizer job too
// (a few hundred runs: no sampling).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "hostile/hostile.h"
#include "sentencepiece_model.h"

using namespace tinygpt::testing;
namespace fs = std::filesystem;

namespace {

// The bound on any run here, on a damaged file of a few kilobytes.
constexpr auto kSurfaceTimeLimit = std::chrono::seconds(30);

// Runs tinygpt with `args`, its output in dir/out.txt.
Run run_on(const TempDir& dir, const std::string& args) {
  return run_tinygpt(words(args), dir.file("out.txt"), kSurfaceTimeLimit);
}

// A text of about 8 KB, as the runaway character map was fed.
std::string small_text() {
  std::string text;
  while (text.size() < 8192) text += "Once upon a time, Tom found 42 red apples. 나는 사과를 좋아해요.\n";
  return text;
}

// Nothing but the named files (and the folder's own) in `dir`: no staging folder, no .tmp file.
void require_only(const std::string& dir, const std::vector<std::string>& names) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    INFO("left in " << dir << ": " << name);
    REQUIRE(std::find(names.begin(), names.end(), name) != names.end());
  }
}

void write_bytes(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

}  // namespace

TEST_CASE("hostile: damaged SentencePiece model files through prepare and train", "[hostile][sentencepiece][slow]") {
  TempDir dir;
  const std::string text = dir.write("text.txt", small_text());
  const std::string good = read_file(write_sentencepiece_model(dir, "nfkc"));  // with a character map
  // The generated set: edits aimed at the character map, then seeded flips anywhere in the model.
  std::vector<std::pair<std::string, std::string>> models;  // name, bytes
  auto charsmap_edit = [&](const char* name, auto change) { models.push_back({name, with_charsmap(good, change)}); };
  auto trie_bytes = [](const std::string& map) {
    uint32_t n = 0;
    std::memcpy(&n, map.data(), 4);
    return n;
  };
  charsmap_edit("cut", [](std::string map) { return map.substr(0, map.size() / 2); });
  charsmap_edit("trie past end", [](std::string map) {
    const auto n = static_cast<uint32_t>(map.size() - 2);
    std::memcpy(map.data(), &n, 4);
    return map;
  });
  charsmap_edit("no NUL", [&](std::string map) {
    std::replace(map.begin() + 4 + trie_bytes(map), map.end(), '\0', 'A');
    return map;
  });
  charsmap_edit("strings cut", [&](std::string map) { return map.substr(0, 4 + trie_bytes(map) + 3); });
  std::mt19937 random(7);
  for (int i = 0; i < 12; ++i)
    charsmap_edit("trie flip", [&](std::string map) {
      const size_t at = 4 + random() % trie_bytes(map);
      map[at] = static_cast<char>(map[at] ^ (1u << (random() % 8)));
      return map;
    });
  for (int i = 0; i < 24; ++i) models.push_back({"flip", flip(good, random() % good.size(), static_cast<uint8_t>(1u << (random() % 8)))});
  for (size_t at : {size_t{0}, size_t{1}, size_t{3}, size_t{7}}) models.push_back({"head flip", flip(good, at, 0xFF)});
  models.push_back({"half", good.substr(0, good.size() / 2)});

  int refused = 0, k = 0;
  for (const auto& [name, bytes] : models) {
    const std::string model = dir.file(fmt::format("m{}.model", k++));
    write_bytes(model, bytes);
    fs::create_directories(dir.file("work"));
    const std::string out = dir.file("work/shards");
    const Run r = run_on(dir, "prepare --data " + text + " --tokenizer sentencepiece --tokenizer-model " + model +
                                   " --out " + out);
    INFO(name << " (" << model << "): " << r.output);
    require_no_crash(r);
    if (r.exit_code == 1) {
      require_clear_error(r, model);
      REQUIRE_FALSE(fs::exists(out));  // nothing made, nothing left beside it
      ++refused;
    } else {
      fs::remove_all(out);
    }
    require_only(dir.file("work"), {});  // no staging folder, lock or .tmp file left
    fs::remove(model);
  }
  REQUIRE(refused > 0);

  // Train and tokens on a model whose character map has no NUL: refused at once, not 3.5 GB later.
  const std::string no_nul = dir.file("no_nul.model");
  write_bytes(no_nul, with_charsmap(good, [&](std::string map) {
    std::replace(map.begin() + 4 + trie_bytes(map), map.end(), '\0', 'A');
    return map;
  }));
  const Run train = run_on(dir, "train --data " + text + " --tokenizer sentencepiece --tokenizer-model " + no_nul +
                                     " --layers 1 --heads 2 --embd 16 --block 16 --batch 2 --iters 1 --out " + dir.file("x.h5"));
  require_clear_error(train, "does not end (NUL)");
  REQUIRE_FALSE(fs::exists(dir.file("x.h5")));
}

namespace {

// A small Llama-shaped run with a SentencePiece model, exported as Hugging Face's folder and as
// llama2.c's model file: the valid files the cases below damage.
struct LlamaFiles {
  TempDir dir;
  std::string model, hf, bin;
  LlamaFiles() {
    model = write_sentencepiece_model(dir);
    const Run trained = run_on(dir, "train --data " + dir.write("stories.txt", sentencepiece_text()) +
                                         " --tokenizer sentencepiece --tokenizer-model " + model +
                                         " --arch llama --kv-heads 1 --layers 1 --heads 2 --embd 16 --block 16 "
                                         "--batch 2 --iters 2 --eval-every 2 --eval-iters 1 --threads 1 --out " +
                                         dir.file("llama.h5"));
    INFO(trained.output);
    REQUIRE(trained.exit_code == 0);
    hf = dir.file("hf"), bin = dir.file("model.bin");
    REQUIRE(run_on(dir, "export --ckpt " + dir.file("llama.h5") + " --format hf --out " + hf).exit_code == 0);
    REQUIRE(run_on(dir, "export --ckpt " + dir.file("llama.h5") + " --format llama2c --out " + bin).exit_code == 0);
  }
};

std::string replaced_once(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("hostile: damaged Hugging Face Llama folders import to one clear error, or to a model", "[hostile][import][slow]") {
  LlamaFiles files;
  const TempDir& dir = files.dir;
  const std::string config = read_file(files.hf + "/config.json"), weights = read_file(files.hf + "/model.safetensors");
  uint64_t header = 0;
  std::memcpy(&header, weights.data(), 8);
  struct Case {
    std::string file, bytes;
  };
  std::vector<Case> cases;
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"vocab_size\": 400", "\"vocab_size\": 500"}, {"\"vocab_size\": 400", "\"vocab_size\": 300"},
           {"\"hidden_size\": 16", "\"hidden_size\": 32"}, {"\"num_key_value_heads\": 1", "\"num_key_value_heads\": 3"},
           {"\"tie_word_embeddings\": true", "\"tie_word_embeddings\": false"}, {"\"rms_norm_eps\": 1e-05", "\"rms_norm_eps\": 1e30"},
           {"\"rope_theta\": 10000", "\"rope_theta\": 1e30"}, {"\"max_position_embeddings\": 16", "\"max_position_embeddings\": 0"},
           {"\"num_hidden_layers\": 1", "\"num_hidden_layers\": 100000"}, {"\"intermediate_size\": 64", "\"intermediate_size\": 2"}})
    cases.push_back({"config.json", replaced_once(config, from, to)});
  std::mt19937 random(17);
  for (int i = 0; i < 24; ++i)  // the safetensors header: shapes, offsets, dtypes
    cases.push_back({"model.safetensors", flip(weights, 8 + random() % header, static_cast<uint8_t>(1u << (random() % 8)))});
  for (int i = 0; i < 4; ++i) cases.push_back({"model.safetensors", flip(weights, 8 + header + random() % (weights.size() - 8 - header), 0x7F)});
  cases.push_back({"model.safetensors", weights.substr(0, weights.size() - 5)});
  cases.push_back({"model.safetensors", weights.substr(0, 4)});
  const std::string tokenizer = read_file(files.hf + "/tokenizer.model");
  for (int i = 0; i < 6; ++i) cases.push_back({"tokenizer.model", flip(tokenizer, random() % tokenizer.size(), 0xFF)});

  fs::create_directories(dir.file("work"));
  int refused = 0;
  for (const Case& c : cases) {
    const std::string folder = dir.file("damaged");
    fs::remove_all(folder);
    fs::copy(files.hf, folder);
    write_bytes(folder + "/" + c.file, c.bytes);
    const auto before = snapshot(folder);
    const std::string out = dir.file("work/imported.h5");
    const Run r = run_on(dir, "import --from " + folder + " --out " + out);
    INFO(c.file << ": " << r.output);
    require_no_crash(r);
    REQUIRE(snapshot(folder) == before);
    if (r.exit_code == 1) {
      require_clear_error(r, folder);
      require_only(dir.file("work"), {});
      ++refused;
    } else {
      fs::remove(out);
    }
  }
  REQUIRE(refused > static_cast<int>(cases.size()) / 2);
}

TEST_CASE("hostile: damaged llama2.c model files import to one clear error, or to a model", "[hostile][import]") {
  LlamaFiles files;
  const TempDir& dir = files.dir;
  const std::string bin = read_file(files.bin);
  struct Case {
    std::string name, bytes;
    bool must_refuse;  // no model's weights fill the file exactly (seq_len sizes the RoPE tables it holds)
  };
  std::vector<Case> cases;
  const char* words[] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
  for (size_t word = 0; word < 7; ++word)
    for (int32_t value : {0, -1, 3, 1 << 20, INT32_MAX}) {
      std::string edited = bin;
      std::memcpy(edited.data() + 4 * word, &value, 4);
      cases.push_back({fmt::format("{} = {}", words[word], value), edited, true});
    }
  std::mt19937 random(19);
  for (int i = 0; i < 8; ++i) {
    const size_t at = random() % 28;
    cases.push_back({fmt::format("a bit of header byte {} flipped", at),
                     flip(bin, at, static_cast<uint8_t>(1u << (random() % 8))), true});
  }
  cases.push_back({"4 bytes short", bin.substr(0, bin.size() - 4), true});
  cases.push_back({"4 bytes more", bin + "tail", true});
  std::string versioned(256, '\0');
  const int32_t head[2] = {0x616b3432, 2};
  std::memcpy(versioned.data(), head, sizeof head);
  cases.push_back({"a version 2 header before version 0's weights", versioned + bin.substr(28), true});
  fs::create_directories(dir.file("work"));
  for (const Case& c : cases) {
    const std::string path = dir.file("damaged.bin"), out = dir.file("work/imported.h5");
    write_bytes(path, c.bytes);
    const Run r = run_on(dir, "import --from " + path + " --tokenizer-model " + files.model + " --out " + out);
    INFO(c.name << ": " << r.output);
    require_no_crash(r);
    if (r.exit_code == 1) {
      require_clear_error(r, path);
      require_only(dir.file("work"), {});
    } else {
      REQUIRE_FALSE(c.must_refuse);
      REQUIRE(run_on(dir, "info --ckpt " + out).exit_code == 0);  // what was accepted is a model
      fs::remove(out);
    }
  }
}

TEST_CASE("hostile: damaged shard folders train and evaluate to one clear error, or as shards", "[hostile][shards][slow]") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 30; ++i) text += "To be, or not to be, that is the question. 나는 학교에 갔다.\n";
  const std::string corpus = dir.write("t.txt", text), good = dir.file("good");
  REQUIRE(run_on(dir, "prepare --data " + corpus + " --out " + good + " --shard-tokens 400").exit_code == 0);
  REQUIRE(run_on(dir, "prepare --data " + corpus + " --out " + dir.file("bpe") + " --tokenizer bpe --vocab-size 300 "
                       "--shard-tokens 400").exit_code == 0);
  const std::string model = " --layers 1 --heads 2 --embd 16 --block 16 --batch 2 --eval-every 2 --eval-iters 1 --threads 1";
  REQUIRE(run_on(dir, "train --data " + good + " --iters 2 --out " + dir.file("base.h5") + model).exit_code == 0);
  const std::string shard = "tinygpt_train_000001.bin", bytes = read_file(good + "/" + shard);
  struct Case {
    std::string name;
    std::function<void(const std::string& folder)> damage;
  };
  std::vector<Case> cases;
  auto rewrite = [&](std::string name, std::function<std::string(std::string)> change, std::string file = "") {
    cases.push_back({name, [=](const std::string& folder) {
                       const std::string path = folder + "/" + (file.empty() ? shard : file);
                       write_bytes(path, change(read_file(path)));
                     }});
  };
  for (size_t word = 0; word < 14; ++word)
    for (int32_t value : {0, -1, 7, 1 << 30}) {
      rewrite(fmt::format("header word {} = {}", word, value), [=](std::string b) {
        std::memcpy(b.data() + 4 * word, &value, 4);
        return b;
      });
    }
  rewrite("cut", [](std::string b) { return b.substr(0, b.size() - 3); });
  rewrite("longer", [](std::string b) { return b + "xx"; });
  rewrite("header only", [](std::string b) { return b.substr(0, 1024); });
  rewrite("id past the vocabulary", [](std::string b) {
    b[1024 + 10] = '\xFF', b[1024 + 11] = '\xFF';
    return b;
  });
  rewrite("tokenizer file flipped", [](std::string b) { return flip(b, b.size() / 2, 0xFF); }, "tokenizer.h5");
  rewrite("tokenizer file cut", [](std::string b) { return b.substr(0, b.size() / 3); }, "tokenizer.h5");
  cases.push_back({"a shard of another tokenizer", [&](const std::string& folder) {
                     fs::copy_file(dir.file("bpe/tinygpt_train_000000.bin"), folder + "/tinygpt_train_000009.bin");
                   }});
  cases.push_back({"an empty val shard", [&](const std::string& folder) {
                     for (const auto& entry : fs::directory_iterator(folder))
                       if (entry.path().filename().string().find("_val_") != std::string::npos) fs::remove(entry);
                     std::string empty = bytes.substr(0, 1024);
                     std::memset(empty.data() + 8, 0, 4);
                     write_bytes(folder + "/tinygpt_val_000000.bin", empty);
                   }});
  cases.push_back({"a folder named as a shard", [&](const std::string& folder) {
                     fs::create_directories(folder + "/tinygpt_train_000009.bin");
                   }});
  fs::create_directories(dir.file("work"));
  for (const Case& c : cases) {
    const std::string folder = dir.file("damaged");
    fs::remove_all(folder);
    fs::copy(good, folder);
    c.damage(folder);
    const auto before = snapshot(folder);
    const std::string out = dir.file("work/run.h5");
    for (const std::string& command : {"train --data " + folder + " --iters 2 --out " + out + model,
                                      "eval --ckpt " + dir.file("base.h5") + " --data " + folder}) {
      const Run r = run_on(dir, command);
      INFO(c.name << ": " << command << ": " << r.output);
      require_no_crash(r);
      if (r.exit_code == 1) require_clear_error(r, folder);
      REQUIRE(snapshot(folder) == before);
    }
    fs::remove_all(dir.file("work"));
    fs::create_directories(dir.file("work"));
  }
}
