#pragma once
// JSON (RFC 8259) for the small files other tools exchange with us: GPT-2's tokenizer files, a
// Hugging Face config.json, a safetensors header. Strict: no comments, trailing commas, duplicate
// keys, invalid UTF-8 or nesting past 64 levels; every error names the file and byte offset.
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

// Parses a whole document; `where` names it in errors ("'dir/config.json'").
Value parse(std::string_view text, std::string_view where);

// The JSON string literal of UTF-8 text, quotes included ("\n" and controls escaped).
std::string quote(std::string_view utf8);

}  // namespace tinygpt::data::json
