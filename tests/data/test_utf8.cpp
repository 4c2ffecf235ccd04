#include <catch2/catch.hpp>

#include "tinygpt/data/pretokenize.h"
#include "tinygpt/data/detail/unicode.h"
#include "tinygpt/data/utf8.h"

using namespace tinygpt::data;

TEST_CASE("utf8: decode, encode and invalid sequences", "[utf8]") {
  const std::string text = "a\xC3\xA9\xED\x95\x9C\xF0\x9F\x98\x80";  // a é 한 😀
  size_t i = 0;
  REQUIRE(next_code_point(text, i) == 'a');
  REQUIRE(next_code_point(text, i) == 0xE9);
  REQUIRE(next_code_point(text, i) == 0xD55C);
  REQUIRE(next_code_point(text, i) == 0x1F600);
  REQUIRE(i == text.size());
  std::string back;
  for (int32_t cp : {0x61, 0xE9, 0xD55C, 0x1F600}) append_utf8(back, cp);
  REQUIRE(back == text);
  REQUIRE(find_invalid_utf8(text) == std::string::npos);
  REQUIRE(find_invalid_utf8("ab\xFFz") == 2);        // bad lead byte
  REQUIRE(find_invalid_utf8("ab\xC3") == 2);         // cut short
  REQUIRE(find_invalid_utf8("\xC0\xAF") == 0);       // overlong
  REQUIRE(find_invalid_utf8("x\xED\xA0\x80") == 1);  // surrogate
  REQUIRE(find_invalid_utf8("\x08\x1B ok") == std::string::npos);  // control characters are text
}

TEST_CASE("utf8: sanitize replaces each broken sequence with U+FFFD", "[utf8]") {
  REQUIRE(sanitize_utf8("ok") == "ok");
  REQUIRE(sanitize_utf8("\xED\x95") == "\xEF\xBF\xBD");            // the first two bytes of 한
  REQUIRE(sanitize_utf8("a\x9C" "b") == "a\xEF\xBF\xBD" "b");      // a lone continuation byte
  REQUIRE(sanitize_utf8("\xF0\x9F\x98") == "\xEF\xBF\xBD");        // 3 of 4 bytes of 😀
  REQUIRE(find_invalid_utf8(sanitize_utf8("\xFF\xFE\xC3(")) == std::string::npos);
}

TEST_CASE("unicode: letter, number and space classes", "[utf8]") {
  REQUIRE(is_letter('a'));
  REQUIRE(is_letter(0xD55C));   // 한 (Hangul syllable)
  REQUIRE(is_letter(0x00E9));   // é
  REQUIRE_FALSE(is_letter('1'));
  REQUIRE(is_number('7'));
  REQUIRE(is_number(0x0663));   // Arabic-Indic digit three
  REQUIRE(is_number(0x00BD));   // ½ (No)
  REQUIRE(is_space(0x3000));    // ideographic space
  REQUIRE(is_space('\n'));
  REQUIRE_FALSE(is_space(0x1F600));
  REQUIRE_FALSE(is_letter(0x1F600));
}

TEST_CASE("pretokenize: GPT-2's pattern", "[bpe]") {
  auto chunks = [](std::string_view text) {
    std::vector<std::string> out;
    for (auto c : split_chunks(text, Split::gpt2)) out.emplace_back(c);
    return out;
  };
  using V = std::vector<std::string>;
  REQUIRE(chunks("Hello world's 123 test!!  \n") == V{"Hello", " world", "'s", " 123", " test", "!!", "  \n"});
  REQUIRE(chunks("a  b") == V{"a", " ", " b"});
  REQUIRE(chunks("I'm can't we'll") == V{"I", "'m", " can", "'t", " we", "'ll"});
  REQUIRE(chunks("abc123def") == V{"abc", "123", "def"});
  REQUIRE(chunks("x\n\ny") == V{"x", "\n", "\n", "y"});
  REQUIRE(chunks("x \n  y") == V{"x", " \n ", " y"});
  REQUIRE(chunks("나는 오늘 학교에 갔다") == V{"나는", " 오늘", " 학교에", " 갔다"});
  REQUIRE(chunks("hi 😀😀!") == V{"hi", " 😀😀!"});
  REQUIRE(chunks("").empty());
  REQUIRE(split_chunks("a b", Split::none) == std::vector<std::string_view>{"a b"});
  REQUIRE_THROWS_WITH(split_from_name("words"), Catch::Contains("unknown split 'words'"));
}
