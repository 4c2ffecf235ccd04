#include "hdf5_tree.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>

#include "detail/hdf5_description.h"
#include "detail/isolated.h"

namespace tinygpt::io::hdf5 {

namespace {

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


constexpr int64_t kMaxObjects = 100'000;
constexpr int64_t kMaxAttributes = 10'000;  // per object
constexpr int64_t kMaxName = 4096;
// Values the child reads itself (attributes; datasets' strings, compact or chunked storage) and
// hands back: tokenizers' strings and small arrays, far below this.
constexpr int64_t kMaxValueBytes = int64_t{64} << 20;
// The description of all the rest (names, shapes, attributes) is a small part of that again.
constexpr size_t kMaxDescriptionBytes = size_t{2} * static_cast<size_t>(kMaxValueBytes);

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
    if (depth > kMaxWalkDepth) fail(path, fmt::format("groups nest deeper than {} levels", kMaxWalkDepth));
    H5G_info_t info;
    checked(H5Gget_info(id, &info), path, "group info");
    for (hsize_t i = 0; i < info.nlinks; ++i) {
      if (++objects_ > kMaxObjects) fail(path, fmt::format("the file holds more than {} objects", kMaxObjects));
      H5L_info_t link;
      checked(H5Lget_info_by_idx(id, ".", H5_INDEX_NAME, H5_ITER_INC, i, &link, H5P_DEFAULT), path, "link info");
      const std::string name = link_name(id, path, i);
      if (link.type != H5L_TYPE_HARD) continue;  // soft and external links lead elsewhere: never followed
      const std::string child = path == "/" ? "/" + name : path + "/" + name;
      const Handle object(checked(H5Oopen_by_idx(id, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT), child, "open"));
      H5O_info_t oi;
      checked(H5Oget_info2(object.id(), &oi, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS), child, "object info");
      if (oi.type == H5O_TYPE_GROUP) {
        if (!open_groups_.insert(oi.addr).second) fail(child, "links back to a group that contains it");
        Group& g = out.groups[name];
        attributes(object.id(), oi.num_attrs, child, g.attributes);
        group(object.id(), child, g, depth + 1);
        open_groups_.erase(oi.addr);
      } else if (oi.type == H5O_TYPE_DATASET) {
        Dataset& d = out.datasets[name];
        attributes(object.id(), oi.num_attrs, child, d.attributes);
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
      const std::string at = fmt::format("attribute '{}' of {}", name, where);
      Attribute& value = out[name] = attribute(a.id(), at);
      spend(8 * (static_cast<int64_t>(value.ints.size() + value.uints.size() + value.floats.size() + value.texts.size())), at);
      for (const std::string& text : value.texts) spend(static_cast<int64_t>(text.size()), at);
    }
  }

  Attribute attribute(hid_t id, const std::string& where) {
    const Handle type(checked(H5Aget_type(id), where, "type"));
    const Handle space(checked(H5Aget_space(id), where, "dataspace"));
    Attribute a;
    int64_t n = 0;
    a.shape = extent(space.id(), where, n);
    if (H5Sget_simple_extent_type(space.id()) == H5S_NULL) return a;  // no values: of no kind
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

  void dataset(const Handle& handle, const std::string& where, Dataset& d) {
    const Handle type(checked(H5Dget_type(handle.id()), where, "type"));
    const Handle space(checked(H5Dget_space(handle.id()), where, "dataspace"));
    const Handle create(checked(H5Dget_create_plist(handle.id()), where, "creation properties"));
    int64_t n = 0;
    d.shape = extent(space.id(), where, n);
    if (H5Sget_simple_extent_type(space.id()) == H5S_NULL) {
      d.problem = "it has a null dataspace: no values at all";
      return;
    }
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
    if (!d.problem.empty() || d.kind == Dataset::Kind::other) return;
    auto stored = std::make_shared<Stored>();
    if (layout == H5D_CONTIGUOUS && n > 0 && plain_type(type.id(), d.kind)) {
      const haddr_t offset = H5Dget_offset(handle.id());  // from the file's first byte, user block included
      if (offset == HADDR_UNDEF) {
        d.problem = "its values were never written";
        return;
      }
      stored->where = Stored::Where::file;
      stored->offset = static_cast<int64_t>(offset);
      stored->big_endian = H5Tget_order(type.id()) == H5T_ORDER_BE;
    } else {
      read_values(handle, space.id(), where, d, n, *stored);
    }
    d.stored = std::move(stored);
  }

 private:
  // A type whose raw bytes the parent converts itself: integers of 1, 2, 4 or 8 bytes in either
  // byte order, IEEE binary32 or binary64.
  static bool plain_type(hid_t type, Dataset::Kind kind) {
    if (kind == Dataset::Kind::integer) {
      const H5T_order_t order = H5Tget_order(type);
      return H5Tget_offset(type) == 0 && H5Tget_precision(type) == 8 * H5Tget_size(type) &&
             (order == H5T_ORDER_LE || order == H5T_ORDER_BE);
    }
    if (kind != Dataset::Kind::floating) return false;
    for (hid_t ieee : {H5T_IEEE_F32LE, H5T_IEEE_F32BE, H5T_IEEE_F64LE, H5T_IEEE_F64BE})
      if (H5Tequal(type, ieee) > 0) return true;
    return false;
  }

  // The values of a dataset that is not plain bytes in the file, read by libhdf5 here.
  void read_values(const Handle& handle, hid_t space, const std::string& where, const Dataset& d, int64_t n,
                   Stored& out) {
    spend(n * 8, where);
    if (n == 0) return;
    if (d.kind == Dataset::Kind::floating) {
      out.floats.resize(static_cast<size_t>(n));
      checked(H5Dread(handle.id(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.floats.data()), where, "read");
    } else if (d.kind == Dataset::Kind::integer) {
      out.ints.resize(static_cast<size_t>(n));
      checked(H5Dread(handle.id(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.ints.data()), where, "read");
    } else {
      const Handle memory(checked(H5Tcopy(H5T_C_S1), where, "string type"));
      H5Tset_size(memory.id(), H5T_VARIABLE);
      H5Tset_cset(memory.id(), H5T_CSET_UTF8);
      std::vector<char*> pointers(static_cast<size_t>(n), nullptr);
      checked(H5Dread(handle.id(), memory.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()), where, "read");
      for (char* p : pointers) {
        out.texts.emplace_back(p ? p : "");
        spend(static_cast<int64_t>(out.texts.back().size()), where);
      }
      H5Dvlen_reclaim(memory.id(), space, H5P_DEFAULT, pointers.data());
    }
  }

  void spend(int64_t bytes, const std::string& where) {
    value_bytes_ += bytes;
    if (value_bytes_ > kMaxValueBytes)
      fail(where, fmt::format("holds more than {} MB of values stored other than as plain contiguous arrays",
                              kMaxValueBytes >> 20));
  }

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
  int64_t value_bytes_ = 0;
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

// In the child: the description of the file libhdf5 opened as `file` (hdf5_description.h).
std::string describe_in_child(hid_t file_id, int64_t file_bytes) {
  const std::string root_path = "/";
  const Handle file(checked(file_id, root_path, "open"));
  const Handle group(checked(H5Gopen2(file.id(), "/", H5P_DEFAULT), root_path, "open the root group"));
  H5O_info_t oi;
  checked(H5Oget_info2(group.id(), &oi, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS), root_path, "object info");
  Group root;
  Walker walker(file_bytes, oi.addr);
  walker.attributes(group.id(), oi.num_attrs, root_path, root.attributes);
  walker.group(group.id(), root_path, root, 0);
  return encode(root);
}

hid_t open_descriptor(int fd) {
  // The descriptor's own file, not whatever its path names by now.
  const std::string path = fmt::format("/proc/self/fd/{}", fd);
  const hid_t access = H5Pcreate(H5P_FILE_ACCESS);
  hid_t file = -1;
  if (access >= 0 && H5Pset_fapl_sec2(access) >= 0 && H5Pset_file_locking(access, false, true) >= 0)
    file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, access);
  if (access >= 0) H5Pclose(access);
  return file;
}

const Stored& stored(const Dataset& d, const std::string& where, Dataset::Kind kind, const char* not_kind) {
  if (!d.problem.empty()) fail(where, d.problem);
  if (d.kind != kind) fail(where, not_kind);
  if (!d.stored) fail(where, "its values cannot be read");
  return *d.stored;
}

// Raw values of `bytes` bytes each, in the file's byte order, to the host's (little-endian x86 and
// ARM: the build refuses others).
static_assert(std::endian::native == std::endian::little, "tinygpt reads HDF5 values on little-endian hosts");
template <class T>
T raw_value(const char* p, bool big_endian) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if (big_endian) {
    if constexpr (sizeof(T) == 2) v = std::bit_cast<T>(__builtin_bswap16(std::bit_cast<uint16_t>(v)));
    if constexpr (sizeof(T) == 4) v = std::bit_cast<T>(__builtin_bswap32(std::bit_cast<uint32_t>(v)));
    if constexpr (sizeof(T) == 8) v = std::bit_cast<T>(__builtin_bswap64(std::bit_cast<uint64_t>(v)));
  }
  return v;
}

// The value a file's integer of element_bytes bytes holds, as int64 (an unsigned value above
// INT64_MAX becomes INT64_MAX, as libhdf5's conversion clips it).
int64_t integer_at(const char* p, size_t element_bytes, bool is_unsigned, bool big_endian) {
  switch (element_bytes) {
    case 1: return is_unsigned ? int64_t{raw_value<uint8_t>(p, false)} : int64_t{raw_value<int8_t>(p, false)};
    case 2: return is_unsigned ? int64_t{raw_value<uint16_t>(p, big_endian)} : int64_t{raw_value<int16_t>(p, big_endian)};
    case 4: return is_unsigned ? int64_t{raw_value<uint32_t>(p, big_endian)} : int64_t{raw_value<int32_t>(p, big_endian)};
    default: {
      if (!is_unsigned) return raw_value<int64_t>(p, big_endian);
      const uint64_t u = raw_value<uint64_t>(p, big_endian);
      return u > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u);
    }
  }
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

File::File(data::FileBytes image) : image_(std::move(image)), file_bytes_(static_cast<int64_t>(image_.size())) {
  describe("reading the file's structure");
}

File::File(const data::InputFile& opened) : file_bytes_(opened.size()) {
  descriptor_ = fcntl(opened.descriptor(), F_DUPFD_CLOEXEC, 0);
  if (descriptor_ < 0) fail("/", fmt::format("cannot keep the file open: {}", std::strerror(errno)));
  try {
    describe("reading the file's structure");
  } catch (...) {
    ::close(descriptor_);
    throw;
  }
}

File::~File() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

void File::describe(const std::string& doing) {
  if (file_bytes_ == 0) fail("/", "the file is empty");
  // The walk takes milliseconds; reading values stored other than as plain arrays, a second per
  // 50 MB at most: this is ample on a loaded machine and ends a loop inside libhdf5 soon.
  const auto limit = std::chrono::milliseconds(2000 + std::min(file_bytes_, kMaxValueBytes) / 50'000);
  const ChildEnd end = run_in_child_for(
      [&] {
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as return values, not printed
        const hid_t file = descriptor_ >= 0 ? open_descriptor(descriptor_) : open_image(image_);
        return describe_in_child(file, file_bytes_);
      },
      limit, 4 * kMaxValueBytes + (int64_t{256} << 20), kMaxDescriptionBytes);  // values, their copies, libhdf5
  if (end.how == ChildEnd::How::threw) throw std::runtime_error(end.message);
  if (end.how != ChildEnd::How::returned) fail("/", fmt::format("libhdf5 {} {}", end.describe(), doing));
  root_ = decode(end.result);
}

void File::read_raw(int64_t offset, size_t n, char* out, const std::string& where) const {
  if (offset < 0 || static_cast<int64_t>(n) > file_bytes_ || offset > file_bytes_ - static_cast<int64_t>(n))
    fail(where, fmt::format("its {} bytes of values at offset {} lie beyond the end of the file ({} bytes)", n, offset,
                            file_bytes_));
  if (descriptor_ < 0) {
    std::memcpy(out, image_.data() + offset, n);
    return;
  }
  for (size_t done = 0; done < n;) {
    const ssize_t got = ::pread(descriptor_, out + done, n - done, offset + static_cast<int64_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(where, fmt::format("cannot read its values: {}", std::strerror(errno)));
    if (got == 0) fail(where, "the file shrank while it was read");
    done += static_cast<size_t>(got);
  }
}

void File::for_raw_values(const Dataset& d, const std::string& where,
                          const std::function<void(const char*, int64_t, int64_t)>& convert) const {
  const int64_t n = d.count();
  const auto each = static_cast<int64_t>(d.element_bytes);
  const int64_t step = std::max<int64_t>(1, (int64_t{1} << 20) / each);  // a megabyte at a time
  std::vector<char> buffer(static_cast<size_t>(std::min(n, step) * each));
  for (int64_t first = 0; first < n; first += step) {
    const int64_t count = std::min(step, n - first);
    read_raw(d.stored->offset + first * each, static_cast<size_t>(count * each), buffer.data(), where);
    convert(buffer.data(), first, count);
  }
}

void File::read(const Dataset& d, const std::string& where, float* out) const {
  const Stored& s = stored(d, where, Dataset::Kind::floating, "is not a float dataset");
  if (s.where == Stored::Where::values) {
    for (size_t i = 0; i < s.floats.size(); ++i) out[i] = static_cast<float>(s.floats[i]);
    return;
  }
  if (d.element_bytes == 4 && !s.big_endian) {  // the common case: straight into place
    read_raw(s.offset, static_cast<size_t>(d.count()) * 4, reinterpret_cast<char*>(out), where);
    return;
  }
  for_raw_values(d, where, [&](const char* bytes, int64_t first, int64_t count) {
    for (int64_t i = 0; i < count; ++i)
      out[first + i] = d.element_bytes == 4 ? raw_value<float>(bytes + 4 * i, s.big_endian)
                                            : static_cast<float>(raw_value<double>(bytes + 8 * i, s.big_endian));
  });
}

std::vector<int64_t> File::read_integers(const Dataset& d, const std::string& where) const {
  const Stored& s = stored(d, where, Dataset::Kind::integer, "is not an integer dataset");
  if (s.where == Stored::Where::values) return s.ints;
  std::vector<int64_t> values(static_cast<size_t>(d.count()));
  for_raw_values(d, where, [&](const char* bytes, int64_t first, int64_t count) {
    for (int64_t i = 0; i < count; ++i)
      values[static_cast<size_t>(first + i)] =
          integer_at(bytes + i * static_cast<int64_t>(d.element_bytes), d.element_bytes, d.is_unsigned, s.big_endian);
  });
  return values;
}

std::string File::read_bytes(const Dataset& d, const std::string& where) const {
  const char* not_bytes = "is not a dataset of bytes (unsigned 8-bit integers)";
  const Stored& s = stored(d, where, Dataset::Kind::integer, not_bytes);
  if (d.element_bytes != 1 || !d.is_unsigned) fail(where, not_bytes);
  std::string bytes(static_cast<size_t>(d.count()), '\0');
  if (s.where == Stored::Where::values) {
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(static_cast<uint8_t>(s.ints[i]));
    return bytes;
  }
  read_raw(s.offset, bytes.size(), bytes.data(), where);
  return bytes;
}

std::vector<std::string> File::read_texts(const Dataset& d, const std::string& where) const {
  return stored(d, where, Dataset::Kind::text, "is not a dataset of variable-length strings").texts;
}

}  // namespace tinygpt::io::hdf5
