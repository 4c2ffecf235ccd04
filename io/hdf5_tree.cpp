#include "tinygpt/io/hdf5_tree.h"

#include <fmt/format.h>
#include <hdf5.h>

#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>

namespace tinygpt::io::hdf5 {

class Handle {
 public:
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle() {
    if (id_ >= 0) H5Idec_ref(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t id() const { return id_; }

 private:
  hid_t id_;
};

namespace {

constexpr int kMaxDepth = 32;
constexpr int64_t kMaxObjects = 100'000;
constexpr int64_t kMaxAttributes = 10'000;  // per object
constexpr int64_t kMaxName = 4096;
constexpr int kMaxRank = 8;

// libhdf5's innermost complaint (the bottom of its error stack), e.g. "H5O__chunk_deserialize:
// incorrect metadata checksum after all read attempts".
std::string hdf5_complaint() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD,
           [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
             if (n == 0) *static_cast<std::string*>(out) = fmt::format("{}: {}", e->func_name, e->desc ? e->desc : "");
             return 0;
           },
           &text);
  H5Eclear2(H5E_DEFAULT);
  return text.empty() ? "libhdf5 failed" : text;
}

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}", where, what));
}

template <class T>
T checked(T result, const std::string& where, const char* doing) {
  if (result < 0) fail(where, fmt::format("unreadable HDF5 ({}; {})", doing, hdf5_complaint()));
  return result;
}

std::shared_ptr<Handle> owned(hid_t id, const std::string& where, const char* doing) {
  return std::make_shared<Handle>(checked(id, where, doing));
}

// The extent of a dataspace: {} for a scalar; its element count, products checked for overflow.
std::vector<int64_t> extent(hid_t space, const std::string& where, int64_t& count) {
  const H5S_class_t cls = H5Sget_simple_extent_type(space);
  count = cls == H5S_SCALAR ? 1 : 0;
  if (cls != H5S_SIMPLE) return {};
  const int rank = checked(H5Sget_simple_extent_ndims(space), where, "dataspace rank");
  if (rank > kMaxRank) fail(where, fmt::format("has {} dimensions (at most {} are read)", rank, kMaxRank));
  hsize_t dims[kMaxRank];
  checked(H5Sget_simple_extent_dims(space, dims, nullptr), where, "dataspace dimensions");
  std::vector<int64_t> shape;
  count = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] > static_cast<hsize_t>(std::numeric_limits<int64_t>::max()) ||
        __builtin_mul_overflow(count, static_cast<int64_t>(dims[i]), &count))
      fail(where, "has more elements than a 64-bit count holds");
    shape.push_back(static_cast<int64_t>(dims[i]));
  }
  return shape;
}

class Walker {
 public:
  Walker(int64_t file_bytes, haddr_t root) : file_bytes_(file_bytes), open_groups_{root} {}

  void group(hid_t id, const std::string& path, Group& out, int depth) {
    if (depth > kMaxDepth) fail(path, fmt::format("groups nest deeper than {} levels", kMaxDepth));
    H5G_info_t info;
    checked(H5Gget_info(id, &info), path, "group info");
    for (hsize_t i = 0; i < info.nlinks; ++i) {
      if (++objects_ > kMaxObjects) fail(path, fmt::format("the file holds more than {} objects", kMaxObjects));
      H5L_info_t link;
      checked(H5Lget_info_by_idx(id, ".", H5_INDEX_NAME, H5_ITER_INC, i, &link, H5P_DEFAULT), path, "link info");
      const std::string name = link_name(id, path, i);
      if (link.type != H5L_TYPE_HARD) continue;  // soft and external links lead elsewhere: never followed
      const std::string child = path == "/" ? "/" + name : path + "/" + name;
      const auto object = owned(H5Oopen_by_idx(id, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT), child, "open");
      H5O_info_t oi;
      checked(H5Oget_info2(object->id(), &oi, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS), child, "object info");
      if (oi.type == H5O_TYPE_GROUP) {
        if (!open_groups_.insert(oi.addr).second) fail(child, "links back to a group that contains it");
        Group& g = out.groups[name];
        attributes(object->id(), oi.num_attrs, child, g.attributes);
        group(object->id(), child, g, depth + 1);
        open_groups_.erase(oi.addr);
      } else if (oi.type == H5O_TYPE_DATASET) {
        Dataset& d = out.datasets[name];
        attributes(object->id(), oi.num_attrs, child, d.attributes);
        dataset(object, child, d);
      }
    }
  }

  void attributes(hid_t object, hsize_t n, const std::string& where, std::map<std::string, Attribute>& out) {
    if (static_cast<int64_t>(n) > kMaxAttributes) fail(where, fmt::format("has {} attributes", n));
    for (hsize_t j = 0; j < n; ++j) {
      const Handle a(checked(H5Aopen_by_idx(object, ".", H5_INDEX_NAME, H5_ITER_INC, j, H5P_DEFAULT, H5P_DEFAULT),
                             where, "open attribute"));
      const ssize_t length = checked(H5Aget_name(a.id(), 0, nullptr), where, "attribute name");
      if (length > kMaxName) fail(where, "an attribute name is too long");
      std::string name(static_cast<size_t>(length) + 1, '\0');
      checked(H5Aget_name(a.id(), name.size(), name.data()), where, "attribute name");
      name.resize(static_cast<size_t>(length));
      out[name] = attribute(a.id(), fmt::format("attribute '{}' of {}", name, where));
    }
  }

  Attribute attribute(hid_t id, const std::string& where) {
    const Handle type(checked(H5Aget_type(id), where, "type"));
    const Handle space(checked(H5Aget_space(id), where, "dataspace"));
    Attribute a;
    int64_t n = 0;
    a.shape = extent(space.id(), where, n);
    const size_t size = H5Tget_size(type.id());
    if (size == 0) fail(where, fmt::format("unreadable HDF5 (type size; {})", hdf5_complaint()));
    check_bytes(n, static_cast<int64_t>(size), where);
    switch (H5Tget_class(type.id())) {
      case H5T_INTEGER:
        if (size > 8) return a;
        a.kind = Attribute::Kind::integer;
        a.is_unsigned = H5Tget_sign(type.id()) == H5T_SGN_NONE;
        if (a.is_unsigned) {
          a.uints.resize(static_cast<size_t>(n));
          checked(H5Aread(id, H5T_NATIVE_UINT64, a.uints.data()), where, "read");
        } else {
          a.ints.resize(static_cast<size_t>(n));
          checked(H5Aread(id, H5T_NATIVE_INT64, a.ints.data()), where, "read");
        }
        return a;
      case H5T_FLOAT:
        if (size > 8) return a;
        a.kind = Attribute::Kind::floating;
        a.floats.resize(static_cast<size_t>(n));
        checked(H5Aread(id, H5T_NATIVE_DOUBLE, a.floats.data()), where, "read");
        return a;
      case H5T_STRING:
        a.kind = Attribute::Kind::text;
        a.texts = H5Tis_variable_str(type.id()) > 0 ? variable_strings(id, type.id(), space.id(), n, where)
                                                     : fixed_strings(id, type.id(), n, size, where);
        return a;
      default:
        return a;
    }
  }

  std::vector<std::string> fixed_strings(hid_t id, hid_t type, int64_t n, size_t size, const std::string& where) {
    std::vector<char> bytes(static_cast<size_t>(n) * size);
    if (!bytes.empty()) checked(H5Aread(id, type, bytes.data()), where, "read");
    const bool space_padded = H5Tget_strpad(type) == H5T_STR_SPACEPAD;
    std::vector<std::string> out;
    for (int64_t i = 0; i < n; ++i) {
      std::string s(bytes.data() + i * static_cast<int64_t>(size), size);
      s.resize(std::strlen(s.c_str()));  // null-terminated or null-padded
      if (space_padded) s.erase(s.find_last_not_of(' ') + 1);
      out.push_back(std::move(s));
    }
    return out;
  }

  std::vector<std::string> variable_strings(hid_t id, hid_t type, hid_t space, int64_t n, const std::string& where) {
    const Handle memory(checked(H5Tcopy(H5T_C_S1), where, "string type"));
    H5Tset_size(memory.id(), H5T_VARIABLE);
    H5Tset_cset(memory.id(), H5Tget_cset(type));
    std::vector<char*> pointers(static_cast<size_t>(n), nullptr);
    if (n == 0) return {};
    checked(H5Aread(id, memory.id(), pointers.data()), where, "read");
    std::vector<std::string> out;
    for (char* p : pointers) out.emplace_back(p ? p : "");
    H5Dvlen_reclaim(memory.id(), space, H5P_DEFAULT, pointers.data());
    return out;
  }

  void dataset(const std::shared_ptr<Handle>& handle, const std::string& where, Dataset& d) {
    d.handle = handle;
    const Handle type(checked(H5Dget_type(handle->id()), where, "type"));
    const Handle space(checked(H5Dget_space(handle->id()), where, "dataspace"));
    const Handle create(checked(H5Dget_create_plist(handle->id()), where, "creation properties"));
    int64_t n = 0;
    d.shape = extent(space.id(), where, n);
    const size_t size = H5Tget_size(type.id());
    const H5T_class_t cls = H5Tget_class(type.id());
    if (size > 0 && size <= 8 && (cls == H5T_INTEGER || cls == H5T_FLOAT))
      d.kind = cls == H5T_INTEGER ? Dataset::Kind::integer : Dataset::Kind::floating;
    if (cls == H5T_STRING && H5Tis_variable_str(type.id()) > 0) d.kind = Dataset::Kind::text;
    d.element_bytes = size;
    d.is_unsigned = cls == H5T_INTEGER && H5Tget_sign(type.id()) == H5T_SGN_NONE;
    const H5D_layout_t layout = H5Pget_layout(create.id());
    int64_t bytes = 0;
    if (layout == H5D_VIRTUAL || H5Pget_external_count(create.id()) != 0)
      d.problem = "its data is kept in other files";
    else if (H5Pget_nfilters(create.id()) != 0)
      d.problem = "it is stored compressed or filtered (tinygpt reads plain datasets)";
    else if (__builtin_mul_overflow(n, static_cast<int64_t>(size), &bytes) || bytes > file_bytes_)
      d.problem = fmt::format("it claims {} elements of {} bytes, more than the whole file ({} bytes)", n, size,
                              file_bytes_);
  }

 private:
  std::string link_name(hid_t group, const std::string& path, hsize_t i) {
    const ssize_t length =
        checked(H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT), path, "link name");
    if (length > kMaxName) fail(path, "a link name is too long");
    std::string name(static_cast<size_t>(length) + 1, '\0');
    checked(H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT), path,
            "link name");
    name.resize(static_cast<size_t>(length));
    return name;
  }

  void check_bytes(int64_t n, int64_t size, const std::string& where) const {
    int64_t bytes = 0;
    if (__builtin_mul_overflow(n, size, &bytes) || bytes > file_bytes_)
      fail(where, fmt::format("claims {} elements of {} bytes, more than the whole file ({} bytes)", n, size,
                              file_bytes_));
  }

  int64_t file_bytes_;
  int64_t objects_ = 0;
  std::set<haddr_t> open_groups_;  // the groups on the path from the root: a link back to one is a loop
};

// libhdf5's core driver reading our bytes in place. Its callbacks hand back the same buffer for every
// request and never allocate: H5LTopen_file_image does the same but leaks its callback state on
// every close in libhdf5 1.10 (HDFGroup/hdf5#827).
// `image` outlives the file: callbacks may run until it closes.
hid_t open_image(data::FileBytes& image) {
  H5FD_file_image_callbacks_t callbacks{};
  callbacks.image_malloc = [](size_t size, H5FD_file_image_op_t, void* udata) -> void* {
    auto* bytes = static_cast<data::FileBytes*>(udata);
    return size == bytes->size() ? bytes->data() : nullptr;
  };
  callbacks.image_memcpy = [](void* dest, const void* src, size_t, H5FD_file_image_op_t, void*) -> void* {
    return dest == src ? dest : nullptr;  // the "copy" is the buffer itself
  };
  callbacks.image_realloc = [](void*, size_t, H5FD_file_image_op_t, void*) -> void* { return nullptr; };  // read-only
  callbacks.image_free = [](void*, H5FD_file_image_op_t, void*) -> herr_t { return 0; };
  callbacks.udata_copy = [](void* udata) -> void* { return udata; };
  callbacks.udata_free = [](void*) -> herr_t { return 0; };
  callbacks.udata = &image;
  const hid_t access = H5Pcreate(H5P_FILE_ACCESS);
  hid_t file = -1;
  if (access >= 0 && H5Pset_fapl_core(access, 1 << 16, 0) >= 0 && H5Pset_file_image_callbacks(access, &callbacks) >= 0 &&
      H5Pset_file_image(access, image.data(), image.size()) >= 0)
    file = H5Fopen("checkpoint image", H5F_ACC_RDONLY, access);
  if (access >= 0) H5Pclose(access);
  return file;
}

void for_each_dataset(const Group& g, const std::string& path,
                      const std::function<void(const Dataset&, const std::string&)>& visit) {
  for (const auto& [name, d] : g.datasets) visit(d, path + "/" + name);
  for (const auto& [name, child] : g.groups) for_each_dataset(child, path + "/" + name, visit);
}

}  // namespace

int64_t Attribute::count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // bounded when read
  return n;
}

int64_t Dataset::count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

File::File(data::FileBytes image) : image_(std::move(image)) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as return values, not printed
  if (image_.size() == 0) fail("/", "the file is empty");
  file_ = owned(open_image(image_), "/", "open");
  read_tree(static_cast<int64_t>(image_.size()));
}

File::File(const data::InputFile& verified) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (verified.size() == 0) fail("/", "the file is empty");
  // The descriptor's own file, not whatever its path names by now.
  const std::string path = fmt::format("/proc/self/fd/{}", verified.descriptor());
  const hid_t access = H5Pcreate(H5P_FILE_ACCESS);
  hid_t file = -1;
  if (access >= 0 && H5Pset_fapl_sec2(access) >= 0 && H5Pset_file_locking(access, false, true) >= 0)
    file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, access);
  if (access >= 0) H5Pclose(access);
  file_ = owned(file, "/", "open");
  read_tree(verified.size());
}

void File::read_tree(int64_t file_bytes) {
  const std::string root = "/";
  const Handle group(checked(H5Gopen2(file_->id(), "/", H5P_DEFAULT), root, "open the root group"));
  H5O_info_t oi;
  checked(H5Oget_info2(group.id(), &oi, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS), root, "object info");
  Walker walker(file_bytes, oi.addr);
  walker.attributes(group.id(), oi.num_attrs, root, root_.attributes);
  walker.group(group.id(), root, root_, 0);
}

File::~File() {
  root_ = {};  // dataset handles first, then the file, then the bytes
  file_.reset();
}

void File::read(const Dataset& d, const std::string& where, float* out) const {
  if (!d.problem.empty()) fail(where, d.problem);
  if (d.kind != Dataset::Kind::floating) fail(where, "is not a float dataset");
  if (d.count() > 0) checked(H5Dread(d.handle->id(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), where, "read");
}

std::vector<int64_t> File::read_integers(const Dataset& d, const std::string& where) const {
  if (!d.problem.empty()) fail(where, d.problem);
  if (d.kind != Dataset::Kind::integer) fail(where, "is not an integer dataset");
  std::vector<int64_t> values(static_cast<size_t>(d.count()));
  if (!values.empty())
    checked(H5Dread(d.handle->id(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), where, "read");
  return values;
}

std::string File::read_bytes(const Dataset& d, const std::string& where) const {
  if (!d.problem.empty()) fail(where, d.problem);
  if (d.kind != Dataset::Kind::integer || d.element_bytes != 1 || !d.is_unsigned)
    fail(where, "is not a dataset of bytes (unsigned 8-bit integers)");
  std::string bytes(static_cast<size_t>(d.count()), '\0');
  if (!bytes.empty())
    checked(H5Dread(d.handle->id(), H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()), where, "read");
  return bytes;
}

std::vector<std::string> File::read_texts(const Dataset& d, const std::string& where) const {
  if (!d.problem.empty()) fail(where, d.problem);
  if (d.kind != Dataset::Kind::text) fail(where, "is not a dataset of variable-length strings");
  const Handle memory(checked(H5Tcopy(H5T_C_S1), where, "string type"));
  H5Tset_size(memory.id(), H5T_VARIABLE);
  H5Tset_cset(memory.id(), H5T_CSET_UTF8);
  std::vector<char*> pointers(static_cast<size_t>(d.count()), nullptr);
  if (pointers.empty()) return {};
  checked(H5Dread(d.handle->id(), memory.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()), where, "read");
  std::vector<std::string> out;
  for (char* p : pointers) out.emplace_back(p ? p : "");
  const Handle space(checked(H5Dget_space(d.handle->id()), where, "dataspace"));
  H5Dvlen_reclaim(memory.id(), space.id(), H5P_DEFAULT, pointers.data());
  return out;
}

void File::read_everything() const {
  for_each_dataset(root_, "", [&](const Dataset& d, const std::string& where) {
    if (!d.problem.empty()) return;
    if (d.kind == Dataset::Kind::integer) read_integers(d, where);
    if (d.kind == Dataset::Kind::text) read_texts(d, where);
    if (d.kind == Dataset::Kind::floating) {
      std::vector<float> scratch(static_cast<size_t>(d.count()));
      read(d, where, scratch.data());
    }
  });
}

}  // namespace tinygpt::io::hdf5
