#include "hdf5_writer.h"

#include <H5Cpp.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "hdf5_seal.h"
#include "output_files.h"

namespace tinygpt::io::hdf5 {

struct GroupWriter::Node {
  H5::Group group;
};

namespace {

H5::StrType string_type(const std::string& value) {
  H5::StrType t(H5::PredType::C_S1, std::max<size_t>(1, value.size()));
  t.setCset(H5T_CSET_UTF8);
  t.setStrpad(H5T_STR_NULLPAD);
  return t;
}

H5::StrType utf8_strings() {
  H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
  type.setCset(H5T_CSET_UTF8);
  return type;
}

std::vector<const char*> c_strings(const std::vector<std::string>& values) {
  std::vector<const char*> pointers;
  for (const auto& v : values) pointers.push_back(v.c_str());
  return pointers;
}

H5::DataSpace space(const std::vector<uint64_t>& dims) {
  const std::vector<hsize_t> d(dims.begin(), dims.end());
  return H5::DataSpace(static_cast<int>(d.size()), d.data());
}

// Objects are created without modification times: the same content always makes the same bytes.
H5::DSetCreatPropList untimed_dataset() {
  H5::DSetCreatPropList plist;
  H5Pset_obj_track_times(plist.getId(), false);
  return plist;
}

}  // namespace

GroupWriter::GroupWriter(std::shared_ptr<Node> node) : node_(std::move(node)) {}

GroupWriter GroupWriter::group(const std::string& name) const {
  const hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_obj_track_times(gcpl, false);
  const hid_t id = H5Gcreate2(node_->group.getId(), name.c_str(), H5P_DEFAULT, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  if (id < 0) throw H5::GroupIException("GroupWriter::group", "cannot create group " + name);
  auto node = std::make_shared<Node>(Node{H5::Group(id)});  // holds its own reference
  H5Gclose(id);
  return GroupWriter(std::move(node));
}

void GroupWriter::put(const char* name, const std::string& value) const {
  const H5::StrType type = string_type(value);
  std::string padded = value;
  padded.resize(type.getSize(), '\0');
  node_->group.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, padded.data());
}
void GroupWriter::put(const char* name, int64_t value) const {
  node_->group.createAttribute(name, H5::PredType::STD_I64LE, H5::DataSpace(H5S_SCALAR))
      .write(H5::PredType::NATIVE_INT64, &value);
}
void GroupWriter::put(const char* name, double value) const {
  node_->group.createAttribute(name, H5::PredType::IEEE_F64LE, H5::DataSpace(H5S_SCALAR))
      .write(H5::PredType::NATIVE_DOUBLE, &value);
}
void GroupWriter::put_int32(const char* name, int32_t value) const {
  node_->group.createAttribute(name, H5::PredType::STD_I32LE, H5::DataSpace(H5S_SCALAR))
      .write(H5::PredType::NATIVE_INT32, &value);
}
void GroupWriter::put(const char* name, const std::vector<std::string>& values) const {
  std::string joined;
  for (const auto& v : values) joined += (joined.empty() ? "" : "\n") + v;
  put(name, joined);
}

void GroupWriter::put_texts(const char* name, const std::vector<std::string>& values) const {
  const H5::StrType type = utf8_strings();
  const hsize_t n = values.size();
  node_->group.createAttribute(name, type, H5::DataSpace(1, &n)).write(type, c_strings(values).data());
}

void GroupWriter::put_words(const std::string& name, const uint64_t* words, const std::vector<uint64_t>& dims) const {
  node_->group.createAttribute(name, H5::PredType::STD_U64LE, space(dims)).write(H5::PredType::NATIVE_UINT64, words);
}

void GroupWriter::put_text_dataset(const char* name, const std::vector<std::string>& values) const {
  const H5::StrType type = utf8_strings();
  const hsize_t n = values.size();
  node_->group.createDataSet(name, type, H5::DataSpace(1, &n), untimed_dataset()).write(c_strings(values).data(), type);
}

void GroupWriter::put_floats(const std::string& name, const Tensor& t, FloatValues values) const {
  const Tensor c = t.contiguous();
  const float* x = c.data();
  const int64_t n = c.numel();
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]) || (values == FloatValues::non_negative && x[i] < 0))
      throw std::runtime_error(fmt::format("{} holds {} at element {}", name, x[i], i));
  const std::vector<uint64_t> dims(t.shape().begin(), t.shape().end());
  node_->group.createDataSet(name, H5::PredType::IEEE_F32LE, space(dims), untimed_dataset())
      .write(x, H5::PredType::NATIVE_FLOAT);
}

void GroupWriter::put_ints(const std::string& name, const std::vector<int32_t>& values,
                           const std::vector<uint64_t>& dims) const {
  H5::DataSet ds = node_->group.createDataSet(name, H5::PredType::STD_I32LE, space(dims), untimed_dataset());
  if (!values.empty()) ds.write(values.data(), H5::PredType::NATIVE_INT32);
}

void GroupWriter::put_bytes(const std::string& name, const std::string& bytes) const {
  const hsize_t n = bytes.size();
  H5::DataSet ds = node_->group.createDataSet(name, H5::PredType::STD_U8LE, H5::DataSpace(1, &n), untimed_dataset());
  if (!bytes.empty()) ds.write(bytes.data(), H5::PredType::NATIVE_UCHAR);
}

namespace {

// A file's bytes as libhdf5's core driver left them: its own buffer, taken over when the file
// closes instead of freed, so the image is never copied (a 124M model's is 500 MB).
struct Image {
  std::unique_ptr<char, decltype(&std::free)> bytes{nullptr, &std::free};
  size_t size = 0;
};

// The whole file, made by libhdf5 in memory (its core driver): a disk that fills up, or any other
// failure of the file system, then meets our own writes, which report it, instead of libhdf5's,
// which cannot close such a file again without crashing.
Image hdf5_image(const std::function<void(const GroupWriter&)>& fill) {
  H5::FileCreatPropList create;
  create.setUserblock(kUserBlockBytes);  // room for the seal
  H5Pset_obj_track_times(create.getId(), false);  // the root group
  H5::FileAccPropList access;
  H5Pset_fapl_core(access.getId(), size_t{1} << 20, false);  // grows 1 MB at a time (realloc); never on disk
  void* kept = nullptr;
  H5FD_file_image_callbacks_t buffer{};
  buffer.image_malloc = [](size_t size, H5FD_file_image_op_t, void*) { return std::calloc(size, 1); };
  buffer.image_memcpy = [](void* to, const void* from, size_t size, H5FD_file_image_op_t, void*) {
    return std::memcpy(to, from, size);
  };
  buffer.image_realloc = [](void* p, size_t size, H5FD_file_image_op_t, void*) { return std::realloc(p, size); };
  buffer.image_free = [](void* p, H5FD_file_image_op_t op, void* kept) -> herr_t {
    if (op == H5FD_FILE_IMAGE_OP_FILE_CLOSE) *static_cast<void**>(kept) = p;  // ours from here on
    else std::free(p);
    return 0;
  };
  buffer.udata = &kept;
  buffer.udata_copy = [](void* kept) { return kept; };
  buffer.udata_free = [](void*) -> herr_t { return 0; };
  if (H5Pset_file_image_callbacks(access.getId(), &buffer) < 0)
    throw H5::FileIException("H5Pset_file_image_callbacks", "H5Pset_file_image_callbacks failed");
  // A name that can exist nowhere (/dev/null is no folder): the core driver reads in a file of its
  // name if there is one, and libhdf5 takes two open files of one name for the same file.
  const std::string name = fmt::format("/dev/null/tinygpt-image-{}", static_cast<const void*>(&kept));
  const hid_t id = H5Fcreate(name.c_str(), H5F_ACC_TRUNC, create.getId(), access.getId());
  if (id < 0) throw H5::FileIException("H5Fcreate", "H5Fcreate failed");
  Image image;
  ssize_t size = -1;
  try {
    {
      const H5::H5File file(id);  // a second reference, dropped at the end of this scope
      fill(GroupWriter(std::make_shared<GroupWriter::Node>(GroupWriter::Node{file.openGroup("/")})));
    }
    if (H5Fflush(id, H5F_SCOPE_GLOBAL) < 0) throw H5::FileIException("H5Fflush", "H5Fflush failed");
    size = H5Fget_file_image(id, nullptr, 0);  // the bytes from the superblock to the end
  } catch (...) {
    H5Fclose(id);  // once, whatever happened
    std::free(kept);
    throw;
  }
  const herr_t closed = H5Fclose(id);
  image.bytes.reset(static_cast<char*>(kept));
  if (closed < 0 || size <= 0 || !kept) throw H5::FileIException("H5Fclose", "cannot finish the file in memory");
  image.size = static_cast<size_t>(kUserBlockBytes + size);  // the user block, then the image
  return image;
}

}  // namespace

void write_sealed(const std::string& path, const std::string& what,
                  const std::function<void(const GroupWriter& root)>& fill) {
  H5::Exception::dontPrint();
  check_output_path(path, OutputKind::hdf5);
  Image image;
  try {
    image = hdf5_image(fill);
  } catch (const H5::Exception& e) {
    throw std::runtime_error(fmt::format("cannot write {} '{}': {}", what, path, e.getDetailMsg()));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("cannot write {} '{}': {}", what, path, e.what()));
  }
  seal_image(image.bytes.get(), image.size);
  AtomicFile out(path, what);
  out.write(image.bytes.get(), image.size);
  out.commit();
}

}  // namespace tinygpt::io::hdf5
