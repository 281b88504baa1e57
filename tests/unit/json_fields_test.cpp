// One definition per JSON document (ipc/json_fields.h): each kind of field
// survives its JSON, what is missing is refused or defaulted as its kind
// says, and a member left out of its definition is caught at compile time.
#include "ipc/json_fields.h"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edgeshed::ipc::fields {
// Named, not anonymous: AnyMember converts to the members' types, which
// clang wants to have linkage.
namespace doc {

constexpr std::array<std::string_view, 2> kSides = {"left", "right"};

struct Item {
  std::string name;  // its key in the parent object
  uint32_t count = 0;
  bool operator==(const Item&) const = default;
};

struct Extra {
  std::optional<double> spread;
  bool operator==(const Extra&) const = default;
};

struct Doc {
  int64_t id = 0;
  std::optional<double> ratio;  // null when empty
  double since = -1;            // absent in older documents
  std::string note;             // absent when empty
  std::vector<std::string> tags;
  std::vector<Item> items;  // {"<name>": {...}}
  std::array<uint32_t, 2> sides{};
  std::array<uint32_t, 2> wrapped{};
  std::optional<Extra> extra;  // its fields beside id's
  bool operator==(const Doc&) const = default;
};

// A definition that leaves one of Partial's members out.
struct Partial {
  int a = 0;
  int b = 0;
};

}  // namespace doc

using doc::Doc;
using doc::Extra;
using doc::Item;
using doc::Partial;

template <>
struct Definition<Item> {
  static constexpr auto kFields = std::tuple{key_field(&Item::name), field("count", &Item::count)};
};

template <>
struct Definition<Extra> {
  static constexpr auto kFields = std::tuple{field("spread", &Extra::spread)};
};

template <>
struct Definition<Doc> {
  static constexpr auto kFields = std::tuple{
      field("id", &Doc::id),
      field("ratio", &Doc::ratio),
      defaulted("since", &Doc::since),
      omit_empty("note", &Doc::note),
      field("tags", &Doc::tags),
      field("items", &Doc::items),
      field("sides", &Doc::sides, ByName<doc::kSides>{}),
      field("wrapped", &Doc::wrapped, ByName<doc::kSides, Wrapped<Value<uint32_t>>>{{"n"}}),
      constant("unit", "ms"),
      inline_field(&Doc::extra),
  };
};

template <>
struct Definition<Partial> {
  static constexpr auto kFields = std::tuple{field("a", &Partial::a)};
};

namespace {

using Json = nlohmann::ordered_json;

Doc every_field() {
  Doc d;
  d.id = -7;
  d.ratio = 0.25;
  d.since = 12.5;
  d.note = "a note";
  d.tags = {"x", "y"};
  d.items = {{"first", 1}, {"second", 2}};
  d.sides = {3, 4};
  d.wrapped = {5, 6};
  d.extra = Extra{1.5};
  return d;
}

TEST(JsonFields, EveryFieldSurvivesItsJson) {
  for (const auto& doc : {every_field(), Doc{}}) {
    const Json j = write(doc);
    Doc back;
    auto s = read(Json::parse(j.dump()), "", back);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(back, doc) << j.dump();
  }
}

TEST(JsonFields, TheDefinitionIsTheLayout) {
  EXPECT_EQ(write(every_field()).dump(),
            R"({"id":-7,"ratio":0.25,"since":12.5,"note":"a note","tags":["x","y"],)"
            R"("items":{"first":{"count":1},"second":{"count":2}},"sides":{"left":3,"right":4},)"
            R"("wrapped":{"left":{"n":5},"right":{"n":6}},"unit":"ms","spread":1.5})");
  EXPECT_EQ(write(Doc{}).dump(),
            R"({"id":0,"ratio":null,"since":-1.0,"tags":[],"items":{},)"
            R"("sides":{"left":0,"right":0},"wrapped":{"left":{"n":0},"right":{"n":0}},)"
            R"("unit":"ms"})");
}

TEST(JsonFields, MissingIsRefusedOrDefaultedAsTheFieldSays) {
  Json j = write(every_field());
  j.erase("since");
  j.erase("note");
  Doc older;
  ASSERT_TRUE(read(j, "", older));
  EXPECT_EQ(older.since, -1) << "a defaulted field keeps the member's default";
  EXPECT_EQ(older.note, "");

  j.erase("ratio");
  Doc doc;
  auto s = read(j, "", doc);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "\"ratio\" is missing");

  Json bad = write(every_field());
  bad["items"]["second"]["count"] = -1;
  s = read(bad, "doc", doc);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "\"doc.items.second.count\" is out of range");

  bad = write(every_field());
  bad["wrapped"]["right"].erase("n");
  s = read(bad, "", doc);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "\"wrapped.right.n\" is missing");
}

// write() and read() static_assert kComplete: a member added to a struct
// and not to its definition does not compile.
TEST(JsonFields, AMemberLeftOutOfItsDefinitionIsCaught) {
  static_assert(kComplete<Doc> && kComplete<Item>);
  static_assert(member_count<Partial>() == 2 && field_count<Partial>() == 1);
  static_assert(!kComplete<Partial>);
}

}  // namespace
}  // namespace edgeshed::ipc::fields
