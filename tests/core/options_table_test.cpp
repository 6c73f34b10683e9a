#include "gpuforecast/core/options_table.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace gpuforecast;

namespace {

enum class Shape { round, square };

struct Part {
  double rate = 0.25;
  bool on = true;
};

struct Whole {
  std::size_t count = 3;
  Shape shape = Shape::round;
  std::string label = "x";
  Part part;
};

const OptionsTable<Part>& part_table() {
  static const auto t = [] {
    OptionsTable<Part> p("the part");
    p.add("rate", &Part::rate, "a probability", OptionRange::between(0, 1)).add("on", &Part::on, "a switch");
    return p;
  }();
  return t;
}

const OptionsTable<Whole>& whole_table() {
  static const auto t = [] {
    OptionsTable<Whole> w("strategy \"test\"");
    w.add("count", &Whole::count, "how many", OptionRange::at_least(1))
        .add_choice("shape", &Whole::shape, std::vector<std::pair<std::string, Shape>>{{"round", Shape::round}, {"square", Shape::square}},
                    "which shape")
        .add("label", &Whole::label, "a name")
        .include(&Whole::part, part_table());
    return w;
  }();
  return t;
}

std::string error_of(const std::map<std::string, std::string>& values) {
  try {
    (void)whole_table().parse(values);
  } catch (const invalid_argument_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("an options table sets fields by name, the parts' fields by their flat names", "[options]") {
  const Whole w = whole_table().parse({{"count", "7"}, {"shape", "square"}, {"label", "y"}, {"rate", "0.5"}, {"on", "off"}});
  CHECK(w.count == 7);
  CHECK(w.shape == Shape::square);
  CHECK(w.label == "y");
  CHECK(w.part.rate == 0.5);
  CHECK_FALSE(w.part.on);
  // Values not given keep the starting struct's (a preset's).
  Whole start;
  start.count = 9;
  CHECK(whole_table().parse({{"rate", "1"}}, start).count == 9);
}

TEST_CASE("an options table refuses bad values, naming the owner, option and value", "[options]") {
  CHECK(error_of({{"count", "-5"}}) == "strategy \"test\": option count=-5: must not be negative");
  CHECK(error_of({{"count", "0"}}) == "strategy \"test\": option count=0: must be in >= 1");
  CHECK(error_of({{"count", "2.5"}}) == "strategy \"test\": option count=2.5: expected a whole number");
  CHECK(error_of({{"count", "99999999999999999999999"}}) == "strategy \"test\": option count=99999999999999999999999: is out of range");
  CHECK(error_of({{"rate", "nan"}}) == "strategy \"test\": option rate=nan: must be a finite number");
  CHECK(error_of({{"rate", "inf"}}) == "strategy \"test\": option rate=inf: must be a finite number");
  CHECK(error_of({{"rate", "1.5"}}) == "strategy \"test\": option rate=1.5: must be in [0, 1]");
  CHECK(error_of({{"rate", ""}}) == "strategy \"test\": option rate=: expected a number");
  CHECK(error_of({{"on", "maybe"}}) == "strategy \"test\": option on=maybe: expected true/false, on/off or 1/0");
  CHECK(error_of({{"shape", "oval"}}) == "strategy \"test\": option shape=oval: is not one of round, square");
  CHECK(error_of({{"colour", "red"}}) == "strategy \"test\" has no option \"colour\" (options: count, shape, label, rate, on)");
}

TEST_CASE("an options table writes a struct as NAME=VALUE text that reads back to the same struct", "[options]") {
  Whole w;
  w.count = 12;
  w.shape = Shape::square;
  w.label = "a b";
  w.part.rate = 0.125;
  w.part.on = false;
  std::map<std::string, std::string> text;
  for (const auto& [k, v] : whole_table().write(w)) text[k] = v;
  CHECK(text.at("rate") == "0.125");
  CHECK(text.at("shape") == "square");
  const Whole back = whole_table().parse(text);
  CHECK(back.count == w.count);
  CHECK(back.shape == w.shape);
  CHECK(back.label == w.label);
  CHECK(back.part.rate == w.part.rate);
  CHECK(back.part.on == w.part.on);
}

TEST_CASE("an options table's Markdown lists each option with its default, range and part", "[options]") {
  const std::string md = whole_table().markdown();
  CHECK(md.find("| part | option | default | values | what it does |") == 0);
  CHECK(md.find("| strategy \"test\" | `count` | 3 | integer >= 1 | how many |") != std::string::npos);
  CHECK(md.find("| the part | `rate` | 0.25 | number [0, 1] | a probability |") != std::string::npos);
  CHECK(md.find("| strategy \"test\" | `shape` | round | one of round, square | which shape |") != std::string::npos);
  CHECK(part_table().markdown().find("| option | default | values | what it does |") == 0);
}
