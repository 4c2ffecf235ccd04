#pragma once
// JSON (RFC 8259) for the small files other tools exchange with us: GPT-2's tokenizer files, a
// Hugging Face config.json, a safetensors header. Strict: no comments, trailing commas, duplicate
// keys, invalid UTF-8, or more nesting, values or string bytes than the caller's Limits allow;
// every error names the file and byte offset.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinygpt::data::json {

struct Value;
using Array = std::vector<Value>;
using Object = std::vector<std::pair<std::string, Value>>;  // in file order; keys are unique

struct Value {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  double number = 0;
  std::string text;  // a string's value, or a number as written (so integers stay exact)
  std::shared_ptr<Array> array;
  std::shared_ptr<Object> object;

  bool is_integer() const;  // a number written without fraction or exponent
  // The value of `key` in an object, or nullptr (also when this is not an object).
  const Value* find(std::string_view key) const;
  const char* type_name() const;
};

// What a document may hold, checked while it is read, so that a hostile file is refused before it
// costs more memory than its format needs (a value costs about 100 bytes however short its text).
// Each reader passes its format's limits.
struct Limits {
  int depth = 64;                        // containers inside containers: 1 is an object of scalars
  int64_t values = 100'000;              // values of any kind, containers included
  int64_t string_bytes = int64_t{1} << 16;  // one string's (or key's) bytes once unescaped
  std::string_view why_values = "the most this kind of file needs";  // said when `values` is passed
};

// A Hugging Face config.json: a few dozen fields, a few nested (rope_scaling, id2label).
inline constexpr Limits kConfigLimits{.depth = 8, .values = 100'000};

// Parses a whole document; `where` names it in errors ("'dir/config.json'"). Errors name the byte
// offset; a UTF-8 byte order mark is named as such; running out of memory is an error naming
// `where`, not std::bad_alloc.
Value parse(std::string_view text, std::string_view where, const Limits& limits = {});

class Parser;

// A document whose top level is an object of many small members (a safetensors header: one per
// tensor), read member by member so that only the member in hand is held: Limits::values bounds
// the members and, separately, each member's values; the other limits hold as for parse().
class MemberReader {
 public:
  MemberReader(std::string_view text, std::string_view where, const Limits& limits);
  ~MemberReader();
  MemberReader(const MemberReader&) = delete;
  MemberReader& operator=(const MemberReader&) = delete;
  // The next member's key and value; false after the last (the document then checked to its end).
  bool next(std::string& key, Value& value);

 private:
  std::unique_ptr<Parser> parser_;
  std::string where_;
};

// The JSON string literal of UTF-8 text, quotes included ("\n" and controls escaped).
std::string quote(std::string_view utf8);
// How a JSON number is written: the shortest text that reads back exactly, or with `digits` after
// the point (fixed: 0.125000; scientific: 1.250000e-01), or `digits` significant ones (general: 9
// give a float back exactly).
struct NumberForm {
  enum class Style { shortest, fixed, scientific, general };
  Style style = Style::shortest;
  int digits = 0;
};
// A JSON number in that form; null for NaN and the infinities, which JSON lacks.
std::string number(double v, NumberForm form = {});

}  // namespace tinygpt::data::json
