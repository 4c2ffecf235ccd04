#include "json.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>

#include "utf8.h"

namespace tinygpt::data::json {

class Parser {
 public:
  Parser(std::string_view text, std::string_view where, const Limits& limits)
      : s_(text), where_(where), limits_(limits) {}

  Value document() {
    refuse_bom();
    Value v = value(1);
    finish();
    return v;
  }

  // The top-level object one member at a time (MemberReader): each value is parsed and counted on
  // its own, so that only the member in hand is held.
  bool next_member(std::string& key, Value& v) {
    if (closed_) return false;
    if (!opened_) {
      refuse_bom();
      skip_space();
      if (i_ == s_.size() || s_[i_] != '{') fail("expected an object");
      ++i_, opened_ = true;
      if (take('}')) return finish(), false;
    } else {
      if (take('}')) return finish(), false;
      expect(',');
    }
    if (++members_ > limits_.values) fail(fmt::format("more than {} members ({})", limits_.values, limits_.why_values));
    skip_space();
    if (i_ == s_.size() || s_[i_] != '"') fail("expected a key in quotes");
    const size_t at = i_;
    key = string();
    if (!keys_.insert(key).second) {
      i_ = at;
      fail(fmt::format("duplicate key {}", quote(key)));
    }
    expect(':');
    values_ = 0;
    v = value(2);
    return true;
  }

 private:
  void refuse_bom() {
    if (s_.starts_with("\xEF\xBB\xBF"))
      fail("a UTF-8 byte order mark (EF BB BF) before the document; JSON files start without one");
  }
  void finish() {
    closed_ = true;
    skip_space();
    if (i_ != s_.size()) fail("text after the end of the document");
  }
  [[noreturn]] void fail(std::string_view what) const {
    throw std::invalid_argument(fmt::format("{} is not valid JSON: {} at byte {}", where_, what, i_));
  }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool take(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(fmt::format("expected '{}'", c));
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  Value value(int depth) {
    if (++values_ > limits_.values)
      fail(fmt::format("more than {} values ({})", limits_.values, limits_.why_values));
    skip_space();
    if (i_ == s_.size()) fail("unexpected end of text");
    Value v;
    const char c = s_[i_];
    if ((c == '{' || c == '[') && depth > limits_.depth)
      fail(fmt::format("{} nested {} deep (this kind of file nests at most {})", c == '{' ? "an object" : "an array",
                       depth, limits_.depth));
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') {
      v.type = Value::Type::string;
      v.text = string();
    } else if (literal("true")) {
      v.type = Value::Type::boolean;
      v.boolean = true;
    } else if (literal("false")) {
      v.type = Value::Type::boolean;
    } else if (literal("null")) {
      v.type = Value::Type::null;
    } else {
      number(v);
    }
    return v;
  }

  Value object(int depth) {
    ++i_;
    Value v;
    v.type = Value::Type::object;
    v.object = std::make_shared<Object>();
    std::map<std::string, bool, std::less<>> seen;
    if (take('}')) return v;
    do {
      skip_space();
      if (i_ == s_.size() || s_[i_] != '"') fail("expected a key in quotes");
      const size_t at = i_;
      std::string key = string();
      if (!seen.emplace(key, true).second) {
        i_ = at;
        fail(fmt::format("duplicate key {}", quote(key)));
      }
      expect(':');
      v.object->emplace_back(std::move(key), value(depth + 1));
    } while (take(','));
    expect('}');
    return v;
  }

  Value array(int depth) {
    ++i_;
    Value v;
    v.type = Value::Type::array;
    v.array = std::make_shared<Array>();
    if (take(']')) return v;
    do v.array->push_back(value(depth + 1));
    while (take(','));
    expect(']');
    return v;
  }

  void number(Value& v) {
    const size_t start = i_;
    auto digits = [&] {
      const size_t from = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ - from;
    };
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    const size_t int_start = i_;
    const size_t n = digits();
    if (n == 0) fail("expected a value");
    if (n > 1 && s_[int_start] == '0') fail("a number with a leading zero");
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (digits() == 0) fail("a number without digits after '.'");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (digits() == 0) fail("a number without exponent digits");
    }
    v.type = Value::Type::number;
    v.text = std::string(s_.substr(start, i_ - start));
    const auto r = std::from_chars(v.text.data(), v.text.data() + v.text.size(), v.number);
    if (r.ec != std::errc() || !std::isfinite(v.number)) {
      i_ = start;
      fail(fmt::format("the number {} is out of range", v.text));
    }
  }

  uint32_t hex4() {
    if (s_.size() - i_ < 4) fail("a \\u escape cut short");
    uint32_t u = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      u <<= 4;
      if (h >= '0' && h <= '9') u |= h - '0';
      else if (h >= 'a' && h <= 'f') u |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') u |= h - 'A' + 10;
      else fail("a \\u escape with a non-hex digit");
    }
    return u;
  }

  std::string string() {
    ++i_;  // the opening quote
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("a string without its closing quote");
      const char c = s_[i_];
      if (static_cast<int64_t>(out.size()) > limits_.string_bytes)
        fail(fmt::format("a string longer than {} bytes (this file's most)", limits_.string_bytes));
      if (c == '"') break;
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character inside a string");
      if (c != '\\') {
        const size_t at = i_;
        if (next_code_point(s_, i_) < 0) fail("invalid UTF-8");
        out.append(s_.substr(at, i_ - at));
        continue;
      }
      if (++i_ >= s_.size()) fail("a string without its closing quote");
      switch (s_[i_++]) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("a lone low surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!literal("\\u")) fail("a high surrogate without its low half");
            const uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("a high surrogate without its low half");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, static_cast<int32_t>(cp));
          break;
        }
        default: --i_, fail("an unknown escape");
      }
    }
    ++i_;
    return out;
  }

  std::string_view s_, where_;
  Limits limits_;
  size_t i_ = 0;
  int64_t values_ = 0, members_ = 0;
  bool opened_ = false, closed_ = false;
  std::set<std::string, std::less<>> keys_;  // the members' keys so far (MemberReader)
};

bool Value::is_integer() const {
  return type == Type::number && text.find_first_of(".eE") == std::string::npos;
}

const Value* Value::find(std::string_view key) const {
  if (type != Type::object) return nullptr;
  for (const auto& [k, v] : *object)
    if (k == key) return &v;
  return nullptr;
}

const char* Value::type_name() const {
  static constexpr const char* names[] = {"null", "a boolean", "a number", "a string", "an array", "an object"};
  return names[static_cast<int>(type)];
}

MemberReader::MemberReader(std::string_view text, std::string_view where, const Limits& limits)
    : parser_(std::make_unique<Parser>(text, where, limits)), where_(where) {}

MemberReader::~MemberReader() = default;

bool MemberReader::next(std::string& key, Value& value) {
  try {
    return parser_->next_member(key, value);
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(fmt::format("{}: out of memory while reading its JSON", where_));
  }
}

Value parse(std::string_view text, std::string_view where, const Limits& limits) {
  try {
    return Parser(text, where, limits).document();
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(fmt::format("{}: out of memory while reading {} bytes of JSON", where, text.size()));
  }
}

std::string number(double v, NumberForm form) {
  if (!std::isfinite(v)) return "null";
  switch (form.style) {
    case NumberForm::Style::shortest: return fmt::format("{}", v);
    case NumberForm::Style::fixed: return fmt::format("{:.{}f}", v, form.digits);
    case NumberForm::Style::scientific: return fmt::format("{:.{}e}", v, form.digits);
    case NumberForm::Style::general: return fmt::format("{:.{}g}", v, form.digits);
  }
  return "null";
}

std::string quote(std::string_view utf8) {
  std::string out = "\"";
  for (const char c : utf8) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else out += c;
    }
  }
  return out + "\"";
}

}  // namespace tinygpt::data::json
