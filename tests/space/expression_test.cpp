// Expected values below were computed with CPython 3 (eval with a=7, b=2, x='abc').
#include "gpuforecast/space/expression.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "gpuforecast/core/error.hpp"
#include "support/data.hpp"

using gpuforecast::Expression;
using gpuforecast::expression_error;
using gpuforecast::ListBinding;
using gpuforecast::Value;

namespace {

const std::vector<std::string> kNames = {"a", "b", "x"};
const std::vector<Value> kValues = {Value(7), Value(2), Value("abc")};

Value eval(const std::string& src) { return Expression::compile(src, kNames).evaluate(kValues); }

struct Case {
  const char* source;
  Value expected;
};

void check_int(const std::string& src, std::int64_t expected) {
  INFO(src);
  const Value v = eval(src);
  CHECK(v.is_int());
  CHECK(v.as_int() == expected);
}

void check_float(const std::string& src, double expected) {
  INFO(src);
  const Value v = eval(src);
  CHECK(v.is_float());
  CHECK(v.as_double() == expected);  // exact: the same IEEE operations as CPython
}

// The column of the expression_error thrown while compiling (or evaluating) `src`.
std::size_t error_column(const std::string& src, bool evaluate = false) {
  try {
    auto e = Expression::compile(src, kNames);
    if (evaluate) (void)e.evaluate(kValues);
  } catch (const expression_error& err) {
    CHECK(err.get_expression() == src);
    return err.get_column();
  }
  FAIL("no expression_error for " << src);
  return 0;
}

}  // namespace

TEST_CASE("integer arithmetic follows Python", "[expression]") {
  check_int("7//2", 3);
  check_int("-7//2", -4);
  check_int("7//-2", -4);
  check_int("-7%3", 2);
  check_int("7%-3", -2);
  check_int("-7%-3", -1);
  check_int("2**10", 1024);
  check_int("-2**2", -4);
  check_int("(-2)**2", 4);
  check_int("2**3**2", 512);
  check_int("2+3*4", 14);
  check_int("(2+3)*4", 20);
  check_int("10-4-3", 3);
  check_int("2*3%4", 2);
  check_int("a*b", 14);
  check_int("a//b", 3);
  check_int("a%b", 1);
  check_int("-a//b", -4);
  check_int("a**2", 49);
  check_int("-a", -7);
  check_int("+a", 7);
  check_int("- - a", 7);
  check_int("0x1F", 31);
  check_int("9223372036854775807", INT64_MAX);
  check_int("10**18", 1000000000000000000);
  check_int("-9223372036854775807-1", INT64_MIN);
  check_int("True+True", 2);
  check_int("(((1)))", 1);
}

TEST_CASE("float arithmetic follows Python", "[expression]") {
  check_float("2**-1", 0.5);
  check_float("7/2", 3.5);
  check_float("6/3", 2.0);
  check_float("7.5//2", 3.0);
  check_float("-7.5//2", -4.0);
  check_float("-7.5%2", 0.5);
  check_float("7.5%-2", -0.5);
  check_float("1e3", 1000.0);
  check_float("1.5e-3*2", 0.003);
  check_float("0.1+0.2", 0.30000000000000004);
  check_float("3*0.1", 0.30000000000000004);
  check_float("2**0.5", 1.4142135623730951);
  check_float("5//0.5", 10.0);
  check_float("5.0%3", 2.0);
  check_float("a/b", 3.5);
}

TEST_CASE("comparisons chains and boolean operators", "[expression]") {
  check_int("1<2<3", 1);
  check_int("3>2>2", 0);
  check_int("1<3>2", 1);
  check_int("1==1.0", 1);
  check_int("1 != 2 != 1", 1);
  check_int("1 == 1 == 1", 1);
  check_int("a<b", 0);
  check_int("a>b", 1);
  check_int("not 0", 1);
  check_int("not 5", 0);
  check_int("not not 3", 1);
  // and/or return an operand, as in Python, and short-circuit: 1/0 is never evaluated.
  check_int("not 0 and 5", 5);
  check_int("0 or 3", 3);
  check_int("0 and 1/0", 0);
  check_int("1 or 1/0", 1);
  check_int("1 < 0 < 1/0", 0);
  check_int("1 and 2 and 3", 3);
  check_int("0 or 0.0 or 7", 7);
  // `and` binds tighter than `or`.
  check_int("a > 2 or a < -2 and b", 1);
  check_int("(a > 2 or a < -2) and b", 2);
  check_int("x=='abc'", 1);
  check_int("x!='abc'", 0);
  check_int("x==1", 0);
  check_int("not x", 0);
}

TEST_CASE("functions", "[expression]") {
  check_int("min(3,1,2)", 1);
  check_int("max(3,1,2)", 3);
  check_int("min(2,2.0)", 2);  // the first of equal values, keeping its type
  check_float("max(1,2.5)", 2.5);
  check_int("abs(-3)", 3);
  check_float("abs(-2.5)", 2.5);
  check_int("int(3.9)", 3);
  check_int("int(-3.9)", -3);
  check_float("float(3)", 3.0);
  check_int("int('12')", 12);
  check_int("len(x)", 3);
}

TEST_CASE("bound lists: indexing and min/max/len over a list", "[expression]") {
  const std::vector<std::string> vars = {"filter_width"};
  const std::vector<ListBinding> lists = {{"ProblemSize", {Value(4096), Value(2048)}},
                                          {"filter_height", {Value(3), Value(15), Value(7)}}};
  auto e = Expression::compile("ProblemSize[0]*ProblemSize[1] + ProblemSize[-1]", vars, lists);
  CHECK(e.evaluate(std::vector<Value>{Value(1)}).as_int() == 4096 * 2048 + 2048);
  e = Expression::compile("(ProblemSize[0]+max(filter_height)-1) * len(ProblemSize) + filter_width", vars, lists);
  CHECK(e.evaluate(std::vector<Value>{Value(1)}).as_int() == (4096 + 15 - 1) * 2 + 1);
  CHECK(Expression::compile("min(filter_height)", vars, lists).evaluate_number(std::vector<double>{0}) == 3.0);
  e = Expression::compile("ProblemSize[2]", vars, lists);
  CHECK_THROWS_AS(e.evaluate(std::vector<Value>{Value(1)}), expression_error);
  CHECK(e.used_variables().empty());
}

TEST_CASE("evaluate_number binds integral doubles as Python ints", "[expression]") {
  const std::vector<std::string> vars = {"p", "q"};
  auto e = Expression::compile("p // q + p % q", vars);
  CHECK(e.evaluate_number(std::vector<double>{-7, 2}) == -4 + 1);
  CHECK(e.evaluate_number(std::vector<double>{7.5, 2}) == 3.0 + 1.5);
  CHECK(e.test(std::vector<double>{4, 2}));
  CHECK_FALSE(Expression::compile("p > q", vars).test(std::vector<double>{1, 2}));
  CHECK(e.used_variables() == std::vector<std::size_t>{0, 1});
  CHECK(Expression::compile("q * 2", vars).used_variables() == std::vector<std::size_t>{1});
  CHECK(e.source() == "p // q + p % q");
}

TEST_CASE("syntax errors name the 1-based column", "[expression][errors]") {
  CHECK(error_column("a +") == 4);             // unexpected end
  CHECK(error_column("(a + b") == 1);          // '(' never closed: points at the '('
  CHECK(error_column("a + b)") == 6);          // ')' without '('
  CHECK(error_column("a + (b * 2") == 5);
  CHECK(error_column("foo + 1") == 1);         // unknown name
  CHECK(error_column("a + bar") == 5);
  CHECK(error_column("a $ b") == 3);           // unexpected character
  CHECK(error_column("a b") == 3);             // unexpected token
  CHECK(error_column("a * * b") == 5);
  CHECK(error_column("") == 1);                // empty
  CHECK(error_column("max()") == 1);
  CHECK(error_column("sqrt(a)") == 1);         // unknown function
  CHECK(error_column("'abc") == 1);            // unterminated string
  CHECK(error_column("12ab") == 3);
  CHECK(error_column("a == not b") == 6);
  CHECK(error_column("min(a, b") == 4);
  CHECK(error_column("x[0") == 2);
}

TEST_CASE("evaluation errors name the operator's column", "[expression][errors]") {
  CHECK(error_column("a / (b - 2)", true) == 3);   // division by zero
  CHECK(error_column("a // 0", true) == 3);
  CHECK(error_column("1 + a % 0", true) == 7);
  CHECK(error_column("0.0 ** -1", true) == 5);
  CHECK(error_column("x < 1", true) == 3);          // str < int
  CHECK(error_column("x + 1", true) == 3);
  CHECK(error_column("9223372036854775807 + 1", true) == 21);  // int64 overflow is an error
  CHECK(error_column("2 ** 64", true) == 3);
  CHECK(error_column("a[0]", true) == 2);           // not subscriptable
  CHECK(error_column("int('1.5')", true) == 1);
}

TEST_CASE("constant sub-expressions that raise still raise at evaluation", "[expression][errors]") {
  // Constants are folded at compile time; a constant that raises must not make compile() fail.
  const auto e = Expression::compile("a > 0 or 1/0", kNames);
  CHECK(e.evaluate(kValues).as_int() == 1);
  CHECK(error_column("a < 0 or 1/0", true) == 11);
  CHECK(error_column("(2 + 3) * ProblemSize[0]") == 11);
  const std::vector<ListBinding> lists = {{"P", {Value(4096), Value(2048)}}};
  CHECK(Expression::compile("P[0]*P[1] + 12*1024", kNames, lists).evaluate(kValues).as_int() == 4096 * 2048 + 12288);
  // A jump target between constants: `(x or 2) + 3` must not fold 2 + 3.
  CHECK(Expression::compile("(a or 2) + 3", kNames).evaluate(kValues).as_int() == 10);
  CHECK(Expression::compile("(0 or 2) + 3", kNames).evaluate(kValues).as_int() == 5);
  CHECK(Expression::compile("(b > 5 and 2) + 3", kNames).evaluate(kValues).as_int() == 3);
}

TEST_CASE("the error message shows the expression and a caret", "[expression][errors]") {
  try {
    (void)Expression::compile("a + (b", kNames);
    FAIL("no error");
  } catch (const expression_error& e) {
    const std::string what = e.what();
    CHECK(what.find("column 5") != std::string::npos);
    CHECK(what.find("a + (b") != std::string::npos);
    CHECK(what.find("    ^") != std::string::npos);
  }
}

TEST_CASE("deep nesting is an error and not a stack overflow", "[expression][errors]") {
  const std::string deep = std::string(100000, '(') + "1" + std::string(100000, ')');
  CHECK_THROWS_AS(Expression::compile(deep, kNames), expression_error);
  CHECK_THROWS_AS(Expression::compile(std::string(100000, '-') + "1", kNames), expression_error);
  std::string powers;
  for (int i = 0; i < 100000; ++i) powers += "2**";
  CHECK_THROWS_AS(Expression::compile(powers + "1", kNames), expression_error);
  std::string nots;
  for (int i = 0; i < 100000; ++i) nots += "not ";
  CHECK_THROWS_AS(Expression::compile(nots + "1", kNames), expression_error);
  // Long flat expressions are fine: only nesting is limited.
  std::string sum = "1";
  for (int i = 0; i < 10000; ++i) sum += "+1";
  CHECK(Expression::compile(sum, kNames).evaluate(kValues).as_int() == 10001);
}

TEST_CASE("the real T1 conditions compile and evaluate", "[expression][data]") {
  // Checked against CPython: each condition evaluated over the kernel's full cartesian space.
  struct Expected {
    const char* kernel;
    std::size_t conditions;
  };
  for (const Expected ex : {Expected{"convolution", 3}, Expected{"convolution_milo", 4}, Expected{"dedispersion_milo", 3}}) {
    const auto path = gpuforecast::test::t1_file(ex.kernel);
    std::ifstream in(path);
    const auto doc = nlohmann::json::parse(in);
    const auto& space = doc.at("ConfigurationSpace");
    std::vector<std::string> names;
    for (const auto& p : space.at("TuningParameters")) names.push_back(p.at("Name").get<std::string>());
    const auto& conds = space.at("Conditions");
    REQUIRE(conds.size() == ex.conditions);
    for (const auto& c : conds) {
      const auto src = c.at("Expression").get<std::string>();
      INFO(ex.kernel << ": " << src);
      const auto e = Expression::compile(src, names);
      // The T1 file lists the parameters each condition reads. Every listed one is used; the
      // shared-memory condition of convolution_milo also reads filter_width and filter_height,
      // which its "Parameters" list omits (a fact of the data: constant parameters).
      std::vector<std::string> used;
      for (auto i : e.used_variables()) used.push_back(names[i]);
      std::vector<std::string> declared = c.at("Parameters").get<std::vector<std::string>>();
      std::sort(used.begin(), used.end());
      std::sort(declared.begin(), declared.end());
      std::vector<std::string> extra;
      std::set_difference(used.begin(), used.end(), declared.begin(), declared.end(), std::back_inserter(extra));
      CHECK(std::includes(used.begin(), used.end(), declared.begin(), declared.end()));
      if (src.find("use_shmem == 0") == 0) CHECK(extra == std::vector<std::string>{"filter_height", "filter_width"});
      else CHECK(extra.empty());
    }
  }
  // Hand-evaluated points of the convolution_milo conditions.
  const std::vector<std::string> n = {"use_padding", "block_size_x", "block_size_y", "tile_size_x", "tile_size_y",
                                      "use_shmem", "filter_width", "filter_height"};
  const auto shmem = Expression::compile(
      "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*((block_size_y*tile_size_y+(filter_height-1)))) "
      "< 12*1024",
      n);
  // (64*2+14)*(8*4+14) = 142*46 = 6532 < 12288
  CHECK(shmem.test(std::vector<double>{0, 64, 8, 2, 4, 1, 15, 15}));
  // (256*4+14)*(16*1+14) = 1038*30 = 31140 >= 12288, shared memory on
  CHECK_FALSE(shmem.test(std::vector<double>{0, 256, 16, 4, 1, 1, 15, 15}));
  CHECK(shmem.test(std::vector<double>{0, 256, 16, 4, 1, 0, 15, 15}));
  const auto pad = Expression::compile("use_padding==0 or block_size_x % 32 != 0", n);
  CHECK_FALSE(pad.test(std::vector<double>{1, 64, 1, 1, 1, 1, 15, 15}));
  CHECK(pad.test(std::vector<double>{1, 48, 1, 1, 1, 1, 15, 15}));
  const auto chain = Expression::compile("32 <= block_size_x * block_size_y <= 1024", n);
  CHECK(chain.test(std::vector<double>{0, 16, 2, 0, 0, 0, 0, 0}));
  CHECK_FALSE(chain.test(std::vector<double>{0, 16, 1, 0, 0, 0, 0, 0}));
  CHECK_FALSE(chain.test(std::vector<double>{0, 256, 8, 0, 0, 0, 0, 0}));
}
