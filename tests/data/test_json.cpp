// The strict JSON reader behind GPT-2's tokenizer files, config.json and safetensors headers.
#include <catch2/catch.hpp>

#include "tinygpt/data/json.h"

using namespace tinygpt::data;

TEST_CASE("json: values, escapes and exact integers", "[json]") {
  const json::Value v = json::parse(
      R"( {"a": [1, -2.5e3, true, false, null], "s": "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00", "big": 9007199254740993,
          "nested": {"k": {}} } )",
      "t");
  REQUIRE(v.type == json::Value::Type::object);
  const json::Value& a = *v.find("a");
  REQUIRE(a.array->size() == 5);
  REQUIRE(a.array->at(0).is_integer());
  REQUIRE(a.array->at(1).number == -2500.0);
  REQUIRE_FALSE(a.array->at(1).is_integer());
  REQUIRE(a.array->at(2).boolean);
  REQUIRE_FALSE(a.array->at(3).boolean);
  REQUIRE(a.array->at(4).type == json::Value::Type::null);
  REQUIRE(v.find("s")->text == "x\"\\/\b\f\n\r\t\xC3\xA9\xF0\x9F\x98\x80");
  REQUIRE(v.find("big")->text == "9007199254740993");  // as written: no rounding through double
  REQUIRE(v.find("nested")->find("k")->object->empty());
  REQUIRE(v.find("missing") == nullptr);
  REQUIRE(json::quote("a\"b\\c\nd\x01") == "\"a\\\"b\\\\c\\nd\\u0001\"");
  const std::string round = json::quote("é\t😀");
  REQUIRE(json::parse(round, "q").text == "é\t😀");
}

TEST_CASE("json: malformed documents are errors with the byte offset", "[json][errors]") {
  auto fails = [](const std::string& text, const std::string& message) {
    REQUIRE_THROWS_WITH(json::parse(text, "'f.json'"), Catch::Contains("'f.json' is not valid JSON") &&
                                                           Catch::Contains(message));
  };
  fails("", "unexpected end of text at byte 0");
  fails("{\"a\": 1,}", "expected a key in quotes at byte 8");
  fails("[1, 2", "expected ']' at byte 5");
  fails("{\"a\": 1, \"a\": 2}", "duplicate key \"a\" at byte 9");
  fails("[01]", "leading zero");
  fails("[1.]", "without digits after '.'");
  fails("[1e400]", "out of range");
  fails("\"abc", "without its closing quote");
  fails("\"a\nb\"", "control character");
  fails("\"\\ud800\"", "high surrogate without its low half");
  fails("\"\\udc00\"", "lone low surrogate");
  fails("\"\\x\"", "unknown escape");
  fails("\"\xC3\x28\"", "invalid UTF-8 at byte 1");
  fails("[1] 2", "text after the end of the document at byte 4");
  fails("nul", "expected a value");
  fails(std::string(65, '[') + std::string(65, ']'), "an array nested 65 deep");
  REQUIRE_NOTHROW(json::parse(std::string(64, '[') + std::string(64, ']'), "ok"));
}

TEST_CASE("json: limits are checked while reading, and a BOM is named", "[json][errors]") {
  const json::Limits small{.depth = 2, .values = 5, .string_bytes = 8};
  REQUIRE(json::parse(R"({"a": [1, 2], "b": 3})", "t", small).find("b")->number == 3);
  REQUIRE_THROWS_WITH(json::parse("[1, 2, 3, 4, 5]", "t", small),
                      Catch::Contains("more than 5 values (the most this kind of file needs) at byte 12"));
  REQUIRE_THROWS_WITH(json::parse(R"({"a": [[1]]})", "t", small), Catch::Contains("an array nested 3 deep"));
  REQUIRE_THROWS_WITH(json::parse(R"(["123456789"])", "t", small), Catch::Contains("a string longer than 8 bytes"));
  REQUIRE_THROWS_WITH(json::parse(R"({"123456789": 1})", "t", small), Catch::Contains("a string longer than 8 bytes"));
  REQUIRE_THROWS_WITH(json::parse("\xEF\xBB\xBF{}", "'c.json'"),
                      Catch::Contains("'c.json' is not valid JSON: a UTF-8 byte order mark (EF BB BF)"));
  const json::Limits why{.values = 2, .why_values = "two at most"};
  REQUIRE_THROWS_WITH(json::parse("[1, 2]", "t", why), Catch::Contains("more than 2 values (two at most)"));
}

TEST_CASE("json: a MemberReader holds one member at a time, with the same checks", "[json]") {
  const json::Limits limits{.depth = 2, .values = 3};
  json::MemberReader reader(R"( {"a": {"x": 1}, "b": [1, 2], "c": 3} )", "t", limits);
  std::string key;
  json::Value value;
  std::vector<std::string> keys;
  while (reader.next(key, value)) keys.push_back(key);
  REQUIRE(keys == std::vector<std::string>{"a", "b", "c"});
  REQUIRE(value.number == 3);
  REQUIRE_FALSE(reader.next(key, value));  // stays at the end
  auto all = [&](const std::string& text) {
    json::MemberReader r(text, "t", limits);
    while (r.next(key, value)) {
    }
  };
  all("{}");
  REQUIRE_THROWS_WITH(all(R"({"a": 1, "a": 2})"), Catch::Contains("duplicate key \"a\""));
  REQUIRE_THROWS_WITH(all(R"({"a": 1, "b": 2, "c": 3, "d": 4})"), Catch::Contains("more than 3 members"));
  REQUIRE_THROWS_WITH(all(R"({"a": [1, 2, 3, 4]})"), Catch::Contains("more than 3 values"));  // one member's
  REQUIRE_THROWS_WITH(all(R"({"a": 1} x)"), Catch::Contains("text after the end of the document"));
  REQUIRE_THROWS_WITH(all("[1]"), Catch::Contains("expected an object"));
  REQUIRE_THROWS_WITH(all("\xEF\xBB\xBF{}"), Catch::Contains("byte order mark"));
  REQUIRE_THROWS_WITH(all(R"({"a": 1)"), Catch::Contains("expected ','"));
}

TEST_CASE("json: numbers are written in the form asked, non-finite ones as null, and read back", "[json]") {
  using Style = json::NumberForm::Style;
  REQUIRE(json::number(0.1) == "0.1");  // the shortest text that reads back exactly
  REQUIRE(json::number(0.1f) == "0.10000000149011612");
  REQUIRE(json::number(0.125, {Style::fixed, 6}) == "0.125000");
  REQUIRE(json::number(0.000125, {Style::scientific, 6}) == "1.250000e-04");
  REQUIRE(json::number(0.1f, {Style::general, 9}) == "0.100000001");
  for (const double v : {std::nan(""), 1.0 / 0.0, -1.0 / 0.0})
    for (const Style style : {Style::shortest, Style::fixed, Style::scientific, Style::general})
      REQUIRE(json::number(v, {style, 4}) == "null");
  for (const double v : {0.1, -3e-300, 1e300, 123456.789})
    REQUIRE(json::parse(json::number(v), "a number").number == v);
  REQUIRE(json::quote("a\"b\\\n\x01") == "\"a\\\"b\\\\\\n\\u0001\"");
}
