// io's HDF5 pieces as a program with a format of its own uses them: GroupWriter and write_sealed,
// the seal, Reader over the checked tree.
#include <catch2/catch.hpp>
#include <hdf5.h>

#include <fstream>

#include "temp_files.h"
#include "tinygpt/io/hdf5_reader.h"
#include "tinygpt/io/hdf5_seal.h"
#include "tinygpt/io/hdf5_tree.h"
#include "tinygpt/io/hdf5_writer.h"

using namespace tinygpt;
using tinygpt::testing::TempDir;

namespace {

void write_probe(const std::string& path, const Tensor& w, const Tensor& variance) {
  io::hdf5::write_sealed(path, "probe file", [&](const io::hdf5::GroupWriter& root) {
    root.put("format", std::string("my-probe"));
    root.put_int32("format_version", 2);
    root.put("scale", 0.25);
    root.put("names", std::vector<std::string>{"a", "b"});
    const io::hdf5::GroupWriter weights = root.group("weights");
    weights.put_floats("w", w);
    weights.put_floats("variance", variance, io::hdf5::FloatValues::non_negative);
    weights.put_ints("ids", {3, 1, 2, 7}, {2, 2});
    root.group("weights/more").put_bytes("blob", std::string("\x00\x01\xff", 3));
  });
}

// Reads a probe file as its own reader would, through the seal and the checked tree.
template <class Read>
void read_probe(const std::string& path, const Read& read) {
  io::hdf5::CheckpointImage image = io::hdf5::read_checkpoint_image(path);
  REQUIRE(image.sealed);
  const io::hdf5::File file = io::hdf5::open_checkpoint_image(std::move(image), path);
  read(io::hdf5::Reader("probe file", path, file));
}

}  // namespace

TEST_CASE("hdf5: a format of one's own round-trips through GroupWriter and Reader", "[io][hdf5]") {
  TempDir dir;
  const std::string path = dir.file("probe.h5");
  const Tensor w = Tensor::from_vector({2, 3}, {1, -2, 3, -4, 5, -6});
  write_probe(path, w, Tensor::from_vector({3}, {0, 1, 2}));
  read_probe(path, [&](const io::hdf5::Reader& r) {
    const io::hdf5::Group& root = r.group("/");
    REQUIRE(r.text(root, "/", "format") == "my-probe");
    REQUIRE(r.integer(root, "/", "format_version", io::Range{1, 2}) == 2);
    REQUIRE(r.number(root, "/", "scale", io::Range{0, 1}) == 0.25);
    REQUIRE(r.text(root, "/", "names") == "a\nb");
    Tensor back = Tensor::empty({2, 3});
    r.floats("/weights/w", back);
    REQUIRE(back.to_vector() == w.to_vector());
    REQUIRE(r.integers("/weights/ids", {2, 2}) == std::vector<int64_t>{3, 1, 2, 7});
    REQUIRE(r.bytes("/weights/more/blob", 3) == std::string("\x00\x01\xff", 3));
    // A range is checked before the value is used; a wrong shape names the dataset.
    REQUIRE_THROWS_WITH(r.integer(root, "/", "format_version", io::Range{1, 1}),
                        Catch::Contains("probe.h5") && Catch::Contains("format_version"));
    Tensor wrong = Tensor::empty({3, 2});
    REQUIRE_THROWS_WITH(r.floats("/weights/w", wrong), Catch::Contains("/weights/w"));
  });
}

TEST_CASE("hdf5: the same content makes the same bytes, and the seal covers them", "[io][hdf5]") {
  TempDir dir;
  const Tensor w = Tensor::uniform({4, 4}, 1, -1, 1), v = Tensor::uniform({4}, 2, 0, 1);
  write_probe(dir.file("a.h5"), w, v);
  write_probe(dir.file("b.h5"), w, v);
  const std::string bytes = tinygpt::testing::read_file(dir.file("a.h5"));
  REQUIRE(bytes == tinygpt::testing::read_file(dir.file("b.h5")));
  REQUIRE(bytes.rfind("tinygpt checkpoint seal 1\nsha256 ", 0) == 0);

  std::string damaged = bytes;
  damaged[damaged.size() / 2] ^= 1;
  std::ofstream(dir.file("a.h5"), std::ios::binary) << damaged;
  REQUIRE_THROWS_WITH(io::hdf5::read_checkpoint_image(dir.file("a.h5")),
                      Catch::Contains("a.h5") && Catch::Contains("damaged"));
}

TEST_CASE("hdf5: values a dataset may not hold are refused, written or read", "[io][hdf5][errors]") {
  TempDir dir;
  const std::string path = dir.file("probe.h5");
  const Tensor w = Tensor::from_vector({2}, {1, 2});
  REQUIRE_THROWS_WITH(write_probe(path, Tensor::from_vector({2}, {1, NAN}), Tensor::from_vector({1}, {0})),
                      Catch::Contains("cannot write probe file") && Catch::Contains("w holds nan at element 1"));
  REQUIRE_THROWS_WITH(write_probe(path, w, Tensor::from_vector({2}, {0, -1})),
                      Catch::Contains("variance holds -1 at element 1"));
  REQUIRE_FALSE(std::ifstream(path).good());  // nothing left behind

  // A negative value written as any float is refused where the reader expects none.
  write_probe(path, Tensor::from_vector({2}, {-1, 2}), Tensor::from_vector({1}, {0}));
  read_probe(path, [&](const io::hdf5::Reader& r) {
    Tensor back = Tensor::empty({2});
    r.floats("/weights/w", back);
    REQUIRE_THROWS_WITH(r.floats("/weights/w", back, io::hdf5::FloatValues::non_negative),
                        Catch::Contains("/weights/w holds -1 at element 0"));
  });

  // A file that is not HDF5 is never replaced.
  const std::string notes = dir.write("notes.txt", "my notes\n");
  REQUIRE_THROWS_WITH(write_probe(notes, w, Tensor::from_vector({1}, {0})), Catch::Contains("notes.txt"));
  REQUIRE(tinygpt::testing::read_file(notes) == "my notes\n");
}

namespace {

// A file as other tools write it, with every storage a dataset may have: plain arrays in either byte
// order (read here from the file's bytes), and chunked, compact and variable-length ones (read by
// libhdf5 in the child process and handed back).
void write_other_tool_file(const std::string& path) {
  const hid_t create = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_userblock(create, static_cast<hsize_t>(io::hdf5::kUserBlockBytes));
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, create, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const auto put = [&](const char* name, hid_t file_type, hid_t memory_type, hsize_t n, const void* values,
                       hid_t properties = H5P_DEFAULT) {
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    const hid_t set = H5Dcreate2(file, name, file_type, space, H5P_DEFAULT, properties, H5P_DEFAULT);
    REQUIRE(set >= 0);
    if (n > 0) REQUIRE(H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0);
    H5Dclose(set), H5Sclose(space);
  };
  const double f64[3] = {1.5, -2.25, 3e-3};
  const float f32[3] = {0.1f, -7.0f, 1e-30f};
  const int16_t i16[4] = {-3, 300, -32768, 7};
  const uint64_t u64[3] = {0, 5, UINT64_MAX};
  const uint8_t u8[3] = {0, 1, 255};
  put("f64be", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, 3, f64);
  put("f32be", H5T_IEEE_F32BE, H5T_NATIVE_FLOAT, 3, f32);
  put("f32le", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 3, f32);
  put("i16be", H5T_STD_I16BE, H5T_NATIVE_INT16, 4, i16);
  put("u64le", H5T_STD_U64LE, H5T_NATIVE_UINT64, 3, u64);
  put("u8", H5T_STD_U8LE, H5T_NATIVE_UINT8, 3, u8);
  put("empty", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 0, nullptr);
  const hid_t chunked = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk = 2;
  H5Pset_chunk(chunked, 1, &chunk);
  put("chunked", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, f64, chunked);
  const hid_t compact = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_layout(compact, H5D_COMPACT);
  put("compact", H5T_STD_I16LE, H5T_NATIVE_INT16, 4, i16, compact);
  const hid_t text = H5Tcopy(H5T_C_S1);
  H5Tset_size(text, H5T_VARIABLE);
  H5Tset_cset(text, H5T_CSET_UTF8);
  const char* texts[3] = {"a", "\xce\xb2\xce\xb3", ""};
  put("texts", text, text, 3, texts);
  const hid_t null_space = H5Screate(H5S_NULL);  // a dataset and an attribute with no values at all
  const hid_t nothing = H5Dcreate2(file, "nothing", H5T_IEEE_F32LE, null_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Aclose(H5Acreate2(nothing, "none", H5T_STD_I32LE, null_space, H5P_DEFAULT, H5P_DEFAULT));
  H5Dclose(nothing), H5Sclose(null_space);
  H5Tclose(text), H5Pclose(chunked), H5Pclose(compact), H5Fclose(file), H5Pclose(create);
  io::hdf5::seal_checkpoint(path);
}

}  // namespace

TEST_CASE("hdf5: every storage and byte order reads as libhdf5 reads it, whole or streamed", "[io][hdf5]") {
  TempDir dir;
  const std::string path = dir.file("other.h5");
  write_other_tool_file(path);
  const auto check = [](const io::hdf5::File& file) {
    const io::hdf5::Group& root = file.root();
    const auto floats = [&](const char* name) {
      const io::hdf5::Dataset& d = root.datasets.at(name);
      std::vector<float> out(static_cast<size_t>(d.count()));
      file.read(d, name, out.data());
      return out;
    };
    const std::vector<float> f64 = {1.5f, -2.25f, static_cast<float>(3e-3)}, f32 = {0.1f, -7.0f, 1e-30f};
    REQUIRE(floats("f64be") == f64);
    REQUIRE(floats("chunked") == f64);
    REQUIRE(floats("f32be") == f32);
    REQUIRE(floats("f32le") == f32);
    REQUIRE(floats("empty").empty());
    const std::vector<int64_t> i16 = {-3, 300, -32768, 7};
    REQUIRE(file.read_integers(root.datasets.at("i16be"), "i16be") == i16);
    REQUIRE(file.read_integers(root.datasets.at("compact"), "compact") == i16);
    REQUIRE(file.read_integers(root.datasets.at("u64le"), "u64le") == std::vector<int64_t>{0, 5, INT64_MAX});
    REQUIRE(file.read_bytes(root.datasets.at("u8"), "u8") == std::string("\x00\x01\xff", 3));
    REQUIRE(file.read_texts(root.datasets.at("texts"), "texts") ==
            std::vector<std::string>{"a", "\xce\xb2\xce\xb3", ""});
    REQUIRE_THROWS_WITH(file.read_bytes(root.datasets.at("i16be"), "i16be"), Catch::Contains("not a dataset of bytes"));
    REQUIRE_THROWS_WITH(file.read_texts(root.datasets.at("u8"), "u8"), Catch::Contains("variable-length strings"));
    const io::hdf5::Dataset& nothing = root.datasets.at("nothing");
    REQUIRE(nothing.attributes.at("none").kind == io::hdf5::Attribute::Kind::other);
    std::vector<float> none(1);
    REQUIRE_THROWS_WITH(file.read(nothing, "nothing", none.data()), Catch::Contains("nothing: it has a null dataspace"));
  };
  check(io::hdf5::open_checkpoint_image(io::hdf5::read_checkpoint_image(path), path));
  const io::hdf5::OpenedCheckpoint streamed = io::hdf5::open_checkpoint_streamed(path);
  REQUIRE(streamed.sealed);
  check(*streamed.file);
}

TEST_CASE("hdf5: re-sealed files with flipped metadata never reach libhdf5 in this process", "[io][hdf5][errors][slow]") {
  // The seal is a SHA-256 anyone can recompute: a crafted file passes it. libhdf5 may crash or
  // corrupt its heap on such a file; it does so only in the child, and this process only reads
  // a checked description and bounds-checked bytes. Were libhdf5 to parse here, this test would die.
  TempDir dir;
  std::vector<std::string> vocab;
  for (int i = 0; i < 300; ++i) vocab.push_back(std::string(static_cast<size_t>(i % 7), static_cast<char>('a' + i % 26)));
  const std::string path = dir.file("probe.h5");
  io::hdf5::write_sealed(path, "probe file", [&](const io::hdf5::GroupWriter& root) {
    root.put("format", std::string("my-probe"));
    root.put_texts("specials", {"<|endoftext|>", "<pad>"});
    root.put_text_dataset("vocab", vocab);
    root.group("weights").put_floats("w", Tensor::uniform({8, 8}, 3, -1, 1));
  });
  write_other_tool_file(dir.file("other.h5"));
  std::vector<size_t> positions;
  for (const std::string& source : {path, dir.file("other.h5")}) {
    const std::string bytes = tinygpt::testing::read_file(source);
    for (const char* signature : {"OHDR", "GCOL", "TREE", "HEAP", "SNOD", "BTHD", "BTLF", "FRHP", "FHDB", "OCHK"})
      for (size_t at = bytes.find(signature); at != std::string::npos; at = bytes.find(signature, at + 1))
        for (size_t k = 4; k < 72; k += 5) positions.push_back(at + k);
    for (size_t k = 512; k < 512 + 96; k += 3) positions.push_back(k);  // the superblock
    int errors = 0, loaded = 0;
    for (size_t i = 0; i < positions.size(); ++i) {
      std::string flipped = bytes;
      if (positions[i] >= flipped.size()) continue;
      flipped[positions[i]] = static_cast<char>(flipped[positions[i]] ^ (i % 2 ? 0xFF : 0x5A));
      io::hdf5::seal_image(flipped.data(), flipped.size());
      const std::string damaged = dir.write("flipped.h5", flipped);
      try {
        const io::hdf5::OpenedCheckpoint opened = io::hdf5::open_checkpoint_streamed(damaged);
        for (const auto& [name, d] : opened.file->root().datasets) {
          if (d.kind == io::hdf5::Dataset::Kind::text) (void)opened.file->read_texts(d, name);
          if (d.kind == io::hdf5::Dataset::Kind::integer) (void)opened.file->read_integers(d, name);
        }
        ++loaded;
      } catch (const std::runtime_error& e) {
        INFO(e.what());
        REQUIRE(std::string(e.what()).find("flipped.h5") != std::string::npos);
        ++errors;
      }
    }
    INFO(errors << " errors, " << loaded << " loaded");
    REQUIRE(errors > 10);
    positions.clear();
  }
}

TEST_CASE("hdf5: the values the child reads are bounded, attributes' strings included", "[io][hdf5][errors]") {
  // 70 strings of 1 MB in one attribute: more than the child hands back (64 MB), refused in one
  // line instead of growing the child (and this process) without bound.
  TempDir dir;
  const std::string path = dir.file("strings.h5");
  const hid_t create = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_userblock(create, static_cast<hsize_t>(io::hdf5::kUserBlockBytes));
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, create, H5P_DEFAULT);
  const hid_t text = H5Tcopy(H5T_C_S1);
  H5Tset_size(text, H5T_VARIABLE);
  const hsize_t n = 70;
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const std::string megabyte(size_t{1} << 20, 'x');
  std::vector<const char*> strings(n, megabyte.c_str());
  const hid_t attribute = H5Acreate2(file, "many", text, space, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(H5Awrite(attribute, text, strings.data()) >= 0);
  H5Aclose(attribute), H5Sclose(space), H5Tclose(text), H5Fclose(file), H5Pclose(create);
  io::hdf5::seal_checkpoint(path);
  REQUIRE_THROWS_WITH(io::hdf5::open_checkpoint_streamed(path),
                      Catch::Contains("strings.h5") && Catch::Contains("attribute 'many' of /") &&
                          Catch::Contains("more than 64 MB of values"));
}
