// io's HDF5 pieces as a program with a format of its own uses them: GroupWriter and write_sealed,
// the seal, Reader over the checked tree.
#include <catch2/catch.hpp>

#include <fstream>

#include "temp_files.h"
#include "tinygpt/io/hdf5_reader.h"
#include "tinygpt/io/hdf5_seal.h"
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
